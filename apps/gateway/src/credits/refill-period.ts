import type { CreditRefill } from '@app/contract';
import { currentBillingPeriod, RecutPeriod } from '../periods/billing-period';

const DAY_MS = 86_400_000;

/** The refill period that contains `nowMs`: its start (the period's id in the ledger), its length and the next refill. */
export interface RefillPeriod {
  startMs: number;
  endMs: number;
}

/**
 * When a refill is due (docs/billing.md): `day`, at every UTC midnight; `month`, at every reset of the consumer's
 * billing month (its anchor's day and time, clamped to shorter months: billing-period.ts). A refill belongs to its
 * period, identified by the period's start: while an anchor move's re-cut period (`recut`) is in force, the monthly
 * refill's period is that one, whose start is the start of the period the move found in progress, so a move never
 * makes a refill due again before the new anchor's next reset. A daily refill ignores the anchor and its moves.
 */
export function refillPeriodAt(
  every: CreditRefill['every'],
  anchorMs: number,
  nowMs: number,
  recut?: RecutPeriod | null,
): RefillPeriod {
  if (every === 'day') {
    const startMs = nowMs - (((nowMs % DAY_MS) + DAY_MS) % DAY_MS);
    return { startMs, endMs: startMs + DAY_MS };
  }
  const period = currentBillingPeriod(anchorMs, recut, nowMs);
  return { startMs: period.startMs, endMs: period.endMs };
}

/**
 * A refill applied: the balance is topped up to the refill's amount, never lowered (what was bought on top stays),
 * and an unspent refill does not pile up. Answers what it adds.
 */
export function refillAdds(amount: number, balance: number): number {
  return Math.max(0, amount - balance);
}
