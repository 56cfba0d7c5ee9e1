import { EntitySchema } from 'typeorm';

/** The exporter's position and lease as the table holds them. */
export interface UsageExportCursorRow {
  name: string;
  after_minute: Date | null;
  after_consumer: string | null;
  after_operation: string | null;
  holder: string | null;
  lease_until: Date | null;
}

/**
 * usage_export_cursor: one row per exporter (`usage-events`): the last usage_minutely row put in the outbox (the
 * keyset position, in the primary key's order), and the lease of the one instance that exports (`holder` until
 * `lease_until`, the database's clock): an instance that dies leaves a lease that expires.
 */
export const UsageExportCursorEntity = new EntitySchema<UsageExportCursorRow>({
  name: 'UsageExportCursor',
  tableName: 'usage_export_cursor',
  columns: {
    name: { type: 'varchar', length: 32, primary: true, primaryKeyConstraintName: 'PK_usage_export_cursor' },
    after_minute: { type: 'timestamptz', nullable: true },
    after_consumer: { type: 'varchar', length: 64, nullable: true },
    after_operation: { type: 'varchar', length: 128, nullable: true },
    holder: { type: 'varchar', length: 64, nullable: true },
    lease_until: { type: 'timestamptz', nullable: true },
  },
});

/** A batch of the outbox as the table holds it (bigints come back as strings). */
export interface UsageExportBatchRow {
  id: string;
  content_type: string;
  body: string;
  ids: string[];
  oldest_start: Date;
  created_at: Date;
  state: 'pending' | 'acknowledged' | 'held';
  attempts: number;
  first_attempt_at: Date | null;
  next_attempt_at: Date;
  acknowledged_at: Date | null;
  last_error: string | null;
}

/**
 * usage_export_batches: the outbox. One request to the ingest URL per row, built once, in the configured format,
 * with the aggregate ids it carries; `first_attempt_at` is written before the first attempt (Stripe's 24 h
 * window runs from it); `pending` until the ingest URL answers 2xx (`acknowledged`), or `held` when it may no
 * longer be sent (Stripe's window passed, or its timestamps are too old: docs/usage-export.md).
 */
export const UsageExportBatchEntity = new EntitySchema<UsageExportBatchRow>({
  name: 'UsageExportBatch',
  tableName: 'usage_export_batches',
  columns: {
    id: { type: 'bigint', primary: true, generated: 'increment', primaryKeyConstraintName: 'PK_usage_export_batches' },
    content_type: { type: 'varchar', length: 100 },
    body: { type: 'text' },
    ids: { type: 'jsonb' },
    oldest_start: { type: 'timestamptz' },
    created_at: { type: 'timestamptz' },
    state: { type: 'varchar', length: 16, default: 'pending' },
    attempts: { type: 'integer', default: 0 },
    first_attempt_at: { type: 'timestamptz', nullable: true },
    next_attempt_at: { type: 'timestamptz' },
    acknowledged_at: { type: 'timestamptz', nullable: true },
    last_error: { type: 'varchar', length: 500, nullable: true },
  },
  indices: [{ name: 'IDX_usage_export_batches_state_id', columns: ['state', 'id'] }],
});

export const USAGE_EXPORT_ENTITIES = [UsageExportCursorEntity, UsageExportBatchEntity];
