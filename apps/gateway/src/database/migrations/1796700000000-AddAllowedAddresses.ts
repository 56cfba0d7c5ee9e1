import { MigrationInterface, QueryRunner } from 'typeorm';

function schemaOf(queryRunner: QueryRunner): string {
  return (queryRunner.connection.options as { schema?: string }).schema ?? 'public';
}

const TABLES = ['consumers', 'api_keys', 'client_bindings'];

/**
 * Where a credential may be used from (issue #50, point 5): CIDR ranges on a consumer, a key and a client binding
 * (null: anywhere). Nullable columns without a default: adding them rewrites no row.
 */
export class AddAllowedAddresses1796700000000 implements MigrationInterface {
  name = 'AddAllowedAddresses1796700000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const schema = schemaOf(queryRunner);
    for (const table of TABLES)
      await queryRunner.query(`ALTER TABLE "${schema}"."${table}" ADD "allowed_addresses" text array`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    const schema = schemaOf(queryRunner);
    for (const table of TABLES)
      await queryRunner.query(`ALTER TABLE "${schema}"."${table}" DROP COLUMN "allowed_addresses"`);
  }
}
