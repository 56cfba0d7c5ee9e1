import { MigrationInterface, QueryRunner } from 'typeorm';

function schemaOf(queryRunner: QueryRunner): string {
  return (queryRunner.connection.options as { schema?: string }).schema ?? 'public';
}

/** The token that created each admin token (issue #36): a revocation takes the token's descendants with it. */
export class AddAdminTokenCreator1795800000000 implements MigrationInterface {
  name = 'AddAdminTokenCreator1795800000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const s = schemaOf(queryRunner);
    await queryRunner.query(`ALTER TABLE "${s}"."admin_tokens" ADD "created_by_token" uuid`);
    await queryRunner.query(
      `CREATE INDEX "IDX_admin_tokens_created_by_token" ON "${s}"."admin_tokens" ("created_by_token")`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    const s = schemaOf(queryRunner);
    await queryRunner.query(`DROP INDEX "${s}"."IDX_admin_tokens_created_by_token"`);
    await queryRunner.query(`ALTER TABLE "${s}"."admin_tokens" DROP COLUMN "created_by_token"`);
  }
}
