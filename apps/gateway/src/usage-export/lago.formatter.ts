import { CustomerMapping, customerOf } from '../config/usage-export.config';
import { inBatches } from './in-batches';
import { aggregateId, UsageAggregate } from './usage-aggregate';

/** Lago's `POST /api/v1/events/batch` takes at most this many events per request. */
export const LAGO_BATCH_LIMIT = 100;

export interface LagoEvent {
  /** Lago's idempotency key: the aggregate's id. */
  transaction_id: string;
  external_subscription_id: string;
  /** The billable metric's code (USAGE_EVENTS_NAME). */
  code: string;
  /** Unix seconds: the bucket's start. */
  timestamp: number;
  properties: { count: number; credits?: number; operation: string; outcome: string; bucket: string };
}

export interface LagoBatches {
  /** Each a request body, `{events: [...]}`, of at most LAGO_BATCH_LIMIT events. */
  bodies: Array<{ events: LagoEvent[] }>;
  /** Aggregates of consumers the mapping names no subscription for: not exported, to report. */
  unmapped: UsageAggregate[];
}

export interface LagoOptions {
  code: string;
  customers: CustomerMapping;
}

/** One aggregate as a Lago event, or undefined when its consumer maps to no subscription. */
export function toLagoEvent(aggregate: UsageAggregate, options: LagoOptions): LagoEvent | undefined {
  const subscription = customerOf(options.customers, aggregate.consumer);
  if (subscription === undefined) return undefined;
  const properties: LagoEvent['properties'] = {
    count: aggregate.count,
    operation: aggregate.operation,
    outcome: aggregate.outcome,
    bucket: aggregate.bucket,
  };
  if (aggregate.credits !== null) properties.credits = aggregate.credits;
  return {
    transaction_id: aggregateId(aggregate),
    external_subscription_id: subscription,
    code: options.code,
    timestamp: Math.floor(aggregate.start / 1000),
    properties,
  };
}

/** The aggregates as Lago batch bodies, in order, LAGO_BATCH_LIMIT events (or `size`, if smaller) per body. */
export function lagoBatches(
  aggregates: readonly UsageAggregate[],
  options: LagoOptions,
  size = LAGO_BATCH_LIMIT,
): LagoBatches {
  const events: LagoEvent[] = [];
  const unmapped: UsageAggregate[] = [];
  for (const aggregate of aggregates) {
    const event = toLagoEvent(aggregate, options);
    if (event === undefined) unmapped.push(aggregate);
    else events.push(event);
  }
  return { bodies: inBatches(events, Math.min(size, LAGO_BATCH_LIMIT)).map((batch) => ({ events: batch })), unmapped };
}
