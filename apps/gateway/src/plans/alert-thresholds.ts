import type { PlanAlerts } from './plans';

/**
 * Threshold settings as a plan (`alerts` in gateway/plans.json) or a consumer (its own, set through the billing
 * route) states them: whole percents of the day and month windows, the credit balance called low (docs/alerts.md).
 */
export type AlertSettings = PlanAlerts;

/** The most window thresholds a consumer of its own may have. */
export const CONSUMER_THRESHOLDS_MAX = 5;

/**
 * Thresholds as the request path compares them, worked out once from settings: the shares of a window (0.8 for
 * 80 %), ascending; the credit balance levels (the low balance, then 0: the balance spent), descending. A side the
 * settings leave out is absent (the next source's applies: the plan's, then the gateway's).
 */
export interface AlertThresholds {
  shares?: readonly number[];
  levels?: readonly number[];
}

/** Whole percents as shares, ascending, each once. */
export const sharesOf = (percents: readonly number[]): number[] =>
  [...new Set(percents)].sort((a, b) => a - b).map((percent) => percent / 100);

/** The balance levels a low balance makes: it and 0 (only 0 when the low balance is 0). */
export const levelsOf = (low: number): number[] => (low > 0 ? [low, 0] : [0]);

/** Settings as thresholds; undefined when they state neither side (nothing of their own). */
export function alertThresholdsOf(settings: AlertSettings | null | undefined): AlertThresholds | undefined {
  const percents = settings?.thresholdsPercent;
  const low = settings?.creditsLowBalance;
  if (percents == null && low == null) return undefined;
  return {
    ...(percents != null ? { shares: sharesOf(percents) } : {}),
    ...(low != null ? { levels: levelsOf(low) } : {}),
  };
}

/**
 * A consumer's own alert thresholds as stored: null when it states neither side ({} or null: back to its plan's);
 * its keys in jsonb's order (equal lengths: bytewise), so that an unchanged value compares equal to the stored one
 * (the audit's diff). The billing route's and the consumers file's.
 */
export function alertSettingsOf(body: AlertSettings | null): AlertSettings | null {
  if (body === null || (body.thresholdsPercent == null && body.creditsLowBalance == null)) return null;
  return {
    ...(body.creditsLowBalance != null ? { creditsLowBalance: body.creditsLowBalance } : {}),
    ...(body.thresholdsPercent != null ? { thresholdsPercent: body.thresholdsPercent } : {}),
  };
}
