import { readFileSync } from 'node:fs';
import {
  PLAN_NAMES,
  parseCreditRefill,
  parseOperationCosts,
  type CreditRefill,
  type OperationCosts,
  type PlanName,
} from '@app/contract';
import { ConfigurationError } from '@app/platform';

/** The plan table's injection token (gateway/plans.json, read once at start). */
export const PLAN_TABLE = Symbol('PLAN_TABLE');

// The names are the contract's (libs/contract, shared with the operator console); the limits are configuration.
export { PLAN_NAMES, type PlanName };

export interface Limits {
  perMinute: number;
  perDay: number;
  /** Requests per billing month (docs/billing.md); unset: no monthly quota. */
  perMonth?: number;
}

/**
 * A plan's own thresholds for threshold events (docs/alerts.md), in place of the gateway's (ALERT_THRESHOLDS_PERCENT,
 * ALERT_CREDITS_LOW_BALANCE): whole percents of the day and month windows, the credit balance called low.
 */
export interface PlanAlerts {
  thresholdsPercent?: number[];
  creditsLowBalance?: number;
}

/** A plan's entry: its limits, and its credits (refill), costs and alert thresholds where plans.json declares them. */
export interface PlanEntry extends Limits {
  credits?: { refill: CreditRefill };
  costs?: OperationCosts;
  alerts?: PlanAlerts;
}

/** A plan's `alerts` as plans.json states it, or what is wrong with it. */
function parsePlanAlerts(value: unknown): PlanAlerts | string {
  const v = value as Record<string, unknown>;
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return 'alerts must be an object';
  const unknown = Object.keys(v).filter((key) => key !== 'thresholdsPercent' && key !== 'creditsLowBalance');
  if (unknown.length > 0) return `alerts: unknown field ${unknown[0]} (thresholdsPercent, creditsLowBalance)`;
  const percents = v.thresholdsPercent;
  if (
    percents !== undefined &&
    (!Array.isArray(percents) ||
      percents.length === 0 ||
      !percents.every((p) => Number.isSafeInteger(p) && (p as number) >= 1 && (p as number) <= 100))
  )
    return 'alerts.thresholdsPercent must be a non-empty list of whole percents from 1 to 100';
  const low = v.creditsLowBalance;
  if (low !== undefined && !(Number.isSafeInteger(low) && (low as number) >= 0))
    return 'alerts.creditsLowBalance must be a whole number of credits, 0 or more';
  return {
    ...(percents !== undefined ? { thresholdsPercent: percents as number[] } : {}),
    ...(low !== undefined ? { creditsLowBalance: low as number } : {}),
  };
}

/** Limits of each plan; `custom` means every consumer of the plan carries its own (Enterprise). */
export type PlanTable = Record<PlanName, PlanEntry | 'custom'>;

function isLimits(value: unknown): value is Limits {
  const v = value as Limits;
  return (
    typeof v === 'object' &&
    v !== null &&
    Number.isSafeInteger(v.perMinute) &&
    v.perMinute > 0 &&
    Number.isSafeInteger(v.perDay) &&
    v.perDay > 0 &&
    (v.perMonth === undefined || (Number.isSafeInteger(v.perMonth) && v.perMonth > 0))
  );
}

/** Reads gateway/plans.json once at start-up; a wrong file stops the gateway with one line. */
export function loadPlans(file: string): PlanTable {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new ConfigurationError(`PLANS_FILE ${file} cannot be read as JSON: ${(error as Error).message}`);
  }
  const plans = (raw as { plans?: Record<string, unknown> }).plans ?? {};
  const table = {} as PlanTable;
  for (const name of PLAN_NAMES) {
    const plan = plans[name];
    if (plan !== 'custom' && !isLimits(plan)) {
      throw new ConfigurationError(
        `PLANS_FILE ${file}: plan "${name}" must be "custom" or {"perMinute": n, "perDay": n, "perMonth"?: n} with positive integers`,
      );
    }
    if (plan === 'custom') {
      table[name] = plan;
      continue;
    }
    const entry = plan as PlanEntry;
    const refill = entry.credits === undefined ? undefined : parseCreditRefill(entry.credits?.refill);
    const costs = entry.costs === undefined ? undefined : parseOperationCosts(entry.costs);
    if (typeof refill === 'string' || typeof costs === 'string')
      throw new ConfigurationError(
        `PLANS_FILE ${file}: plan "${name}": ${typeof refill === 'string' ? `credits: ${refill}` : costs}`,
      );
    const alerts = entry.alerts === undefined ? undefined : parsePlanAlerts(entry.alerts);
    if (typeof alerts === 'string') throw new ConfigurationError(`PLANS_FILE ${file}: plan "${name}": ${alerts}`);
    table[name] = { ...entry, credits: refill && { refill }, costs, alerts };
  }
  return table;
}
