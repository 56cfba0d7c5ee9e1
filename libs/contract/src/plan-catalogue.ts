import { readFileSync } from 'node:fs';
import { PLAN_NAMES, type PlanName } from './plans';

/** The public operations a cost may be set for (the gateway's /v1 operationIds). */
export const PUBLIC_OPERATION_IDS = ['listPets', 'createPet', 'getPet'] as const;
export type PublicOperationId = (typeof PUBLIC_OPERATION_IDS)[number];

/** A credit refill (docs/billing.md): the balance is topped up to `amount` at each UTC day, or billing month. */
export interface CreditRefill {
  amount: number;
  every: 'day' | 'month';
}

/** Credits per operation; an operation not listed costs 1. */
export type OperationCosts = Partial<Record<PublicOperationId, number>>;

/** The largest refill or top-up, and the largest cost of one operation (the admin API's bounds). */
export const CREDIT_AMOUNT_MAX = 1_000_000_000;
export const OPERATION_COST_MAX = 1_000_000;

/** A plan's limits as gateway/plans.json states them (`perMonth` only where the file sets one). */
export interface PlanLimits {
  perMinute: number;
  perDay: number;
  perMonth?: number;
  /** Prepaid credits with a refill, in force for every consumer of the plan. */
  credits?: { refill: CreditRefill };
  /** Cost per operation (default 1 each). */
  costs?: OperationCosts;
}

/** A refill as plans.json or an import states it, or an Error message. */
export function parseCreditRefill(raw: unknown): CreditRefill | string {
  const refill = raw as Partial<CreditRefill> | null;
  if (
    typeof refill !== 'object' ||
    refill === null ||
    !positive(refill.amount) ||
    refill.amount > CREDIT_AMOUNT_MAX ||
    (refill.every !== 'day' && refill.every !== 'month')
  )
    return `a refill must be {"amount": 1..${CREDIT_AMOUNT_MAX}, "every": "day" | "month"}`;
  return { amount: refill.amount, every: refill.every };
}

/** Costs as plans.json or an import states them, or an Error message. */
export function parseOperationCosts(raw: unknown): OperationCosts | string {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return 'costs must be an object';
  const costs: OperationCosts = {};
  for (const [operation, cost] of Object.entries(raw)) {
    if (!(PUBLIC_OPERATION_IDS as readonly string[]).includes(operation))
      return `costs: unknown operation "${operation}" (one of ${PUBLIC_OPERATION_IDS.join(', ')})`;
    if (!Number.isSafeInteger(cost) || (cost as number) < 0 || (cost as number) > OPERATION_COST_MAX)
      return `costs.${operation} must be an integer from 0 to ${OPERATION_COST_MAX}`;
    costs[operation as PublicOperationId] = cost as number;
  }
  return costs;
}

/** The cost of every public operation: `own` over the plan's, else 1. */
export function effectiveCosts(plan: OperationCosts | undefined, own: OperationCosts | null | undefined) {
  const costs = {} as Record<PublicOperationId, number>;
  for (const operation of PUBLIC_OPERATION_IDS) costs[operation] = own?.[operation] ?? plan?.[operation] ?? 1;
  return costs;
}

/** Every plan the contract sells, with its limits; 'custom': each consumer of the plan carries its own (Enterprise). */
export type PlanCatalogue = Record<PlanName, PlanLimits | 'custom'>;

/** Where the gateway reads its plans by default (PLANS_FILE): the web apps read the same file. */
export const DEFAULT_PLANS_FILE = 'gateway/plans.json';

const positive = (value: unknown): value is number => Number.isSafeInteger(value) && (value as number) > 0;

/**
 * gateway/plans.json as a catalogue: one entry per contract plan, or an Error naming the first wrong plan. Fields
 * this reader does not know are ignored (a new kind of limit never breaks a page that does not show it).
 */
export function parsePlanCatalogue(raw: unknown, source = DEFAULT_PLANS_FILE): PlanCatalogue {
  const plans = (raw as { plans?: Record<string, unknown> } | null)?.plans ?? {};
  const catalogue = {} as PlanCatalogue;
  for (const name of PLAN_NAMES) {
    const plan = plans[name] as Partial<PlanLimits> | 'custom' | undefined;
    if (plan === 'custom') {
      catalogue[name] = 'custom';
      continue;
    }
    if (typeof plan !== 'object' || plan === null || !positive(plan.perMinute) || !positive(plan.perDay))
      throw new Error(
        `${source}: plan "${name}" must be "custom" or {"perMinute": n, "perDay": n} (positive integers)`,
      );
    const credits = plan.credits === undefined ? undefined : parseCreditRefill(plan.credits?.refill);
    const costs = plan.costs === undefined ? undefined : parseOperationCosts(plan.costs);
    if (typeof credits === 'string' || typeof costs === 'string')
      throw new Error(`${source}: plan "${name}": ${typeof credits === 'string' ? `credits: ${credits}` : costs}`);
    catalogue[name] = {
      perMinute: plan.perMinute,
      perDay: plan.perDay,
      ...(positive(plan.perMonth) ? { perMonth: plan.perMonth } : {}),
      ...(credits ? { credits: { refill: credits } } : {}),
      ...(costs ? { costs } : {}),
    };
  }
  return catalogue;
}

/** Reads a plans file (PLANS_FILE) once, at start-up. */
export function readPlanCatalogue(file = DEFAULT_PLANS_FILE): PlanCatalogue {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new Error(`${file} cannot be read as JSON: ${(error as Error).message}`, { cause: error });
  }
  return parsePlanCatalogue(raw, file);
}

/** "Pro" for "pro": a plan's name as a page shows it. */
export function planTitle(name: string): string {
  return name === '' ? name : `${name[0].toUpperCase()}${name.slice(1)}`;
}

/** Limits in words, the one wording of both web apps: "300 a minute, 10,000 a day" (", 1,000,000 a month"). */
export function describeLimits(limits: PlanLimits | 'custom' | null | undefined): string {
  if (limits === 'custom' || limits === null || limits === undefined) return 'limits agreed with you';
  const n = (value: number) => value.toLocaleString('en-US');
  const parts = [`${n(limits.perMinute)} a minute`, `${n(limits.perDay)} a day`];
  if (limits.perMonth !== undefined) parts.push(`${n(limits.perMonth)} a month`);
  return parts.join(', ');
}
