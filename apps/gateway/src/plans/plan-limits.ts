import { ApiError } from '@app/errors';
import { Inject, Injectable } from '@nestjs/common';
import { Limits, PLAN_TABLE, PlanName, PlanTable } from './plans';

/** The plan rules, once, for the data plane, the admin API and the import alike. */
@Injectable()
export class PlanLimits {
  constructor(@Inject(PLAN_TABLE) private readonly plans: PlanTable) {}

  /** The limits a consumer is held to: its own, else its plan's; undefined when neither exists. */
  effective(consumer: { plan: PlanName; limits: Limits | null }): Limits | undefined {
    const plan = this.plans[consumer.plan];
    return consumer.limits ?? (plan === 'custom' ? undefined : plan);
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
