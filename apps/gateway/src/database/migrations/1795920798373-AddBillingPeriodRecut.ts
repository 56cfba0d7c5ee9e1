import { MigrationInterface, QueryRunner } from 'typeorm';

function schemaOf(queryRunner: QueryRunner): string {
  return (queryRunner.connection.options as { schema?: string }).schema ?? 'public';
}

/**
 * Refills bound to periods, not to edits (issue #45, docs/billing.md): the billing period in progress as the last
 * anchor move re-cut it (its start kept, the new anchor's next reset as its end). Both null: no re-cut, the periods
 * are the anchor's; existing consumers keep theirs.
 */
export class AddBillingPeriodRecut1795920798373 implements MigrationInterface {
  name = 'AddBillingPeriodRecut1795920798373';

  async up(queryRunner: QueryRunner): Promise<void> {
    const s = schemaOf(queryRunner);
    await queryRunner.query(`ALTER TABLE "${s}"."consumers" ADD "recut_period_start" TIMESTAMP WITH TIME ZONE`);
    await queryRunner.query(`ALTER TABLE "${s}"."consumers" ADD "recut_period_end" TIMESTAMP WITH TIME ZONE`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    const s = schemaOf(queryRunner);
    await queryRunner.query(`ALTER TABLE "${s}"."consumers" DROP COLUMN "recut_period_end"`);
    await queryRunner.query(`ALTER TABLE "${s}"."consumers" DROP COLUMN "recut_period_start"`);
  }
}
