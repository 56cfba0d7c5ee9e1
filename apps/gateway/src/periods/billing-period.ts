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

/**
 * The period an anchor move re-cut (docs/billing.md, "Moving the anchor"): the period that was in progress when
 * the anchor moved, keeping its start (what the monthly quota has counted since, and the id of a monthly refill),
 * now ending at the new anchor's next reset. Recorded on the consumer; in force while now is inside it.
 */
export type RecutPeriod = BillingPeriod;

/** `recut` when `nowMs` is inside it, else undefined (none recorded, or it has ended). */
export function recutInForce(recut: RecutPeriod | null | undefined, nowMs: number): RecutPeriod | undefined {
  return recut && nowMs >= recut.startMs && nowMs < recut.endMs ? recut : undefined;
}

/**
 * The billing period in progress at `nowMs`: the re-cut one while `nowMs` is inside it, else the one the anchor
 * cuts. Periods after a re-cut run from the anchor: the re-cut ends at one of its resets.
 */
export function currentBillingPeriod(
  anchorMs: number,
  recut: RecutPeriod | null | undefined,
  nowMs: number,
): BillingPeriod {
  return recutInForce(recut, nowMs) ?? billingPeriodAt(anchorMs, nowMs);
}

/** What moving the anchor at `movedAtMs` does to the period in progress. */
export interface AnchorMove {
  /** The period in progress just before the move. */
  before: BillingPeriod;
  /** The period in progress just after it: the same start, the new anchor's next reset as its end. */
  after: BillingPeriod;
  /** What to record on the consumer: `after`, or null when it is simply the new anchor's period. */
  recut: RecutPeriod | null;
}

/**
 * Moving the anchor from `anchorMs` (with the re-cut `recut`, if any) to `newAnchorMs` at `movedAtMs` never
 * starts a period: the period in progress (the re-cut one if it is still in force, else the old anchor's) keeps
 * its start and is re-cut to end at the new anchor's next reset after the move. So a monthly refill, identified
 * by its period's start, is not due again until that reset, however often the anchor moves.
 */
export function moveAnchor(
  anchorMs: number,
  recut: RecutPeriod | null | undefined,
  newAnchorMs: number,
  movedAtMs: number,
): AnchorMove {
  const before = currentBillingPeriod(anchorMs, recut, movedAtMs);
  const next = billingPeriodAt(newAnchorMs, movedAtMs);
  if (next.startMs === before.startMs) return { before, after: next, recut: null };
  const after = { startMs: before.startMs, endMs: next.endMs };
  return { before, after, recut: after };
}
