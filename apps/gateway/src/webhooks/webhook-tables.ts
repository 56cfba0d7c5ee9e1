import { EntitySchema } from 'typeorm';

/** A receiver of webhooks: a consumer's own, or (consumer null) an operator's, which gets every consumer's events. */
export interface WebhookEndpointRow {
  id: string;
  consumer: string | null;
  url: string;
  description: string;
  /** Only these event types; null: all of them. */
  event_types: string[] | null;
  /** `whsec_…`, kept so that every instance can sign: shown in full only when created or rotated. */
  secret: string;
  /** The secret a rotation replaced: it signs beside `secret` until `previous_secret_until`, then never again. */
  previous_secret: string | null;
  previous_secret_until: Date | null;
  enabled: boolean;
  disabled_at: Date | null;
  disabled_reason: string | null;
  created_at: Date;
  /** The first failed attempt since the last success; null: not failing. */
  failing_since: Date | null;
}

export const DELIVERY_STATES = ['pending', 'delivered', 'failed'] as const;
export type DeliveryState = (typeof DELIVERY_STATES)[number];

/** One message on its way to one endpoint (or to the consumer's contact email: endpoint_id null, email set). */
export interface WebhookDeliveryRow {
  id: string;
  /** The outbox message: its id is the `webhook-id` of every attempt. */
  message_id: string;
  endpoint_id: string | null;
  email: string | null;
  consumer: string;
  kind: string;
  /** The message's `seq` (its order of creation): an endpoint gets a consumer's messages in this order. */
  message_seq: string;
  state: DeliveryState;
  attempts: number;
  next_attempt_at: Date;
  /** Claimed by an instance until then: a dead instance's claim runs out. */
  lease_until: Date | null;
  last_status: number | null;
  last_error: string | null;
  created_at: Date;
  delivered_at: Date | null;
}

/** One attempt of a delivery, as the developer sees it in the portal. */
export interface WebhookAttemptRow {
  id: string;
  delivery_id: string;
  attempt: number;
  at: Date;
  status_code: number | null;
  latency_ms: number;
  error: string | null;
}

export const WebhookEndpointEntity = new EntitySchema<WebhookEndpointRow>({
  name: 'WebhookEndpoint',
  tableName: 'webhook_endpoints',
  columns: {
    id: { type: 'uuid', primary: true, primaryKeyConstraintName: 'PK_webhook_endpoints' },
    consumer: { type: 'varchar', length: 64, nullable: true },
    url: { type: 'varchar', length: 2048 },
    description: { type: 'varchar', length: 200, default: '' },
    event_types: { type: 'jsonb', nullable: true },
    secret: { type: 'varchar', length: 128 },
    previous_secret: { type: 'varchar', length: 128, nullable: true },
    previous_secret_until: { type: 'timestamptz', nullable: true },
    enabled: { type: 'boolean', default: true },
    disabled_at: { type: 'timestamptz', nullable: true },
    disabled_reason: { type: 'varchar', length: 200, nullable: true },
    created_at: { type: 'timestamptz' },
    failing_since: { type: 'timestamptz', nullable: true },
  },
  indices: [{ name: 'IDX_webhook_endpoints_consumer', columns: ['consumer'] }],
});

export const WebhookDeliveryEntity = new EntitySchema<WebhookDeliveryRow>({
  name: 'WebhookDelivery',
  tableName: 'webhook_deliveries',
  columns: {
    id: { type: 'uuid', primary: true, primaryKeyConstraintName: 'PK_webhook_deliveries' },
    message_id: { type: 'uuid' },
    endpoint_id: { type: 'uuid', nullable: true },
    email: { type: 'varchar', length: 320, nullable: true },
    consumer: { type: 'varchar', length: 64 },
    kind: { type: 'varchar', length: 64 },
    message_seq: { type: 'bigint' },
    state: { type: 'varchar', length: 16, default: 'pending' },
    attempts: { type: 'int', default: 0 },
    next_attempt_at: { type: 'timestamptz' },
    lease_until: { type: 'timestamptz', nullable: true },
    last_status: { type: 'int', nullable: true },
    last_error: { type: 'varchar', length: 500, nullable: true },
    created_at: { type: 'timestamptz' },
    delivered_at: { type: 'timestamptz', nullable: true },
  },
  indices: [
    { name: 'IDX_webhook_deliveries_due', columns: ['state', 'next_attempt_at'] },
    { name: 'IDX_webhook_deliveries_endpoint', columns: ['endpoint_id', 'created_at'] },
  ],
});

export const WebhookAttemptEntity = new EntitySchema<WebhookAttemptRow>({
  name: 'WebhookAttempt',
  tableName: 'webhook_attempts',
  columns: {
    id: { type: 'uuid', primary: true, primaryKeyConstraintName: 'PK_webhook_attempts' },
    delivery_id: { type: 'uuid' },
    attempt: { type: 'int' },
    at: { type: 'timestamptz' },
    status_code: { type: 'int', nullable: true },
    latency_ms: { type: 'int' },
    error: { type: 'varchar', length: 500, nullable: true },
  },
  indices: [{ name: 'IDX_webhook_attempts_delivery', columns: ['delivery_id', 'attempt'] }],
});

export const WEBHOOK_ENTITIES = [WebhookEndpointEntity, WebhookDeliveryEntity, WebhookAttemptEntity];
