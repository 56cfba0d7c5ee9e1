import type { CreditState } from '../credits/credit-decision';
import { currentBillingPeriod, RecutPeriod } from '../periods/billing-period';
import { MONTH_WINDOW } from '../periods/month-window';

/**
 * Which thresholds one decision crossed (docs/alerts.md), pure: the request path calls these with a decision's
 * counters, the fleet-exact ones (one atomic store call per request), so exactly one request observes each crossing.
 */

/** A counting window after a decision, as the rate-limit store answers it (its WindowState). */
export interface CountedWindow {
  name: string;
  limit: number;
  /** Requests admitted in the window so far, this one included when it was admitted. */
  count: number;
  ttlMs: number;
  resetMs: number;
}

/** What the threshold check reads of a rate-limit decision. */
export interface ObservedDecision {
  outcome: string;
  windows: readonly CountedWindow[];
  credits?: CreditState;
}

/** The count at which a share `fraction` (0.8) of `limit` is reached: ceil(limit × fraction), at least 1. */
export function thresholdCount(limit: number, fraction: number): number {
  // 0.8 × 1000 is 800.0000000000001 in binary floating point: round away the noise before the ceiling.
  return Math.max(1, Math.ceil(Math.round(limit * fraction * 1e6) / 1e6));
}

/**
 * Whether going from `before` to `after` requests crossed `fraction` of `limit`: before < ceil(limit × fraction) ≤
 * after. Reaching the threshold exactly crosses it; a count already past it does not cross it again.
 */
export function crossesShare(before: number, after: number, limit: number, fraction: number): boolean {
  const at = thresholdCount(limit, fraction);
  return before < at && at <= after;
}

/** Whether a balance fell from above `level` to `level` or below it (a crossing of the low balance or of 0). */
export function crossesLevel(before: number, after: number, level: number): boolean {
  return before > level && after <= level;
}

/**
 * The balance just before this decision's cost was taken: a refill this decision applied first tops the balance
 * up (its `balanceAfter`), else the balance left plus the cost. Only for an admitted request (a refused one spends
 * nothing: its balance did not fall).
 */
export function balanceBeforeSpend(credits: CreditState): number {
  return credits.refilled ? credits.refilled.balanceAfter : credits.balance + credits.cost;
}

/** The fractions of `fractions` a window's admitted request crossed (empty for most requests). */
export function crossedShares(window: CountedWindow, fractions: readonly number[]): number[] {
  return fractions.filter((fraction) => crossesShare(window.count - 1, window.count, window.limit, fraction));
}

/** The levels of `levels` an admitted request with credits crossed (empty for most requests). */
export function crossedLevels(credits: CreditState, levels: readonly number[]): number[] {
  const before = balanceBeforeSpend(credits);
  return levels.filter((level) => crossesLevel(before, credits.balance, level));
}

/**
 * Where a window's period runs, from a decision at `nowMs`: it ends `resetMs` from then and lasts `ttlMs` (a rolling
 * window: a day's opens at its first request). A monthly quota's is its billing period (`billing`: the consumer's
 * anchor and re-cut period), the one the window's middle falls in: exact to the millisecond, so every instance names
 * the same period whatever its clock, and the next one when the store's clock already took it.
 */
export function windowPeriod(
  window: CountedWindow,
  nowMs: number,
  billing?: { billingAnchorMs: number; recutPeriod?: RecutPeriod | null },
): { startMs: number; endMs: number } {
  const endMs = nowMs + window.resetMs;
  if (window.name !== MONTH_WINDOW || billing === undefined) return { startMs: endMs - window.ttlMs, endMs };
  const period = currentBillingPeriod(billing.billingAnchorMs, billing.recutPeriod, endMs - window.ttlMs / 2);
  return { startMs: period.startMs, endMs: period.endMs };
}
