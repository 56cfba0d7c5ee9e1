import { MigrationInterface, QueryRunner } from 'typeorm';

function schemaOf(queryRunner: QueryRunner): string {
  return (queryRunner.connection.options as { schema?: string }).schema ?? 'public';
}

/**
 * Developers who sign in with their company's identity provider (issue #51, docs/sso.md): the provider identities
 * linked to accounts, and accounts without a password (made by a provider sign-in).
 */
export class AccountIdentities1796900000000 implements MigrationInterface {
  name = 'AccountIdentities1796900000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const s = schemaOf(queryRunner);
    await queryRunner.query(`ALTER TABLE "${s}"."accounts" ALTER COLUMN "password_hash" DROP NOT NULL`);
    await queryRunner.query(
      `CREATE TABLE "${s}"."account_identities" (` +
        `"id" uuid NOT NULL, ` +
        `"account_id" uuid NOT NULL, ` +
        `"issuer" character varying(2048) NOT NULL, ` +
        `"subject" character varying(255) NOT NULL, ` +
        `"email" character varying(254) NOT NULL, ` +
        `"created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), ` +
        `CONSTRAINT "UQ_account_identities_issuer_subject" UNIQUE ("issuer", "subject"), ` +
        `CONSTRAINT "PK_account_identities" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE INDEX "IDX_account_identities_account_id" ON "${s}"."account_identities" ("account_id")`,
    );
    await queryRunner.query(
      `ALTER TABLE "${s}"."account_identities" ADD CONSTRAINT "FK_account_identities_account" FOREIGN KEY ("account_id") ` +
        `REFERENCES "${s}"."accounts"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    const s = schemaOf(queryRunner);
    await queryRunner.query(`DROP TABLE "${s}"."account_identities"`);
    await queryRunner.query(`UPDATE "${s}"."accounts" SET "password_hash" = '' WHERE "password_hash" IS NULL`);
    await queryRunner.query(`ALTER TABLE "${s}"."accounts" ALTER COLUMN "password_hash" SET NOT NULL`);
  }
}
