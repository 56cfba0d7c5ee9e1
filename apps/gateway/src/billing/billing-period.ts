/**
 * A consumer's monthly billing period, cut from its billing anchor (an instant; by default when the consumer was
 * created). Every period starts at the anchor's day-of-month and time of day, in UTC; in a month too short for
 * that day it starts on the month's last day instead (an anchor on the 31st resets on 30 April, on 28 or 29
 * February). The clamp does not stick: the next month starts on the 31st again when it has one.
 *
 * The anchor is a phase, not a start: the periods run both ways from it, so an anchor in the future cuts the
 * same periods as the same day and time a month earlier (the period that contains now is always defined).
 */
export interface BillingPeriod {
  /** Unix ms, inclusive. */
  startMs: number;
  /** Unix ms, exclusive: the next reset. */
  endMs: number;
}

const daysIn = (year: number, month: number): number => new Date(Date.UTC(year, month + 1, 0)).getUTCDate();

/**
 * The anchor's reset in month `month` (0-11; any integer, Date.UTC carries it into the year) of `year`.
 * The anchor's parts are read once by the caller.
 */
function resetIn(anchor: Date, year: number, month: number): number {
  const first = new Date(Date.UTC(year, month, 1));
  const y = first.getUTCFullYear();
  const m = first.getUTCMonth();
  const day = Math.min(anchor.getUTCDate(), daysIn(y, m));
  return Date.UTC(
    y,
    m,
    day,
    anchor.getUTCHours(),
    anchor.getUTCMinutes(),
    anchor.getUTCSeconds(),
    anchor.getUTCMilliseconds(),
  );
}

/** The billing period that contains `nowMs`, for a consumer anchored at `anchorMs`. */
export function billingPeriodAt(anchorMs: number, nowMs: number): BillingPeriod {
  const anchor = new Date(anchorMs);
  const now = new Date(nowMs);
  const year = now.getUTCFullYear();
  const month = now.getUTCMonth();
  const thisMonth = resetIn(anchor, year, month);
  return thisMonth <= nowMs
    ? { startMs: thisMonth, endMs: resetIn(anchor, year, month + 1) }
    : { startMs: resetIn(anchor, year, month - 1), endMs: thisMonth };
}

/** The period after `period` (its start is `period.endMs`). */
export function nextBillingPeriod(anchorMs: number, period: BillingPeriod): BillingPeriod {
  return billingPeriodAt(anchorMs, period.endMs);
}
