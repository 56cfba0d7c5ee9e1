import { MigrationInterface, QueryRunner } from 'typeorm';

function schemaOf(queryRunner: QueryRunner): string {
  return (queryRunner.connection.options as { schema?: string }).schema ?? 'public';
}

/** A consumer's contact email (issue #37): lower-cased, indexed for `GET /consumers?email=`. */
export class AddConsumerEmail1795650000037 implements MigrationInterface {
  name = 'AddConsumerEmail1795650000037';

  async up(queryRunner: QueryRunner): Promise<void> {
    const s = schemaOf(queryRunner);
    await queryRunner.query(`ALTER TABLE "${s}"."consumers" ADD "email" character varying(254)`);
    await queryRunner.query(`CREATE INDEX "IDX_consumers_email" ON "${s}"."consumers" ("email")`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    const s = schemaOf(queryRunner);
    await queryRunner.query(`DROP INDEX "${s}"."IDX_consumers_email"`);
    await queryRunner.query(`ALTER TABLE "${s}"."consumers" DROP COLUMN "email"`);
  }
}
