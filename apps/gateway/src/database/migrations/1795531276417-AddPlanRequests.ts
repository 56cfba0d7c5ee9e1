import { MigrationInterface, QueryRunner } from 'typeorm';

function schemaOf(queryRunner: QueryRunner): string {
  return (queryRunner.connection.options as { schema?: string }).schema ?? 'public';
}

/** Plan requests from the developer portal (issue #25): at most one pending per consumer (a partial unique index). */
export class AddPlanRequests1795531276417 implements MigrationInterface {
  name = 'AddPlanRequests1795531276417';

  async up(queryRunner: QueryRunner): Promise<void> {
    const s = schemaOf(queryRunner);
    await queryRunner.query(`CREATE TYPE "${s}"."plan_request_status" AS ENUM('pending', 'approved', 'declined')`);
    await queryRunner.query(
      `CREATE TABLE "${s}"."plan_requests" (` +
        `"id" uuid NOT NULL, ` +
        `"consumer" character varying(64) NOT NULL, ` +
        `"current_plan" character varying(32) NOT NULL, ` +
        `"requested_plan" character varying(32) NOT NULL, ` +
        `"expected_volume" character varying(200) NOT NULL, ` +
        `"message" character varying(2000) NOT NULL, ` +
        `"status" "${s}"."plan_request_status" NOT NULL DEFAULT 'pending', ` +
        `"created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), ` +
        `"decided_at" TIMESTAMP WITH TIME ZONE, ` +
        `"decided_by" character varying(64), ` +
        `"note" character varying(2000), ` +
        `CONSTRAINT "PK_plan_requests" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE UNIQUE INDEX "UQ_plan_requests_one_pending" ON "${s}"."plan_requests" ("consumer") WHERE "status" = 'pending'`,
    );
    await queryRunner.query(
      `CREATE INDEX "IDX_plan_requests_created_at" ON "${s}"."plan_requests" ("created_at", "id")`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    const s = schemaOf(queryRunner);
    await queryRunner.query(`DROP INDEX "${s}"."IDX_plan_requests_created_at"`);
    await queryRunner.query(`DROP INDEX "${s}"."UQ_plan_requests_one_pending"`);
    await queryRunner.query(`DROP TABLE "${s}"."plan_requests"`);
    await queryRunner.query(`DROP TYPE "${s}"."plan_request_status"`);
  }
}
