import { MigrationInterface, QueryRunner } from 'typeorm';

function schemaOf(queryRunner: QueryRunner): string {
  return (queryRunner.connection.options as { schema?: string }).schema ?? 'public';
}

/**
 * A lost counter store's balances rebuilt once for the fleet, from every instance's spend (issue #45,
 * docs/billing.md): the live instances that hold spend, and the rebuilds with the barrier each instance acknowledges.
 */
export class AddCreditRebuildBarriers1796000000000 implements MigrationInterface {
  name = 'AddCreditRebuildBarriers1796000000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const s = schemaOf(queryRunner);
    await queryRunner.query(
      `CREATE TABLE "${s}"."credit_spend_holder" ("id" character varying(64) NOT NULL, "seen_at" TIMESTAMP WITH TIME ZONE NOT NULL, "acked_barrier" bigint NOT NULL DEFAULT '0', "fenced_barrier" bigint NOT NULL DEFAULT '0', CONSTRAINT "PK_credit_spend_holder" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE TABLE "${s}"."credit_rebuild" ("barrier" BIGSERIAL NOT NULL, "consumer" character varying(64) NOT NULL, "instance" character varying(64) NOT NULL, "requested_at" TIMESTAMP WITH TIME ZONE NOT NULL, "completed_at" TIMESTAMP WITH TIME ZONE, "balance" bigint, "fenced" integer NOT NULL DEFAULT '0', CONSTRAINT "PK_credit_rebuild" PRIMARY KEY ("barrier"))`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    const s = schemaOf(queryRunner);
    await queryRunner.query(`DROP TABLE "${s}"."credit_rebuild"`);
    await queryRunner.query(`DROP TABLE "${s}"."credit_spend_holder"`);
  }
}
