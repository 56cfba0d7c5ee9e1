import { MigrationInterface, QueryRunner } from 'typeorm';

function schemaOf(queryRunner: QueryRunner): string {
  return (queryRunner.connection.options as { schema?: string }).schema ?? 'public';
}

/** Who asked for each plan change (issue #48.7): the person a web app named, else the admin token's name. */
export class AddPlanRequestRequester1796100000000 implements MigrationInterface {
  name = 'AddPlanRequestRequester1796100000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `ALTER TABLE "${schemaOf(queryRunner)}"."plan_requests" ADD "requested_by" character varying(320)`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "${schemaOf(queryRunner)}"."plan_requests" DROP COLUMN "requested_by"`);
  }
}
