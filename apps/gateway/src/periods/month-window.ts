import { billingPeriodAt, currentBillingPeriod, RecutPeriod } from './billing-period';

/** The counting window of a monthly quota, in RateLimit-Policy and in a 429's `policy`. */
export const MONTH_WINDOW = 'month';

/**
 * Where an anchored window's counter ends: `endMs`, the end of the period that contains now by the gateway's clock,
 * and `nextEndMs`, the end of the one after it. The store takes the first of the two still ahead by its own clock
 * (Redis's time: instances with skewed clocks agree on which period a request falls in). A counter whose end is
 * neither is re-cut to it, its count kept: the anchor was moved (docs/billing.md).
 */
export interface AnchoredPeriod {
  endMs: number;
  nextEndMs: number;
}

/** A monthly quota as a counting window: `ttlMs` is the whole current period's length (RateLimit-Policy's `w`). */
export interface MonthWindow {
  name: typeof MONTH_WINDOW;
  limit: number;
  ttlMs: number;
  period: AnchoredPeriod;
}

/**
 * What a month window is cut from: a consumer (consumers/consumer.ts's Consumer is one), named by its parts so that
 * the period arithmetic stays below the consumers that use it.
 */
export interface MonthQuotaHolder {
  limits: { perMonth?: number };
  billingAnchorMs: number;
  recutPeriod?: RecutPeriod | null;
}

interface CachedPeriod {
  anchorMs: number;
  recut: RecutPeriod | null | undefined;
  startMs: number;
  endMs: number;
  nextEndMs: number;
}

/** The period arithmetic once per consumer and period, not per request: consumers are cached objects. */
const periods = new WeakMap<MonthQuotaHolder, CachedPeriod>();

/** The consumer's month window at `nowMs`, or undefined when it has no monthly quota. */
export function monthWindowOf(consumer: MonthQuotaHolder, nowMs: number): MonthWindow | undefined {
  const limit = consumer.limits.perMonth;
  if (limit === undefined) return undefined;
  let cached = periods.get(consumer);
  if (
    cached === undefined ||
    cached.anchorMs !== consumer.billingAnchorMs ||
    cached.recut !== consumer.recutPeriod ||
    nowMs >= cached.endMs ||
    nowMs < cached.startMs
  ) {
    // The period in progress: after an anchor move, the re-cut one while it lasts (the count it carries was started
    // at its start, so RateLimit-Policy's `w` is its whole length); it ends at one of the anchor's resets, so the
    // period after it is the anchor's.
    const period = currentBillingPeriod(consumer.billingAnchorMs, consumer.recutPeriod, nowMs);
    const next = billingPeriodAt(consumer.billingAnchorMs, period.endMs);
    cached = {
      anchorMs: consumer.billingAnchorMs,
      recut: consumer.recutPeriod,
      startMs: period.startMs,
      endMs: period.endMs,
      nextEndMs: next.endMs,
    };
    periods.set(consumer, cached);
  }
  return {
    name: MONTH_WINDOW,
    limit,
    ttlMs: cached.endMs - cached.startMs,
    period: { endMs: cached.endMs, nextEndMs: cached.nextEndMs },
  };
}
