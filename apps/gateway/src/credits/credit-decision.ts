/** The credits part of a rate-limit decision: what the guard hands the store, and what it answers. */

/**
 * A consumer's prepaid credits for one request (docs/billing.md), decided in the same call as its windows: the
 * request is admitted only when every window has room AND the balance covers `cost`; then the cost is taken.
 */
export interface CreditSpec {
  /** What this request costs (0: free, still decided: a refill may be due). */
  cost: number;
  /**
   * The refill in force: at the first decision of a period whose start is later than the last refill applied,
   * the balance is topped up to `amount` (never lowered). `waitMs`: to the next refill, by the gateway's clock.
   */
  refill?: { amount: number; periodStartMs: number; periodMs: number; waitMs: number };
  /**
   * The balance as the ledger and the spend history say it, for a store that holds none (Redis came back empty,
   * a restarted embedded gateway): called at most once per decision, never when the store has a balance.
   */
  rebuild: () => Promise<CreditSeed>;
}

/** A balance rebuilt from the ledger: `refilledPeriodStartMs` the start of the last period refilled (0: none). */
export interface CreditSeed {
  balance: number;
  refilledPeriodStartMs: number;
}

/** The credits after a decision: the balance left, and the refill this decision applied (the ledger's row). */
export interface CreditState {
  balance: number;
  cost: number;
  refill?: { amount: number; periodMs: number; waitMs: number };
  /** Set when this decision applied the period's refill: what it added (may be 0) and the period. */
  refilled?: { amount: number; balanceAfter: number; periodStartMs: number };
}

/** What the admin API does to a balance. */
export type CreditChange = { read: true } | { add: number } | { set: number | null };

/** A balance before and after a CreditChange (null: none held). */
export interface CreditBalances {
  before: number | null;
  after: number | null;
}

/** The name of the credits policy in headers and refusals. */
export const CREDITS_POLICY = 'credits';

/** The credits part of a script reply: the balance left, and the refill it applied (refilled -1: none). */
export function creditState(credits: CreditSpec, balance: number, refilled: number, refilledTo: number): CreditState {
  const refill = credits.refill;
  return {
    balance,
    cost: credits.cost,
    refill: refill && { amount: refill.amount, periodMs: refill.periodMs, waitMs: refill.waitMs },
    refilled:
      refilled >= 0 && refill
        ? { amount: refilled, balanceAfter: refilledTo, periodStartMs: refill.periodStartMs }
        : undefined,
  };
}

/**
 * Whether waiting for the next refill can ever pay for this request: a refill tops the balance up to its amount,
 * so an operation that costs more than the amount is never covered by waiting (402, not 429 with a Retry-After
 * that would be retried forever).
 */
export function refillCovers(credits: CreditSpec): boolean {
  return credits.refill !== undefined && credits.refill.amount >= credits.cost;
}
