import { ApiError } from '@app/errors';
import { Inject, Injectable } from '@nestjs/common';
import { Limits, PLAN_TABLE, PlanName, PlanTable } from './plans';

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

  check(plan: PlanName, limits: Limits | null): void {
    if (this.plans[plan] === 'custom' && limits === null) {
      throw new ApiError(
        'VALIDATION_FAILED',
        `The ${plan} plan needs the consumer's agreed limits (perMinute and perDay).`,
      );
    }
  }
}
