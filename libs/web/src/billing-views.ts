import type { AdminBilling, AdminCreditLedger, AdminCredits, AdminCurrentUsage } from './admin-api-types';
import { usageTable, type UsageTable } from './usage-table';

/** The words both apps give each policy (the admin API's names: `minute`, `day`, `month`, `credits`). */
export const POLICY_TITLES = {
  minute: 'This minute',
  day: 'This 24-hour window',
  month: 'This billing month',
  credits: 'Credits',
} as const;

export type PolicyName = keyof typeof POLICY_TITLES;

/** One policy in force for a consumer, as the `policies` partial shows it: used, remaining, when it resets. */
export interface PolicyCard {
  name: PolicyName;
  title: string;
  /** Admitted (a window) or spent today (credits). */
  used: number;
  usedLabel: string;
  remaining: number;
  /** The window's limit; null for credits (a balance has no ceiling). */
  limit: number | null;
  /** When it resets (a window) or is refilled (credits), as an ISO instant; null: no refill scheduled. */
  resetsAt: string | null;
  /** Seconds to that instant; null with `resetsAt`. */
  resetSeconds: number | null;
  resetLabel: string;
}

/**
 * The policies in force, in the order of the admin API's usage answer (minute, day, month when in force), then the
 * credits when in force: every figure is the admin API's (its usage and billing answers), none computed here but the
 * reset instant of a window (`now` + its seconds to reset; the month's is the billing period's end, exact).
 */
export function policyCards(
  usage: AdminCurrentUsage,
  billing: AdminBilling | null,
  ledger: AdminCreditLedger | null,
  now: Date,
): PolicyCard[] {
  const cards: PolicyCard[] = usage.windows.map((window) => {
    const resetsAt =
      window.name === 'month' && billing
        ? billing.currentPeriod.end
        : new Date(now.getTime() + window.resetSeconds * 1000).toISOString();
    return {
      name: window.name,
      title: POLICY_TITLES[window.name],
      used: window.used,
      usedLabel: 'Used',
      remaining: window.remaining,
      limit: window.limit,
      resetsAt,
      resetSeconds: window.resetSeconds,
      resetLabel: 'Resets',
    };
  });
  const credits = billing?.credits;
  if (credits) {
    const today = ledger?.spendPerDay[ledger.spendPerDay.length - 1];
    const next = credits.nextRefillAt;
    cards.push({
      name: 'credits',
      title: POLICY_TITLES.credits,
      used: today?.spent ?? 0,
      usedLabel: 'Spent today (UTC)',
      remaining: credits.balance,
      limit: null,
      resetsAt: next,
      resetSeconds: next === null ? null : Math.max(0, Math.ceil((Date.parse(next) - now.getTime()) / 1000)),
      resetLabel: 'Next refill',
    });
  }
  return cards;
}

/** The credits panel of both apps: balance, refill, costs, ledger, spend per day, projected exhaustion. */
export interface CreditsPanel {
  balance: number;
  refill: { amount: number; every: string } | null;
  /** The consumer's own refill (true) or its plan's (false). */
  refillSet: boolean;
  nextRefillAt: string | null;
  projectedExhaustionAt: string | null;
  /**
   * A balance of 0: "exhausted until <the next refill>" (`nextRefillAt`), or "exhausted" when none is scheduled;
   * never a projected date, which would be the moment the page was drawn.
   */
  exhausted: boolean;
  /** The projection's outcome, in words when there is no date (docs/billing.md). */
  exhaustionText: string;
  costs: Array<{ operation: string; cost: number }>;
  entries: AdminCreditLedger['entries'];
  /** Spend per UTC day, as a usage table (its chart draws it). */
  spend: UsageTable | null;
}

/** The words of a projection without a date ("projected" is followed by the date itself). */
const EXHAUSTION_WORDS: Record<AdminCreditLedger['exhaustion'], string> = {
  projected: "at the last 7 days' rate",
  exhausted: 'exhausted',
  'not-expected': "not expected at the last 7 days' rate",
  'not-within-any-date': "not within any date at the last 7 days' rate",
};

/** From the billing answer's `credits` and the ledger (null when the ledger could not be read). */
export function creditsPanel(credits: AdminCredits, ledger: AdminCreditLedger | null): CreditsPanel {
  // At 0 the balance has run out whatever the ledger says (or whether it could be read at all).
  const exhausted = credits.balance <= 0 || ledger?.exhaustion === 'exhausted';
  return {
    balance: credits.balance,
    refill: credits.refill,
    refillSet: credits.refillSet,
    nextRefillAt: credits.nextRefillAt,
    projectedExhaustionAt: exhausted ? null : (ledger?.projectedExhaustionAt ?? null),
    exhausted,
    // Without the ledger (its route missing, or it failed) there is no spend to project from: said so, not guessed.
    exhaustionText: exhausted
      ? EXHAUSTION_WORDS.exhausted
      : ledger
        ? EXHAUSTION_WORDS[ledger.exhaustion]
        : 'not known: the spend history could not be read',
    costs: Object.entries(credits.costs)
      .map(([operation, cost]) => ({ operation, cost }))
      .sort((a, b) => a.operation.localeCompare(b.operation)),
    entries: ledger?.entries ?? [],
    spend:
      ledger === null
        ? null
        : usageTable(
            'Credits spent per day (UTC)',
            'day',
            ledger.spendPerDay.map((d) => ({
              start: `${d.day}T00:00:00.000Z`,
              requests: d.spent,
              ok: 0,
              clientErrors: 0,
              rateLimited: 0,
              serverErrors: 0,
              p50Ms: null,
              p95Ms: null,
            })),
            [{ key: 'requests', label: 'Credits spent' }],
          ),
  };
}
