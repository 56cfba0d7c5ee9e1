import { MigrationInterface, QueryRunner } from 'typeorm';

function schemaOf(queryRunner: QueryRunner): string {
  return (queryRunner.connection.options as { schema?: string }).schema ?? 'public';
}

/**
 * A rotated webhook secret keeps signing beside the new one for a while (docs/webhooks.md, "Rotating a secret"):
 * each delivery of the overlap carries both signatures, so a receiver switches to the new secret without losing one.
 */
export class AddWebhookSecretOverlap1797300000000 implements MigrationInterface {
  name = 'AddWebhookSecretOverlap1797300000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const s = schemaOf(queryRunner);
    await queryRunner.query(`ALTER TABLE "${s}"."webhook_endpoints" ADD "previous_secret" character varying(128)`);
    await queryRunner.query(
      `ALTER TABLE "${s}"."webhook_endpoints" ADD "previous_secret_until" TIMESTAMP WITH TIME ZONE`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    const s = schemaOf(queryRunner);
    await queryRunner.query(`ALTER TABLE "${s}"."webhook_endpoints" DROP COLUMN "previous_secret_until"`);
    await queryRunner.query(`ALTER TABLE "${s}"."webhook_endpoints" DROP COLUMN "previous_secret"`);
  }
}
