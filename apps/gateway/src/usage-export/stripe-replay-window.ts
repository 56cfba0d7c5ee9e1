/** Stripe keeps a meter event's `identifier` unique within a rolling 24 hours (and no longer). */
export const STRIPE_IDENTIFIER_WINDOW_MS = 24 * 3_600_000;
/** Our margin inside it: clocks, queues and Stripe's own processing (so 23 h). */
export const STRIPE_WINDOW_MARGIN_MS = 3_600_000;
/** Stripe takes timestamps within the past 35 calendar days ... */
export const STRIPE_MAX_AGE_MS = 35 * 86_400_000;
/** ... and up to 5 minutes in the future. */
export const STRIPE_MAX_AHEAD_MS = 5 * 60_000;

/** What the delivery worker (the outbox) knows of an aggregate's past deliveries to Stripe. */
export interface StripeDelivery {
  /** When it was first handed to Stripe (recorded before that attempt): undefined if never. */
  firstAttemptAt?: number;
  /** Stripe answered 200 for it once. */
  acknowledged: boolean;
}

export type StripeSendDecision =
  | { send: true }
  | {
      send: false;
      /**
       * acknowledged: already counted, never again. identifier_expired: attempted, never acknowledged, and the
       * first attempt is older than the window (less the margin): Stripe may have counted it and would no longer
       * deduplicate a resend; held for reconciliation, never resent. too_old / in_future: outside the
       * timestamps Stripe takes.
       */
      reason: 'acknowledged' | 'identifier_expired' | 'too_old' | 'in_future';
    };

/**
 * Whether an aggregate (its bucket starting at `start`) may be sent to Stripe at `now`, with its one identifier
 * (the aggregate id). Resending under the same identifier is safe only while Stripe still deduplicates it: the
 * window runs from when Stripe first received it, which is no earlier than our first attempt, so a resend is
 * allowed until `firstAttemptAt` + 24 h − margin. Past that, an attempt that was never acknowledged is not
 * resent (double counting a customer is worse than a gap an operator reconciles from Stripe's meter summaries),
 * and never under a fresh identifier. A first attempt, however late, is always safe (within 35 days): Stripe
 * has never seen the identifier.
 */
export function stripeSendDecision(
  start: number,
  delivery: StripeDelivery,
  now: number,
  marginMs = STRIPE_WINDOW_MARGIN_MS,
): StripeSendDecision {
  if (delivery.acknowledged) return { send: false, reason: 'acknowledged' };
  if (start > now + STRIPE_MAX_AHEAD_MS) return { send: false, reason: 'in_future' };
  if (start < now - STRIPE_MAX_AGE_MS + marginMs) return { send: false, reason: 'too_old' };
  if (delivery.firstAttemptAt !== undefined && now - delivery.firstAttemptAt >= STRIPE_IDENTIFIER_WINDOW_MS - marginMs)
    return { send: false, reason: 'identifier_expired' };
  return { send: true };
}
