import { MigrationInterface, QueryRunner } from 'typeorm';

function schemaOf(queryRunner: QueryRunner): string {
  return (queryRunner.connection.options as { schema?: string }).schema ?? 'public';
}

/**
 * Operators signed in with their identity provider (issue #51): an admin token may be a person's short-lived
 * session credential (`person`: issuer, subject, email), and each ID token is exchanged once (`used_id_tokens`,
 * its hash until it is too old to be taken anyway).
 */
export class AddPersonSessions1796800000000 implements MigrationInterface {
  name = 'AddPersonSessions1796800000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const schema = schemaOf(queryRunner);
    await queryRunner.query(`ALTER TABLE "${schema}"."admin_tokens" ADD "person" character varying(320)`);
    await queryRunner.query(
      `CREATE TABLE "${schema}"."used_id_tokens" ("token_hash" character(64) NOT NULL, ` +
        `"expires_at" TIMESTAMP WITH TIME ZONE NOT NULL, CONSTRAINT "PK_used_id_tokens" PRIMARY KEY ("token_hash"))`,
    );
    await queryRunner.query(
      `CREATE INDEX "IDX_used_id_tokens_expires_at" ON "${schema}"."used_id_tokens" ("expires_at")`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    const schema = schemaOf(queryRunner);
    await queryRunner.query(`DROP TABLE "${schema}"."used_id_tokens"`);
    await queryRunner.query(`ALTER TABLE "${schema}"."admin_tokens" DROP COLUMN "person"`);
  }
}
