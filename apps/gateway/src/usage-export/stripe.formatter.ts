import { CustomerMapping, customerOf } from '../config/usage-export.config';
import { aggregateId, UsageAggregate } from './usage-aggregate';

/** Stripe's v1 API (`POST /v1/billing/meter_events`, one event per request) takes form-encoded bodies. */
export const STRIPE_FORM_CONTENT_TYPE = 'application/x-www-form-urlencoded';

export interface StripeMeterEvent {
  event_name: string;
  /** Stripe's deduplication key (24 h): the aggregate's id. */
  identifier: string;
  /** Unix seconds: the bucket's start. */
  timestamp: number;
  /** The meter's default payload keys; Stripe reads every payload value as a string. */
  payload: { stripe_customer_id: string; value: string };
}

export interface StripeOptions {
  eventName: string;
  customers: CustomerMapping;
  /** USAGE_EVENTS_STRIPE_VALUE: which value the meter sums. */
  value: 'count' | 'credits';
  /** USAGE_EVENTS_STRIPE_OUTCOMES: the outcomes metered (Stripe sums every event it gets: no filter there). */
  outcomes: readonly string[];
}

export type StripeFormatted =
  | { event: StripeMeterEvent }
  /**
   * not_metered: an outcome USAGE_EVENTS_STRIPE_OUTCOMES leaves out; unmapped: no Stripe customer for the
   * consumer; no_value: credits asked for, none recorded at this grain.
   */
  | { skipped: 'not_metered' | 'unmapped' | 'no_value' };

/** One aggregate as a Stripe meter event (its send still subject to stripeSendDecision). */
export function toStripeMeterEvent(aggregate: UsageAggregate, options: StripeOptions): StripeFormatted {
  if (!options.outcomes.includes(aggregate.outcome)) return { skipped: 'not_metered' };
  const customer = customerOf(options.customers, aggregate.consumer);
  if (customer === undefined) return { skipped: 'unmapped' };
  const value = options.value === 'count' ? aggregate.count : aggregate.credits;
  if (value === null) return { skipped: 'no_value' };
  return {
    event: {
      event_name: options.eventName,
      identifier: aggregateId(aggregate),
      timestamp: Math.floor(aggregate.start / 1000),
      payload: { stripe_customer_id: customer, value: String(value) },
    },
  };
}

/** The event as the v1 endpoint takes it: `event_name=…&identifier=…&timestamp=…&payload[stripe_customer_id]=…&payload[value]=…`. */
export function stripeFormBody(event: StripeMeterEvent): string {
  return new URLSearchParams([
    ['event_name', event.event_name],
    ['identifier', event.identifier],
    ['timestamp', String(event.timestamp)],
    ['payload[stripe_customer_id]', event.payload.stripe_customer_id],
    ['payload[value]', event.payload.value],
  ]).toString();
}
