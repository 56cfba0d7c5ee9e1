import { ApiError } from '@app/errors';
import { Inject, Injectable } from '@nestjs/common';
import { CreditRefill, effectiveCosts, OperationCosts, PublicOperationId } from '@app/contract';
import { Limits, PLAN_TABLE, PlanName, PlanTable } from './plans';

/** A consumer's credit terms in force (docs/billing.md): its refill (own, else its plan's) and every operation's cost. */
export interface CreditTerms {
  refill: CreditRefill | null;
  /** Whether `refill` is the consumer's own (false: its plan's, or none). */
  refillSet: boolean;
  costs: Record<PublicOperationId, number>;
}

/** What the credit rules read of a consumer: its own settings (null: the plan's). */
export interface ConsumerCreditSettings {
  plan: PlanName;
  /** true: in force (a top-up did it); false: switched off; null: as its plan says. */
  creditsEnabled: boolean | null;
  creditRefill: CreditRefill | null;
  costs: OperationCosts | null;
}

/** The plan rules, once, for the data plane, the admin API and the import alike. */
@Injectable()
export class PlanLimits {
  constructor(@Inject(PLAN_TABLE) private readonly plans: PlanTable) {}

  /**
   * The limits a consumer is held to: its own per-minute and per-day limits, else its plan's; undefined when
   * neither exists. The monthly quota is the consumer's own (`perMonth`, agreed individually) when it has one,
   * else its plan's (which own per-minute and per-day limits do not remove), else none.
   */
  effective(consumer: { plan: PlanName; limits: Limits | null; perMonth?: number | null }): Limits | undefined {
    const plan = this.plans[consumer.plan];
    const limits = consumer.limits ?? (plan === 'custom' ? undefined : plan);
    if (limits === undefined) return undefined;
    const perMonth = consumer.perMonth ?? limits.perMonth ?? (plan === 'custom' ? undefined : plan.perMonth);
    if (perMonth === limits.perMonth) return limits;
    return { perMinute: limits.perMinute, perDay: limits.perDay, perMonth };
  }

  /** The consumer's credit terms, or undefined when credits are not in force for it. */
  credits(consumer: ConsumerCreditSettings): CreditTerms | undefined {
    const plan = this.plans[consumer.plan];
    const entry = plan === 'custom' ? undefined : plan;
    if (!(consumer.creditsEnabled ?? entry?.credits !== undefined)) return undefined;
    return {
      refill: consumer.creditRefill ?? entry?.credits?.refill ?? null,
      refillSet: consumer.creditRefill !== null,
      costs: effectiveCosts(entry?.costs, consumer.costs),
    };
  }

  /** Every operation's cost for a consumer (its own over its plan's, else 1), whether or not credits are in force. */
  costs(consumer: Pick<ConsumerCreditSettings, 'plan' | 'costs'>): Record<PublicOperationId, number> {
    const plan = this.plans[consumer.plan];
    return effectiveCosts(plan === 'custom' ? undefined : plan.costs, consumer.costs);
  }

  check(plan: PlanName, limits: Limits | null): void {
    if (this.plans[plan] === 'custom' && limits === null) {
      throw new ApiError(
        'VALIDATION_FAILED',
        `The ${plan} plan needs the consumer's agreed limits (perMinute and perDay).`,
      );
    }
  }
}
