import { MigrationInterface, QueryRunner } from 'typeorm';

function schemaOf(queryRunner: QueryRunner): string {
  return (queryRunner.connection.options as { schema?: string }).schema ?? 'public';
}

/**
 * Monthly quotas on a billing anchor (issue #38, docs/billing.md): a consumer's anchor (null: its creation time)
 * and its own monthly quota (null: its plan's, if any). Both nullable, so existing consumers keep today's limits.
 */
export class AddBillingAnchor1795794638464 implements MigrationInterface {
  name = 'AddBillingAnchor1795794638464';

  async up(queryRunner: QueryRunner): Promise<void> {
    const s = schemaOf(queryRunner);
    await queryRunner.query(`ALTER TABLE "${s}"."consumers" ADD "billing_anchor" TIMESTAMP WITH TIME ZONE`);
    await queryRunner.query(`ALTER TABLE "${s}"."consumers" ADD "limit_per_month" integer`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    const s = schemaOf(queryRunner);
    await queryRunner.query(`ALTER TABLE "${s}"."consumers" DROP COLUMN "limit_per_month"`);
    await queryRunner.query(`ALTER TABLE "${s}"."consumers" DROP COLUMN "billing_anchor"`);
  }
}
