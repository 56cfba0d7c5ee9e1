import { readFileSync } from 'node:fs';
import { PLAN_NAMES, type PlanName } from './plans';

/** A plan's limits as gateway/plans.json states them (`perMonth` only where the file sets one). */
export interface PlanLimits {
  perMinute: number;
  perDay: number;
  perMonth?: number;
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
    catalogue[name] = {
      perMinute: plan.perMinute,
      perDay: plan.perDay,
      ...(positive(plan.perMonth) ? { perMonth: plan.perMonth } : {}),
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
