import { MigrationInterface, QueryRunner } from 'typeorm';

function schemaOf(queryRunner: QueryRunner): string {
  return (queryRunner.connection.options as { schema?: string }).schema ?? 'public';
}

/** The additive columns of both tables (usage/usage-counts.ts lists them; written out here, as a migration is frozen). */
const ADDITIVE =
  `"requests" bigint NOT NULL DEFAULT 0, "ok" bigint NOT NULL DEFAULT 0, "client_errors" bigint NOT NULL DEFAULT 0, ` +
  `"rate_limited" bigint NOT NULL DEFAULT 0, "server_errors" bigint NOT NULL DEFAULT 0, ` +
  `"latency_sum_ms" double precision NOT NULL DEFAULT 0, ` +
  ['5', '10', '25', '50', '100', '250', '500', '1000', '2500']
    .map((b) => `"latency_le_${b}ms" bigint NOT NULL DEFAULT 0, `)
    .join('') +
  `"latency_over_2500ms" bigint NOT NULL DEFAULT 0`;

/** Usage history (issue #23): hourly rows per consumer and key, and the daily roll-up per consumer. */
export class CreateUsageHistory1795600000000 implements MigrationInterface {
  name = 'CreateUsageHistory1795600000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const s = schemaOf(queryRunner);
    await queryRunner.query(
      `CREATE TABLE "${s}"."usage_hourly" ("hour" TIMESTAMP WITH TIME ZONE NOT NULL, "consumer" character varying(64) NOT NULL, ` +
        `"key_id" character varying(36) NOT NULL, ${ADDITIVE}, CONSTRAINT "PK_usage_hourly" PRIMARY KEY ("hour", "consumer", "key_id"))`,
    );
    await queryRunner.query(
      `CREATE INDEX "IDX_usage_hourly_consumer_hour" ON "${s}"."usage_hourly" ("consumer", "hour")`,
    );
    await queryRunner.query(
      `CREATE TABLE "${s}"."usage_daily" ("day" date NOT NULL, "consumer" character varying(64) NOT NULL, ${ADDITIVE}, ` +
        `CONSTRAINT "PK_usage_daily" PRIMARY KEY ("day", "consumer"))`,
    );
    await queryRunner.query(`CREATE INDEX "IDX_usage_daily_consumer_day" ON "${s}"."usage_daily" ("consumer", "day")`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    const s = schemaOf(queryRunner);
    await queryRunner.query(`DROP TABLE "${s}"."usage_daily"`);
    await queryRunner.query(`DROP TABLE "${s}"."usage_hourly"`);
  }
}
