import { MigrationInterface, QueryRunner } from 'typeorm';

function schemaOf(queryRunner: QueryRunner): string {
  return (queryRunner.connection.options as { schema?: string }).schema ?? 'public';
}

/**
 * Threshold alerts, the rest (issue #49, docs/alerts.md): a consumer's own thresholds (`alert_thresholds`, null: its
 * plan's), and the leases that give one instance of the fleet a job per interval (the reconciliation).
 */
export class AddAlertThresholdsAndLeases1796500000000 implements MigrationInterface {
  name = 'AddAlertThresholdsAndLeases1796500000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const s = schemaOf(queryRunner);
    await queryRunner.query(`ALTER TABLE "${s}"."consumers" ADD "alert_thresholds" jsonb`);
    await queryRunner.query(
      `CREATE TABLE "${s}"."leases" ("name" character varying(64) NOT NULL, "holder" character varying(64) NOT NULL, "expires_at" TIMESTAMP WITH TIME ZONE NOT NULL, CONSTRAINT "PK_leases" PRIMARY KEY ("name"))`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    const s = schemaOf(queryRunner);
    await queryRunner.query(`DROP TABLE "${s}"."leases"`);
    await queryRunner.query(`ALTER TABLE "${s}"."consumers" DROP COLUMN "alert_thresholds"`);
  }
}
