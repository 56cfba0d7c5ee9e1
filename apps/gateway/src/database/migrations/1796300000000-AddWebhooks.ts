import { MigrationInterface, QueryRunner } from 'typeorm';

function schemaOf(queryRunner: QueryRunner): string {
  return (queryRunner.connection.options as { schema?: string }).schema ?? 'public';
}

/**
 * Webhooks (issue #49, docs/webhooks.md): the endpoints, one delivery per outbox message and endpoint (or contact
 * email), and every attempt of each.
 */
export class AddWebhooks1796300000000 implements MigrationInterface {
  name = 'AddWebhooks1796300000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const s = schemaOf(queryRunner);
    await queryRunner.query(
      `CREATE TABLE "${s}"."webhook_endpoints" ("id" uuid NOT NULL, "consumer" character varying(64), "url" character varying(2048) NOT NULL, "description" character varying(200) NOT NULL DEFAULT '', "event_types" jsonb, "secret" character varying(128) NOT NULL, "enabled" boolean NOT NULL DEFAULT true, "disabled_at" TIMESTAMP WITH TIME ZONE, "disabled_reason" character varying(200), "created_at" TIMESTAMP WITH TIME ZONE NOT NULL, "failing_since" TIMESTAMP WITH TIME ZONE, CONSTRAINT "PK_webhook_endpoints" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE INDEX "IDX_webhook_endpoints_consumer" ON "${s}"."webhook_endpoints" ("consumer") `,
    );
    await queryRunner.query(
      `CREATE TABLE "${s}"."webhook_deliveries" ("id" uuid NOT NULL, "message_id" uuid NOT NULL, "endpoint_id" uuid, "email" character varying(320), "consumer" character varying(64) NOT NULL, "kind" character varying(64) NOT NULL, "message_created_at" TIMESTAMP WITH TIME ZONE NOT NULL, "state" character varying(16) NOT NULL DEFAULT 'pending', "attempts" integer NOT NULL DEFAULT '0', "next_attempt_at" TIMESTAMP WITH TIME ZONE NOT NULL, "lease_until" TIMESTAMP WITH TIME ZONE, "last_status" integer, "last_error" character varying(500), "created_at" TIMESTAMP WITH TIME ZONE NOT NULL, "delivered_at" TIMESTAMP WITH TIME ZONE, CONSTRAINT "PK_webhook_deliveries" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE INDEX "IDX_webhook_deliveries_due" ON "${s}"."webhook_deliveries" ("state", "next_attempt_at") `,
    );
    await queryRunner.query(
      `CREATE INDEX "IDX_webhook_deliveries_endpoint" ON "${s}"."webhook_deliveries" ("endpoint_id", "created_at") `,
    );
    await queryRunner.query(
      `CREATE TABLE "${s}"."webhook_attempts" ("id" uuid NOT NULL, "delivery_id" uuid NOT NULL, "attempt" integer NOT NULL, "at" TIMESTAMP WITH TIME ZONE NOT NULL, "status_code" integer, "latency_ms" integer NOT NULL, "error" character varying(500), CONSTRAINT "PK_webhook_attempts" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE INDEX "IDX_webhook_attempts_delivery" ON "${s}"."webhook_attempts" ("delivery_id", "attempt") `,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    const s = schemaOf(queryRunner);
    await queryRunner.query(`DROP INDEX "${s}"."IDX_webhook_attempts_delivery"`);
    await queryRunner.query(`DROP TABLE "${s}"."webhook_attempts"`);
    await queryRunner.query(`DROP INDEX "${s}"."IDX_webhook_deliveries_endpoint"`);
    await queryRunner.query(`DROP INDEX "${s}"."IDX_webhook_deliveries_due"`);
    await queryRunner.query(`DROP TABLE "${s}"."webhook_deliveries"`);
    await queryRunner.query(`DROP INDEX "${s}"."IDX_webhook_endpoints_consumer"`);
    await queryRunner.query(`DROP TABLE "${s}"."webhook_endpoints"`);
  }
}
