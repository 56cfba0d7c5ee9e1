import { MigrationInterface, QueryRunner } from 'typeorm';

function schemaOf(queryRunner: QueryRunner): string {
  return (queryRunner.connection.options as { schema?: string }).schema ?? 'public';
}

/**
 * A rotated key names its successor (`replaced_by`): a key is rotated once, so that concurrent rotations of
 * one key leave one new key, not one per request (issue #21).
 */
export class AddKeySuccessor1764547200000 implements MigrationInterface {
  name = 'AddKeySuccessor1764547200000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "${schemaOf(queryRunner)}"."api_keys" ADD "replaced_by" uuid`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "${schemaOf(queryRunner)}"."api_keys" DROP COLUMN "replaced_by"`);
  }
}
