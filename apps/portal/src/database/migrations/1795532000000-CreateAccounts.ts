import { MigrationInterface, QueryRunner } from 'typeorm';

function schemaOf(queryRunner: QueryRunner): string {
  return (queryRunner.connection.options as { schema?: string }).schema ?? 'public';
}

/**
 * The portal's accounts, their single-use link tokens, and the sign-in/sign-up throttle's counters (shared by every
 * portal instance). The session table is libs/web's (ensureSessionTable), not a migration's.
 */
export class CreateAccounts1795532000000 implements MigrationInterface {
  name = 'CreateAccounts1795532000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const s = schemaOf(queryRunner);
    await queryRunner.query(
      `CREATE TABLE "${s}"."accounts" (` +
        `"id" uuid NOT NULL, ` +
        `"email" character varying(254) NOT NULL, ` +
        `"password_hash" character varying(255) NOT NULL, ` +
        `"created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), ` +
        `"verified_at" TIMESTAMP WITH TIME ZONE, ` +
        `"consumer_name" character varying(64), ` +
        `CONSTRAINT "UQ_accounts_email" UNIQUE ("email"), ` +
        `CONSTRAINT "PK_accounts" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE TABLE "${s}"."account_tokens" (` +
        `"id" uuid NOT NULL, ` +
        `"account_id" uuid NOT NULL, ` +
        `"purpose" character varying(16) NOT NULL, ` +
        `"token_hash" character(64) NOT NULL, ` +
        `"created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), ` +
        `"expires_at" TIMESTAMP WITH TIME ZONE NOT NULL, ` +
        `"used_at" TIMESTAMP WITH TIME ZONE, ` +
        `CONSTRAINT "UQ_account_tokens_token_hash" UNIQUE ("token_hash"), ` +
        `CONSTRAINT "PK_account_tokens" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(`CREATE INDEX "IDX_account_tokens_account_id" ON "${s}"."account_tokens" ("account_id")`);
    await queryRunner.query(
      `ALTER TABLE "${s}"."account_tokens" ADD CONSTRAINT "FK_account_tokens_account" FOREIGN KEY ("account_id") ` +
        `REFERENCES "${s}"."accounts"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `CREATE TABLE "${s}"."throttle" (` +
        `"key" character varying(300) NOT NULL, ` +
        `"hits" integer NOT NULL, ` +
        `"expires_at" TIMESTAMP WITH TIME ZONE NOT NULL, ` +
        `"blocked_until" TIMESTAMP WITH TIME ZONE, ` +
        `CONSTRAINT "PK_throttle" PRIMARY KEY ("key"))`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    const s = schemaOf(queryRunner);
    await queryRunner.query(`DROP TABLE "${s}"."throttle"`);
    await queryRunner.query(`ALTER TABLE "${s}"."account_tokens" DROP CONSTRAINT "FK_account_tokens_account"`);
    await queryRunner.query(`DROP INDEX "${s}"."IDX_account_tokens_account_id"`);
    await queryRunner.query(`DROP TABLE "${s}"."account_tokens"`);
    await queryRunner.query(`DROP TABLE "${s}"."accounts"`);
  }
}
