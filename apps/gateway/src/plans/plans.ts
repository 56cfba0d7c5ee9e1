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

/** A plan's entry: its limits, and its credits (refill) and costs where plans.json declares them. */
export interface PlanEntry extends Limits {
  credits?: { refill: CreditRefill };
  costs?: OperationCosts;
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
    table[name] = { ...entry, credits: refill && { refill }, costs };
  }
  return table;
}
