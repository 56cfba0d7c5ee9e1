import { parseDateTime } from '@app/contract';
import { formTextError } from '@app/web';
import type { AdminAlertThresholds, AdminBillingUpdate, RefusalSentences } from '@app/web';
import { field } from '../actions';

/** The billing and credit forms of the consumer page (each posts to `<consumer>/<action>`). */
export type BillingFormName = 'anchor' | 'quota' | 'top-up' | 'balance' | 'refill' | 'costs' | 'alerts';

/** A billing form shown again: what was typed, and why it was not saved (next to that form). */
export interface BillingFormState {
  form: BillingFormName;
  typed: Record<string, string>;
  error: string;
}

/** What the billing forms say when the admin API refuses (chosen by code; the rest: libs/web's REFUSALS). */
export const BILLING_REFUSALS: RefusalSentences = {
  VALIDATION_FAILED: 'This was not accepted: check the values (whole numbers within the limits shown) and try again.',
  FORBIDDEN: 'Your token may not change billing or credits: it takes a token for every consumer with consumers:write.',
  NOT_FOUND: 'This admin API does not offer it, or the consumer no longer exists.',
};

/** The page's own sentences, where it can say better than the admin API what is wrong with a field. */
export const BILLING_ERRORS = {
  anchor:
    'Type a date and time in UTC as YYYY-MM-DD HH:MM (for example 2026-01-31 09:00), or leave it empty for its creation time.',
  quota: 'Type a whole number of at least 1 (at most 2,000,000,000), or leave it empty for the plan’s.',
  amount: 'Type a whole number of credits of at least 1.',
  balance: 'Type a whole number of credits (0 or more), or leave it empty to stop using credits.',
  reason: 'Say why, in at most 200 characters.',
  reasonText: 'Say why in one line of ordinary text: no tabs, line breaks or invisible control characters.',
  refill: 'Give an amount of at least 1 and how often, or neither for the plan’s refill.',
  costs: 'Each cost is a whole number from 0 to 1,000,000.',
  thresholds:
    'Type up to 5 whole percents from 1 to 100, ascending, separated by commas (for example 50, 90, 100), or leave it empty for the plan’s.',
  lowBalance: 'Type a whole number of credits (0 or more), or leave it empty for the plan’s.',
} as const;

/** A PATCH of a consumer's billing: anchor, monthly quota, and the credits' refill and costs. */
export type BillingChange = AdminBillingUpdate;

/** A result: the admin API's body, or the sentence next to the form. */
export type Parsed<T> = { body: T } | { error: string };

/** "1,000" and "1 000" read as 1000; anything but digits is NaN. */
export function wholeNumber(text: string): number {
  const digits = text.replace(/[\s,_]/g, '');
  return /^\d{1,13}$/.test(digits) ? Number(digits) : NaN;
}

/** "2026-01-31 09:00" (or with seconds, a "T", a "Z" or " UTC") as an ISO instant; '' as null. */
export function parseAnchor(text: string): Parsed<{ billingAnchor: string | null }> {
  if (text === '') return { body: { billingAnchor: null } };
  const match = /^(\d{4}-\d{2}-\d{2})[ T](\d{2}:\d{2})(:\d{2})?(?:Z| ?UTC)?$/i.exec(text);
  const iso = match ? `${match[1]}T${match[2]}${match[3] ?? ':00'}Z` : '';
  // The admin API's own parser (libs/contract): a day the month does not have is refused here as there.
  if (!match || !('ms' in parseDateTime(iso, 'date-time'))) return { error: BILLING_ERRORS.anchor };
  return { body: { billingAnchor: iso } };
}

/** The anchor as the form shows it: "2026-01-31 09:00" (seconds only when it has some). */
export function anchorText(iso: string): string {
  const text = new Date(iso).toISOString();
  const seconds = text.slice(17, 19);
  return `${text.slice(0, 10)} ${text.slice(11, 16)}${seconds === '00' ? '' : `:${seconds}`}`;
}

export function parseQuota(text: string): Parsed<{ perMonth: number | null }> {
  if (text === '') return { body: { perMonth: null } };
  const perMonth = wholeNumber(text);
  return Number.isSafeInteger(perMonth) && perMonth >= 1 ? { body: { perMonth } } : { error: BILLING_ERRORS.quota };
}

function reasonOf(body: unknown): Parsed<string> {
  const reason = field(body, 'reason');
  if (reason === '' || reason.length > 200) return { error: BILLING_ERRORS.reason };
  return formTextError(reason) === undefined ? { body: reason } : { error: BILLING_ERRORS.reasonText };
}

export function parseTopUp(body: unknown): Parsed<{ amount: number; reason: string }> {
  const amount = wholeNumber(field(body, 'amount'));
  if (!(amount >= 1)) return { error: BILLING_ERRORS.amount };
  const reason = reasonOf(body);
  return 'error' in reason ? reason : { body: { amount, reason: reason.body } };
}

export function parseBalance(body: unknown): Parsed<{ balance: number | null; reason: string }> {
  const text = field(body, 'balance');
  const balance = text === '' ? null : wholeNumber(text);
  if (balance !== null && !(balance >= 0)) return { error: BILLING_ERRORS.balance };
  const reason = reasonOf(body);
  return 'error' in reason ? reason : { body: { balance, reason: reason.body } };
}

export function parseRefill(
  body: unknown,
): Parsed<{ creditRefill: { amount: number; every: 'day' | 'month' } | null }> {
  const amountText = field(body, 'amount');
  const every = field(body, 'every');
  if (amountText === '' && every === '') return { body: { creditRefill: null } };
  const amount = wholeNumber(amountText);
  if (!(amount >= 1) || (every !== 'day' && every !== 'month')) return { error: BILLING_ERRORS.refill };
  return { body: { creditRefill: { amount, every } } };
}

/** `cost-<operationId>` fields for the operations shown; the "plan's costs" button (`reset`) sends null. */
export function parseCosts(
  body: unknown,
  operations: readonly string[],
): Parsed<{ costs: Record<string, number> | null }> {
  if (field(body, 'reset') !== '') return { body: { costs: null } };
  const costs: Record<string, number> = {};
  for (const operation of operations) {
    const cost = wholeNumber(field(body, `cost-${operation}`));
    if (!(cost >= 0 && cost <= 1_000_000)) return { error: BILLING_ERRORS.costs };
    costs[operation] = cost;
  }
  return { body: { costs } };
}

/** The most thresholds a consumer may have (docs/alerts.md, "Per consumer"; the admin API's rule). */
const MAX_THRESHOLDS = 5;

/**
 * The consumer's own alert thresholds: "50, 90, 100" and a low balance; a field left empty is its plan's (left out of
 * the body), both empty: null (its plan's for both).
 */
export function parseAlerts(body: unknown): Parsed<{ alerts: AdminAlertThresholds | null }> {
  const thresholdsText = field(body, 'thresholdsPercent');
  const lowText = field(body, 'creditsLowBalance');
  if (thresholdsText === '' && lowText === '') return { body: { alerts: null } };
  const alerts: AdminAlertThresholds = {};
  if (thresholdsText !== '') {
    const percents = thresholdsText
      .split(/[\s,;]+/)
      .filter(Boolean)
      .map(wholeNumber);
    const ascending = percents.every((p, i) => i === 0 || p > percents[i - 1]);
    if (percents.length > MAX_THRESHOLDS || !ascending || !percents.every((p) => p >= 1 && p <= 100))
      return { error: BILLING_ERRORS.thresholds };
    alerts.thresholdsPercent = percents;
  }
  if (lowText !== '') {
    const low = wholeNumber(lowText);
    if (!(low >= 0)) return { error: BILLING_ERRORS.lowBalance };
    alerts.creditsLowBalance = low;
  }
  return { body: { alerts } };
}

/** The consumer's own thresholds as the form shows them ("50, 90, 100"); '' for a side of its plan's. */
export function alertsText(alerts: AdminAlertThresholds | null): {
  thresholdsPercent: string;
  creditsLowBalance: string;
} {
  return {
    thresholdsPercent: alerts?.thresholdsPercent?.join(', ') ?? '',
    creditsLowBalance: alerts?.creditsLowBalance === undefined ? '' : String(alerts.creditsLowBalance),
  };
}

/** The form's fields as typed (strings), to show again beside a refusal. */
export function typedFields(body: unknown): Record<string, string> {
  const typed: Record<string, string> = {};
  for (const [name, value] of Object.entries((body as Record<string, unknown> | undefined) ?? {}))
    if (typeof value === 'string' && name !== '_csrf') typed[name] = value;
  return typed;
}
