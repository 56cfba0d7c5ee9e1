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

/** A gateway instance that holds credit spend in memory, as the table holds it (bigints come back as strings). */
export interface CreditSpendHolderRow {
  id: string;
  seen_at: Date;
  acked_barrier: string;
  fenced_barrier: string;
}

/**
 * credit_spend_holder: every live gateway instance, with the last rebuild barrier whose spend it has written
 * (`acked_barrier`, in the transaction that wrote the spend) and the last barrier that went on without it
 * (`fenced_barrier`: it was silent past the bound, so the spend it held then is not recorded; docs/billing.md).
 * `seen_at` is the database's clock at its last flush: a row not seen within the bound is a dead instance.
 */
export const CreditSpendHolderEntity = new EntitySchema<CreditSpendHolderRow>({
  name: 'CreditSpendHolder',
  tableName: 'credit_spend_holder',
  columns: {
    id: { type: 'varchar', length: 64, primary: true, primaryKeyConstraintName: 'PK_credit_spend_holder' },
    seen_at: { type: 'timestamptz' },
    acked_barrier: { type: 'bigint', default: 0 },
    fenced_barrier: { type: 'bigint', default: 0 },
  },
});

/** A rebuild of a balance as the table holds it. */
export interface CreditRebuildRow {
  barrier: string;
  consumer: string;
  instance: string;
  requested_at: Date;
  completed_at: Date | null;
  balance: string | null;
  fenced: number;
}

/**
 * credit_rebuild: one row per rebuild of a balance the counter store lost. Its `barrier` (increasing) is what
 * every live instance acknowledges once the spend it held is written; the row keeps the result and how many
 * silent instances were fenced, for operators.
 */
export const CreditRebuildEntity = new EntitySchema<CreditRebuildRow>({
  name: 'CreditRebuild',
  tableName: 'credit_rebuild',
  columns: {
    barrier: { type: 'bigint', primary: true, generated: 'increment', primaryKeyConstraintName: 'PK_credit_rebuild' },
    consumer: { type: 'varchar', length: 64 },
    instance: { type: 'varchar', length: 64 },
    requested_at: { type: 'timestamptz' },
    completed_at: { type: 'timestamptz', nullable: true },
    balance: { type: 'bigint', nullable: true },
    fenced: { type: 'int', default: 0 },
  },
});

export const CREDIT_ENTITIES = [
  CreditLedgerEntity,
  CreditSpendDailyEntity,
  CreditSpendHolderEntity,
  CreditRebuildEntity,
];
