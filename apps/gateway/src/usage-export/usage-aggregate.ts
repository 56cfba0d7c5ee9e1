import { createHash } from 'node:crypto';

/** How an answer ended, as the usage history counts it (usage-counts.ts: countAnswer). */
export type UsageOutcome = 'ok' | 'client_error' | 'rate_limited' | 'server_error';

export const USAGE_OUTCOMES: readonly UsageOutcome[] = ['ok', 'client_error', 'rate_limited', 'server_error'];

/**
 * The time bucket an aggregate covers. The issue asks for minutes; the usage history holds hours (usage_hourly),
 * so that is what the history gives today (docs/usage-export.md, "What the history holds").
 */
export type AggregateBucket = 'minute' | 'hour';

export const BUCKET_MS: Record<AggregateBucket, number> = { minute: 60_000, hour: 3_600_000 };

/** What the history gives for `operation` while it does not record operations: every operation of the bucket. */
export const ALL_OPERATIONS = '*';

/**
 * One exported value: the answers of one consumer, operation and outcome in one UTC bucket, and the credits they
 * spent. Identified by (consumer, operation, outcome, bucket, start); `count` and `credits` are its values.
 */
export interface UsageAggregate {
  consumer: string;
  /** The API operation (operationId), or ALL_OPERATIONS. */
  operation: string;
  outcome: UsageOutcome;
  bucket: AggregateBucket;
  /** The bucket's UTC start, epoch milliseconds. */
  start: number;
  /** Answers (at least 1: empty aggregates are never exported). */
  count: number;
  /** Credits spent, or null where the history does not record them at this grain. */
  credits: number | null;
}

/** Bumped only with a new id scheme: every id would change, and every sink would count everything again. */
const ID_SCHEME = 'petstore.usage-aggregate.v1';

/**
 * The aggregate's id: a UUID (version 8, RFC 9562's custom form) made of the SHA-256 of its identifying content,
 * never of its values. The same consumer, operation, outcome and bucket get the same id in every process and
 * every release, so a re-export (at least once) is deduplicated by the sink (OpenMeter's id + source, Lago's
 * transaction_id, Stripe's identifier within its 24 h). The values are left out on purpose: were they in, a
 * bucket re-read after a late write would get a new id and the sink would count both the old and the new value.
 * Only closed and settled buckets are exported (exportableUntil), so the values of an id do not change.
 */
export function aggregateId(aggregate: Omit<UsageAggregate, 'count' | 'credits'>): string {
  const content = JSON.stringify([
    ID_SCHEME,
    aggregate.bucket,
    new Date(aggregate.start).toISOString(),
    aggregate.consumer,
    aggregate.operation,
    aggregate.outcome,
  ]);
  const bytes = createHash('sha256').update(content, 'utf8').digest().subarray(0, 16);
  bytes[6] = (bytes[6] & 0x0f) | 0x80; // version 8
  bytes[8] = (bytes[8] & 0x3f) | 0x80; // RFC 9562 variant
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/**
 * The end (exclusive, epoch ms) of the buckets that may be exported at `now`: a bucket is exportable once it has
 * ended and `settleMs` more have passed, time for every instance's flush of its last answers to be written
 * (USAGE_FLUSH_MS, plus the flush's own time). Rounded down to a bucket's start: a bucket is exported whole.
 */
export function exportableUntil(now: number, settleMs: number, bucket: AggregateBucket): number {
  const settled = now - settleMs;
  return settled - (((settled % BUCKET_MS[bucket]) + BUCKET_MS[bucket]) % BUCKET_MS[bucket]);
}
