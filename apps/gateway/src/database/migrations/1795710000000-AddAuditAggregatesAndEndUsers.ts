import { MigrationInterface, QueryRunner } from 'typeorm';

function schemaOf(queryRunner: QueryRunner): string {
  return (queryRunner.connection.options as { schema?: string }).schema ?? 'public';
}

/**
 * The audit that cannot be blinded and says who and which key (issues #36, #37): refusals beyond the per-minute
 * rows are counted on one aggregate row (unique `aggregate_key`, upserted); the key's hint; the end user behind a
 * web app's call; the admin-token capability to name one (`acts_for_users`).
 */
export class AddAuditAggregatesAndEndUsers1795710000000 implements MigrationInterface {
  name = 'AddAuditAggregatesAndEndUsers1795710000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const s = schemaOf(queryRunner);
    await queryRunner.query(`ALTER TABLE "${s}"."audit_log" ADD "count" integer NOT NULL DEFAULT 1`);
    await queryRunner.query(`ALTER TABLE "${s}"."audit_log" ADD "aggregate_key" character varying(200)`);
    await queryRunner.query(
      `ALTER TABLE "${s}"."audit_log" ADD CONSTRAINT "UQ_audit_log_aggregate_key" UNIQUE ("aggregate_key")`,
    );
    await queryRunner.query(`ALTER TABLE "${s}"."audit_log" ADD "target_key_hint" character varying(16)`);
    await queryRunner.query(`ALTER TABLE "${s}"."audit_log" ADD "on_behalf_of" character varying(320)`);
    await queryRunner.query(`ALTER TABLE "${s}"."audit_log" ADD "end_user_address" character varying(64)`);
    await queryRunner.query(`ALTER TABLE "${s}"."admin_tokens" ADD "acts_for_users" boolean NOT NULL DEFAULT false`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    const s = schemaOf(queryRunner);
    await queryRunner.query(`ALTER TABLE "${s}"."admin_tokens" DROP COLUMN "acts_for_users"`);
    await queryRunner.query(`ALTER TABLE "${s}"."audit_log" DROP COLUMN "end_user_address"`);
    await queryRunner.query(`ALTER TABLE "${s}"."audit_log" DROP COLUMN "on_behalf_of"`);
    await queryRunner.query(`ALTER TABLE "${s}"."audit_log" DROP COLUMN "target_key_hint"`);
    await queryRunner.query(`ALTER TABLE "${s}"."audit_log" DROP CONSTRAINT "UQ_audit_log_aggregate_key"`);
    await queryRunner.query(`ALTER TABLE "${s}"."audit_log" DROP COLUMN "aggregate_key"`);
    await queryRunner.query(`ALTER TABLE "${s}"."audit_log" DROP COLUMN "count"`);
  }
}
