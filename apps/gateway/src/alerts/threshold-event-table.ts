import { EntitySchema } from 'typeorm';

/** What a threshold event is about: a day or month window, or the credit balance. */
export type ThresholdPolicyName = 'day' | 'month' | 'credits';

/** The event types a consumer (and, later, its webhooks) receives. */
export type ThresholdEventType = 'quota.threshold_crossed' | 'credits.low_balance' | 'credits.exhausted';

/** A threshold event as the table holds it (bigints come back as strings). */
export interface ThresholdEventRow {
  id: string;
  type: ThresholdEventType;
  consumer: string;
  policy: ThresholdPolicyName;
  period_start: Date;
  /** The window's end; null for the credits (a balance has no period: its arming row's time stands for its start). */
  period_end: Date | null;
  /** A window's threshold in percent of its limit (80, 100); the credits' balance level (100, 0). */
  threshold: string;
  /** '' for a window; for the credits, the ledger row that armed the level (the last one that left the balance above it). */
  arming: string;
  /** The window's limit (null for the credits). */
  quota: string | null;
  used: string | null;
  balance: string | null;
  crossed_at: Date;
  /** Who wrote it: the instance that decided the crossing request ('request'), or a reconciliation. */
  source: 'request' | 'reconciler';
  created_at: Date;
  /** The order it was written in (the database's sequence): the listing's, within a millisecond too. */
  seq: string;
}

/**
 * threshold_events: one row per consumer × policy × period × threshold × arming generation, across the whole fleet
 * (docs/alerts.md): the unique key makes a second write of the same event (another instance, a reconciliation, a
 * Redis that forgot its counts) write nothing.
 */
export const ThresholdEventEntity = new EntitySchema<ThresholdEventRow>({
  name: 'ThresholdEvent',
  tableName: 'threshold_events',
  columns: {
    id: { type: 'uuid', primary: true, primaryKeyConstraintName: 'PK_threshold_events' },
    type: { type: 'varchar', length: 40 },
    consumer: { type: 'varchar', length: 64 },
    policy: { type: 'varchar', length: 16 },
    period_start: { type: 'timestamptz' },
    period_end: { type: 'timestamptz', nullable: true },
    threshold: { type: 'bigint' },
    arming: { type: 'varchar', length: 64, default: '' },
    quota: { type: 'bigint', nullable: true },
    used: { type: 'bigint', nullable: true },
    balance: { type: 'bigint', nullable: true },
    crossed_at: { type: 'timestamptz' },
    source: { type: 'varchar', length: 16 },
    created_at: { type: 'timestamptz' },
    seq: { type: 'bigint', generated: 'increment' },
  },
  uniques: [
    {
      name: 'UQ_threshold_events_once',
      columns: ['consumer', 'policy', 'period_start', 'threshold', 'arming'],
    },
  ],
});
