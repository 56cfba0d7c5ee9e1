import type { CreditTerms } from '../plans/plan-limits';
import { Limits, PlanName } from '../plans/plans';
import type { ConsumerEntity } from './consumer.entity';

/** An authenticated caller, as the rest of the gateway sees it: never the key. */
export interface Consumer {
  name: string;
  plan: PlanName;
  limits: Limits;
  /** Unix ms where its billing months are cut (its anchor, else its creation time): docs/billing.md. */
  billingAnchorMs: number;
  /** Its prepaid credits' terms when they are in force (docs/billing.md), else undefined. */
  credits?: CreditTerms;
}

/** The consumer's own limits, or `null` when it has the plan's. */
export function limitsOf(consumer: ConsumerEntity): Limits | null {
  return consumer.limitPerMinute !== null && consumer.limitPerDay !== null
    ? { perMinute: consumer.limitPerMinute, perDay: consumer.limitPerDay }
    : null;
}
