import { MigrationInterface, QueryRunner } from 'typeorm';

function schemaOf(queryRunner: QueryRunner): string {
  return (queryRunner.connection.options as { schema?: string }).schema ?? 'public';
}

/**
 * Prepaid credits (issue #38, docs/billing.md): a consumer's credit settings (all null: its plan's), the ledger of
 * top-ups, sets and refills, and the spend per consumer and UTC day. The live balance is the counter store's.
 */
export class AddPrepaidCredits1795900000000 implements MigrationInterface {
  name = 'AddPrepaidCredits1795900000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const s = schemaOf(queryRunner);
    await queryRunner.query(`ALTER TABLE "${s}"."consumers" ADD "credits_enabled" boolean`);
    await queryRunner.query(`ALTER TABLE "${s}"."consumers" ADD "credit_refill" jsonb`);
    await queryRunner.query(`ALTER TABLE "${s}"."consumers" ADD "credit_costs" jsonb`);
    await queryRunner.query(
      `CREATE TABLE "${s}"."credit_ledger" ("id" uuid NOT NULL, "consumer" character varying(64) NOT NULL, "at" TIMESTAMP WITH TIME ZONE NOT NULL, "kind" character varying(8) NOT NULL, "amount" bigint NOT NULL, "balance_after" bigint NOT NULL, "reason" character varying(200), "actor" character varying(128) NOT NULL, "period_start" TIMESTAMP WITH TIME ZONE, CONSTRAINT "UQ_credit_ledger_refill" UNIQUE ("consumer", "period_start"), CONSTRAINT "PK_credit_ledger" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE INDEX "IDX_credit_ledger_consumer_at" ON "${s}"."credit_ledger" ("consumer", "at") `,
    );
    await queryRunner.query(
      `CREATE TABLE "${s}"."credit_spend_daily" ("consumer" character varying(64) NOT NULL, "day" date NOT NULL, "spent" bigint NOT NULL DEFAULT '0', CONSTRAINT "PK_credit_spend_daily" PRIMARY KEY ("consumer", "day"))`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    const s = schemaOf(queryRunner);
    await queryRunner.query(`DROP TABLE "${s}"."credit_spend_daily"`);
    await queryRunner.query(`DROP INDEX "${s}"."IDX_credit_ledger_consumer_at"`);
    await queryRunner.query(`DROP TABLE "${s}"."credit_ledger"`);
    await queryRunner.query(`ALTER TABLE "${s}"."consumers" DROP COLUMN "credit_costs"`);
    await queryRunner.query(`ALTER TABLE "${s}"."consumers" DROP COLUMN "credit_refill"`);
    await queryRunner.query(`ALTER TABLE "${s}"."consumers" DROP COLUMN "credits_enabled"`);
  }
}
