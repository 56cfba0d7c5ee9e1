import { ApiProperty } from '@nestjs/swagger';
import { MAX_ATTEMPTS, RETRY_DELAYS_MS } from '../retry-schedule';
import { TEST_EVENT_TYPE, WEBHOOK_EVENT_TYPES } from '../webhook-events';
import { EXAMPLE_ENDPOINT_ID, EXAMPLE_MESSAGE_ID } from './dto/webhook-endpoint.dto';

/** A threshold event as an endpoint receives it: the outbox message's payload (docs/alerts.md, "The event"). */
export class ThresholdEventPayload {
  @ApiProperty({ format: 'uuid', example: '6f1c7c9e-2b4d-4e8a-9c1f-3a5b7d9e1f20', description: "The event's id." })
  id!: string;
  @ApiProperty({ enum: WEBHOOK_EVENT_TYPES, example: 'quota.threshold_crossed' }) type!: string;
  @ApiProperty({ example: 'acme' }) consumer!: string;
  @ApiProperty({ enum: ['day', 'month', 'credits'], example: 'month' }) policy!: string;
  @ApiProperty({
    format: 'date-time',
    example: '2026-11-10T09:00:00.000Z',
    description: "The window's period; for the credits, the arming ledger row's time.",
  })
  periodStart!: string;
  @ApiProperty({ format: 'date-time', nullable: true, type: String, example: '2026-12-10T09:00:00.000Z' })
  periodEnd!: string | null;
  @ApiProperty({ example: 80, description: "A window's threshold in percent of its limit; the credits' level." })
  threshold!: number;
  @ApiProperty({ nullable: true, type: String, example: null, description: "The credits' arming ledger row." })
  arming!: string | null;
  @ApiProperty({ nullable: true, type: 'integer', example: 1000000 }) limit!: number | null;
  @ApiProperty({ nullable: true, type: 'integer', example: 800000 }) used!: number | null;
  @ApiProperty({ nullable: true, type: 'integer', example: null }) balance!: number | null;
  @ApiProperty({ format: 'date-time', example: '2026-11-28T14:03:11.482Z' }) crossedAt!: string;
}

/** What `POST …/webhook-endpoints/{id}/test` sends. */
export class WebhookTestEventPayload {
  @ApiProperty({ format: 'uuid', example: '0b9c8d7e-6f5a-4b3c-8d2e-1f0a9b8c7d6e' }) id!: string;
  @ApiProperty({ enum: [TEST_EVENT_TYPE], example: TEST_EVENT_TYPE }) type!: string;
  @ApiProperty({ example: 'acme' }) consumer!: string;
  @ApiProperty({ format: 'uuid', example: EXAMPLE_ENDPOINT_ID, description: 'The endpoint tested.' }) endpoint!: string;
  @ApiProperty({ format: 'date-time', example: '2026-11-28T14:05:00.000Z' }) createdAt!: string;
}

export const WEBHOOK_PAYLOAD_MODELS = [ThresholdEventPayload, WebhookTestEventPayload];

const HEADERS = [
  {
    name: 'webhook-id',
    in: 'header',
    required: true,
    description:
      "`msg_` and the outbox message's id: the same on every attempt of one message, to every endpoint (redeliveries included): deduplicate on it.",
    schema: { type: 'string', example: `msg_${EXAMPLE_MESSAGE_ID}` },
  },
  {
    name: 'webhook-timestamp',
    in: 'header',
    required: true,
    description: 'Seconds since the epoch when this attempt was signed: refuse one more than five minutes off.',
    schema: { type: 'string', example: '1795864991' },
  },
  {
    name: 'webhook-signature',
    in: 'header',
    required: true,
    description:
      '`v1,<base64 of HMAC-SHA256(secret, "<webhook-id>.<webhook-timestamp>.<body>")>` (Standard Webhooks); verify with e.g. `new Webhook(secret).verify(body, headers)` of the `standardwebhooks` package.',
    schema: { type: 'string', example: 'v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=' },
  },
];

const SCHEDULE = `immediately, then ${RETRY_DELAYS_MS.map((ms) => (ms < 60_000 ? `${ms / 1000} s` : ms < 3_600_000 ? `${ms / 60_000} min` : `${ms / 3_600_000} h`)).join(', ')} after each failure (±10 %), ${MAX_ATTEMPTS} attempts in all`;

/** A month's 80 % event: the x-webhooks example and the events list's. */
export const EXAMPLE_THRESHOLD: ThresholdEventPayload = {
  id: '6f1c7c9e-2b4d-4e8a-9c1f-3a5b7d9e1f20',
  type: 'quota.threshold_crossed',
  consumer: 'acme',
  policy: 'month',
  periodStart: '2026-11-10T09:00:00.000Z',
  periodEnd: '2026-12-10T09:00:00.000Z',
  threshold: 80,
  arming: null,
  limit: 1000000,
  used: 800000,
  balance: null,
  crossedAt: '2026-11-28T14:03:11.482Z',
};

/** A low-balance event: the x-webhooks example and the events list's. */
export const EXAMPLE_LOW_BALANCE: ThresholdEventPayload = {
  ...EXAMPLE_THRESHOLD,
  id: '8a2d4f6b-1c3e-4a5b-9d7f-0e2c4a6b8d1f',
  type: 'credits.low_balance',
  policy: 'credits',
  periodStart: '2026-11-01T00:00:00.000Z',
  periodEnd: null,
  threshold: 100,
  arming: '42',
  limit: null,
  used: null,
  balance: 95,
  crossedAt: '2026-11-29T08:41:52.017Z',
};

function webhook(type: string, summary: string, schema: string, example: object): Record<string, unknown> {
  return {
    post: {
      operationId: `${type.replace(/[._](\w)/g, (_, c: string) => c.toUpperCase())}Webhook`,
      summary,
      description: `POSTed to every enabled endpoint whose filter takes \`${type}\` (the consumer's own and the fleet-wide ones), signed with the endpoint's secret. A 2xx answer within the attempt's deadline (WEBHOOK_TIMEOUT_MS) is a delivery; anything else (another status, a redirect, no answer) is retried: ${SCHEDULE}.`,
      // The receiver authenticates the sender by the signature headers, not by an OpenAPI security scheme.
      security: [],
      parameters: HEADERS,
      requestBody: {
        required: true,
        content: { 'application/json': { schema: { $ref: `#/components/schemas/${schema}` }, example } },
      },
      responses: {
        '2XX': { description: 'Delivered.' },
        default: { description: 'Not delivered: retried on the schedule, then given up.' },
      },
    },
  };
}

/**
 * The webhooks the gateway sends, as OpenAPI 3.1's `webhooks` section would describe them; the admin document is
 * OpenAPI 3.0, whose closest form is the `x-webhooks` extension (read by Redocly), with the payloads as schemas in
 * components (docs/webhooks.md).
 */
export function webhooksSection(): Record<string, unknown> {
  return {
    'quota.threshold_crossed': webhook(
      'quota.threshold_crossed',
      "A consumer's day window or monthly quota crossed a threshold (80 %, 100 % by default)",
      'ThresholdEventPayload',
      EXAMPLE_THRESHOLD,
    ),
    'credits.low_balance': webhook(
      'credits.low_balance',
      "A consumer's credit balance fell to its low level",
      'ThresholdEventPayload',
      EXAMPLE_LOW_BALANCE,
    ),
    'credits.exhausted': webhook(
      'credits.exhausted',
      "A consumer's credit balance reached 0",
      'ThresholdEventPayload',
      {
        ...EXAMPLE_THRESHOLD,
        type: 'credits.exhausted',
        policy: 'credits',
        periodStart: '2026-11-01T00:00:00.000Z',
        periodEnd: null,
        threshold: 0,
        arming: '42',
        limit: null,
        used: null,
        balance: 0,
      },
    ),
    [TEST_EVENT_TYPE]: webhook(
      TEST_EVENT_TYPE,
      'A test event, sent to one endpoint on request',
      'WebhookTestEventPayload',
      {
        id: '0b9c8d7e-6f5a-4b3c-8d2e-1f0a9b8c7d6e',
        type: TEST_EVENT_TYPE,
        consumer: 'acme',
        endpoint: EXAMPLE_ENDPOINT_ID,
        createdAt: '2026-11-28T14:05:00.000Z',
      },
    ),
  };
}
