import { EntitySchema } from 'typeorm';

/** A message as the outbox holds it. */
export interface OutboxMessageRow {
  /** Stable for every delivery attempt of the message: the `webhook-id` of its deliveries (docs/alerts.md). */
  id: string;
  /**
   * The order of creation, set by the database at insert (a bigint: the driver reads it as a string). Not created_at:
   * several messages are written in one millisecond, and their ids are random.
   */
  seq: string;
  kind: string;
  consumer: string;
  payload: Record<string, unknown>;
  created_at: Date;
  /** When a delivery worker may take it (next attempt). */
  available_at: Date;
  /** `dispatched`: the webhooks' worker made its deliveries (docs/webhooks.md); they carry on from there. */
  state: 'pending' | 'dispatched' | 'delivered' | 'failed';
  attempts: number;
}

/**
 * outbox_messages: the transactional outbox. A threshold event's message is written in the transaction that wrote
 * the event, and only when the event row was actually inserted, so a message exists exactly when its event does.
 * Nothing delivers them yet: the columns a delivery worker needs (state, attempts, available_at) are here for it.
 */
export const OutboxMessageEntity = new EntitySchema<OutboxMessageRow>({
  name: 'OutboxMessage',
  tableName: 'outbox_messages',
  columns: {
    id: { type: 'uuid', primary: true, primaryKeyConstraintName: 'PK_outbox_messages' },
    seq: { type: 'bigint', generated: 'increment' },
    kind: { type: 'varchar', length: 64 },
    consumer: { type: 'varchar', length: 64 },
    payload: { type: 'jsonb' },
    created_at: { type: 'timestamptz' },
    available_at: { type: 'timestamptz' },
    state: { type: 'varchar', length: 16, default: 'pending' },
    attempts: { type: 'int', default: 0 },
  },
  indices: [{ name: 'IDX_outbox_messages_state_available', columns: ['state', 'available_at'] }],
});
