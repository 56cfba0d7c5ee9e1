import { MigrationInterface, QueryRunner } from 'typeorm';

function schemaOf(queryRunner: QueryRunner): string {
  return (queryRunner.connection.options as { schema?: string }).schema ?? 'public';
}

/**
 * Threshold events, exactly once across the fleet (issue #49, docs/alerts.md): the events with their unique key,
 * and the transactional outbox a future delivery worker reads.
 */
export class AddThresholdEvents1796200000000 implements MigrationInterface {
  name = 'AddThresholdEvents1796200000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const s = schemaOf(queryRunner);
    await queryRunner.query(
      `CREATE TABLE "${s}"."threshold_events" ("id" uuid NOT NULL, "type" character varying(40) NOT NULL, "consumer" character varying(64) NOT NULL, "policy" character varying(16) NOT NULL, "period_start" TIMESTAMP WITH TIME ZONE NOT NULL, "period_end" TIMESTAMP WITH TIME ZONE, "threshold" bigint NOT NULL, "arming" character varying(64) NOT NULL DEFAULT '', "quota" bigint, "used" bigint, "balance" bigint, "crossed_at" TIMESTAMP WITH TIME ZONE NOT NULL, "source" character varying(16) NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL, CONSTRAINT "UQ_threshold_events_once" UNIQUE ("consumer", "policy", "period_start", "threshold", "arming"), CONSTRAINT "PK_threshold_events" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE TABLE "${s}"."outbox_messages" ("id" uuid NOT NULL, "kind" character varying(64) NOT NULL, "consumer" character varying(64) NOT NULL, "payload" jsonb NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL, "available_at" TIMESTAMP WITH TIME ZONE NOT NULL, "state" character varying(16) NOT NULL DEFAULT 'pending', "attempts" integer NOT NULL DEFAULT '0', CONSTRAINT "PK_outbox_messages" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE INDEX "IDX_outbox_messages_state_available" ON "${s}"."outbox_messages" ("state", "available_at") `,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    const s = schemaOf(queryRunner);
    await queryRunner.query(`DROP INDEX "${s}"."IDX_outbox_messages_state_available"`);
    await queryRunner.query(`DROP TABLE "${s}"."outbox_messages"`);
    await queryRunner.query(`DROP TABLE "${s}"."threshold_events"`);
  }
}
