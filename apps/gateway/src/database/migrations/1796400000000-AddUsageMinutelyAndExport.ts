import { MigrationInterface, QueryRunner } from 'typeorm';

function schemaOf(queryRunner: QueryRunner): string {
  return (queryRunner.connection.options as { schema?: string }).schema ?? 'public';
}

/**
 * Usage per minute, consumer and operation with the credits spent (docs/usage-history.md), and the usage
 * export's cursor, lease and outbox (issue #49 point 4, docs/usage-export.md).
 */
export class AddUsageMinutelyAndExport1796400000000 implements MigrationInterface {
  name = 'AddUsageMinutelyAndExport1796400000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const s = schemaOf(queryRunner);
    await queryRunner.query(
      `CREATE TABLE "${s}"."usage_minutely" ("minute" TIMESTAMP WITH TIME ZONE NOT NULL, "consumer" character varying(64) NOT NULL, "operation" character varying(128) NOT NULL, "ok" bigint NOT NULL DEFAULT '0', "client_errors" bigint NOT NULL DEFAULT '0', "rate_limited" bigint NOT NULL DEFAULT '0', "server_errors" bigint NOT NULL DEFAULT '0', "ok_credits" bigint NOT NULL DEFAULT '0', "client_errors_credits" bigint NOT NULL DEFAULT '0', "rate_limited_credits" bigint NOT NULL DEFAULT '0', "server_errors_credits" bigint NOT NULL DEFAULT '0', CONSTRAINT "PK_usage_minutely" PRIMARY KEY ("minute", "consumer", "operation"))`,
    );
    await queryRunner.query(
      `CREATE TABLE "${s}"."usage_export_cursor" ("name" character varying(32) NOT NULL, "after_minute" TIMESTAMP WITH TIME ZONE, "after_consumer" character varying(64), "after_operation" character varying(128), "holder" character varying(64), "lease_until" TIMESTAMP WITH TIME ZONE, CONSTRAINT "PK_usage_export_cursor" PRIMARY KEY ("name"))`,
    );
    await queryRunner.query(
      `CREATE TABLE "${s}"."usage_export_batches" ("id" BIGSERIAL NOT NULL, "content_type" character varying(100) NOT NULL, "body" text NOT NULL, "ids" jsonb NOT NULL, "oldest_start" TIMESTAMP WITH TIME ZONE NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL, "state" character varying(16) NOT NULL DEFAULT 'pending', "attempts" integer NOT NULL DEFAULT '0', "first_attempt_at" TIMESTAMP WITH TIME ZONE, "next_attempt_at" TIMESTAMP WITH TIME ZONE NOT NULL, "acknowledged_at" TIMESTAMP WITH TIME ZONE, "last_error" character varying(500), CONSTRAINT "PK_usage_export_batches" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE INDEX "IDX_usage_export_batches_state_id" ON "${s}"."usage_export_batches" ("state", "id") `,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    const s = schemaOf(queryRunner);
    await queryRunner.query(`DROP INDEX "${s}"."IDX_usage_export_batches_state_id"`);
    await queryRunner.query(`DROP TABLE "${s}"."usage_export_batches"`);
    await queryRunner.query(`DROP TABLE "${s}"."usage_export_cursor"`);
    await queryRunner.query(`DROP TABLE "${s}"."usage_minutely"`);
  }
}
