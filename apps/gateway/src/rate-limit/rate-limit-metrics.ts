import { Injectable } from '@nestjs/common';

type PlanCounts = Record<string, number>;

/** Counters of refusals, bans and store fallbacks, kept for a metrics endpoint to expose. */
@Injectable()
export class RateLimitMetrics {
  readonly limitedByPlan: PlanCounts = {};
  readonly bannedByPlan: PlanCounts = {};
  storeFallbacks = 0;
  storeDegraded = false;

  countLimited(plan: string): void {
    this.limitedByPlan[plan] = (this.limitedByPlan[plan] ?? 0) + 1;
  }

  countBanned(plan: string): void {
    this.bannedByPlan[plan] = (this.bannedByPlan[plan] ?? 0) + 1;
  }
}
