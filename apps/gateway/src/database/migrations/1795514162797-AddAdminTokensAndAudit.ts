import { MigrationInterface, QueryRunner } from 'typeorm';

function schemaOf(queryRunner: QueryRunner): string {
  return (queryRunner.connection.options as { schema?: string }).schema ?? 'public';
}

/** Scoped admin tokens, the audit log, and which token created a consumer (issue #24). */
export class AddAdminTokensAndAudit1795514162797 implements MigrationInterface {
  name = 'AddAdminTokensAndAudit1795514162797';

  async up(queryRunner: QueryRunner): Promise<void> {
    const s = schemaOf(queryRunner);
    await queryRunner.query(
      `CREATE TABLE "${s}"."admin_tokens" (` +
        `"id" uuid NOT NULL, ` +
        `"name" character varying(64) NOT NULL, ` +
        `"token_hash" character(64) NOT NULL, ` +
        `"hint" character varying(16) NOT NULL, ` +
        `"scopes" text array NOT NULL, ` +
        `"own_consumers_only" boolean NOT NULL DEFAULT false, ` +
        `"plans" text array, ` +
        `"created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), ` +
        `"created_by" character varying(128) NOT NULL, ` +
        `"expires_at" TIMESTAMP WITH TIME ZONE, ` +
        `"last_used_at" TIMESTAMP WITH TIME ZONE, ` +
        `"revoked_at" TIMESTAMP WITH TIME ZONE, ` +
        `CONSTRAINT "UQ_admin_tokens_token_hash" UNIQUE ("token_hash"), ` +
        `CONSTRAINT "PK_admin_tokens" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE TABLE "${s}"."audit_log" (` +
        `"id" BIGSERIAL NOT NULL, ` +
        `"at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), ` +
        `"actor_id" uuid, ` +
        `"actor_name" character varying(64) NOT NULL, ` +
        `"action" character varying(64) NOT NULL, ` +
        `"target_consumer" character varying(64), ` +
        `"target_key" uuid, ` +
        `"target_token" uuid, ` +
        `"changes" jsonb, ` +
        `"request_id" character varying(128), ` +
        `"source" character varying(64), ` +
        `CONSTRAINT "PK_audit_log" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(`CREATE INDEX "IDX_audit_log_at" ON "${s}"."audit_log" ("at")`);
    await queryRunner.query(`ALTER TABLE "${s}"."consumers" ADD "created_by_token" uuid`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    const s = schemaOf(queryRunner);
    await queryRunner.query(`ALTER TABLE "${s}"."consumers" DROP COLUMN "created_by_token"`);
    await queryRunner.query(`DROP INDEX "${s}"."IDX_audit_log_at"`);
    await queryRunner.query(`DROP TABLE "${s}"."audit_log"`);
    await queryRunner.query(`DROP TABLE "${s}"."admin_tokens"`);
  }
}
