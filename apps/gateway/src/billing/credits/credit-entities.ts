import { EntitySchema } from 'typeorm';

/** A row of the credit ledger as the table holds it (bigints come back as strings). */
export interface CreditLedgerRow {
  id: string;
  consumer: string;
  at: Date;
  kind: 'top-up' | 'set' | 'refill';
  amount: string;
  balance_after: string;
  reason: string | null;
  actor: string;
  period_start: Date | null;
}

/**
 * credit_ledger: every change of a consumer's balance that is not spend (top-ups, sets, refills), with who and
 * why. `amount` is the change the row made (a set's may be negative), so the balance is always the sum of the
 * amounts less the spend (credit_spend_daily): what a lost counter store is rebuilt from. A refill row carries its
 * period's start, unique per consumer: one refill per period however many instances saw the boundary.
 */
export const CreditLedgerEntity = new EntitySchema<CreditLedgerRow>({
  name: 'CreditLedger',
  tableName: 'credit_ledger',
  columns: {
    id: { type: 'uuid', primary: true, primaryKeyConstraintName: 'PK_credit_ledger' },
    consumer: { type: 'varchar', length: 64 },
    at: { type: 'timestamptz' },
    kind: { type: 'varchar', length: 8 },
    amount: { type: 'bigint' },
    balance_after: { type: 'bigint' },
    reason: { type: 'varchar', length: 200, nullable: true },
    actor: { type: 'varchar', length: 128 },
    period_start: { type: 'timestamptz', nullable: true },
  },
  indices: [{ name: 'IDX_credit_ledger_consumer_at', columns: ['consumer', 'at'] }],
  uniques: [{ name: 'UQ_credit_ledger_refill', columns: ['consumer', 'period_start'] }],
});

/** A day of spend as the table holds it. */
export interface CreditSpendRow {
  consumer: string;
  day: string;
  spent: string;
}

/** credit_spend_daily: credits spent per consumer and UTC day, written by every instance's flush (additive upsert). */
export const CreditSpendDailyEntity = new EntitySchema<CreditSpendRow>({
  name: 'CreditSpendDaily',
  tableName: 'credit_spend_daily',
  columns: {
    consumer: { type: 'varchar', length: 64, primary: true, primaryKeyConstraintName: 'PK_credit_spend_daily' },
    day: { type: 'date', primary: true, primaryKeyConstraintName: 'PK_credit_spend_daily' },
    spent: { type: 'bigint', default: 0 },
  },
});

export const CREDIT_ENTITIES = [CreditLedgerEntity, CreditSpendDailyEntity];
