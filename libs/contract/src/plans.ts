/** The plans the contract sells (spec 8.2); their limits are the gateway's configuration (gateway/plans.json). */
export const PLAN_NAMES = ['free', 'pro', 'business', 'enterprise'] as const;
export type PlanName = (typeof PLAN_NAMES)[number];
