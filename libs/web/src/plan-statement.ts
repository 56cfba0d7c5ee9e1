import { describeLimits, planTitle } from '@app/contract';
import type { AdminBilling, AdminConsumer } from './admin-api-types';

/** The plan a consumer is on and the limits it is held to, in the words every page of both apps uses. */
export interface PlanStatement {
  /** "Free", "Pro". */
  plan: string;
  /** "300 a minute, 10,000 a day", or "limits agreed with you". */
  limits: string;
}

/**
 * From the admin API's answer for the consumer (its effective limits: its own, else its plan's) and, where the page
 * read it, its billing answer's monthly quota in force (`perMonth`: its own, else its plan's; null: none).
 */
export function planStatement(
  consumer: Pick<AdminConsumer, 'plan' | 'effectiveLimits'>,
  billing?: Pick<AdminBilling, 'perMonth'> | null,
): PlanStatement {
  const limits = consumer.effectiveLimits;
  const perMonth = billing?.perMonth ?? undefined;
  return {
    plan: planTitle(consumer.plan),
    limits: describeLimits(limits && perMonth !== undefined ? { ...limits, perMonth } : limits),
  };
}

/** The injection token of the plan catalogue (PLANS_FILE, read by the app's config at start). */
export const PLAN_CATALOGUE = Symbol('PLAN_CATALOGUE');
