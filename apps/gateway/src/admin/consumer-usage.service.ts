import { ApiError } from '@app/errors';
import { Inject, Injectable } from '@nestjs/common';
import { GATEWAY_CONFIG, GatewayConfig } from '../config/gateway.config';
import { ConsumerRepository, limitsOf } from '../consumers/consumer.repository';
import { PlanLimits } from '../plans/plan-limits';
import { consumerTracker, consumerWindows } from '../rate-limit/plan-throttlers';
import { RateLimitStore } from '../rate-limit/rate-limit-store';
import { UsageResponse } from './dto/consumer.response';

/** A consumer's current windows and ban, read from the rate-limit store the gateway counts in (never counted twice). */
@Injectable()
export class ConsumerUsageService {
  constructor(
    private readonly store: ConsumerRepository,
    private readonly planLimits: PlanLimits,
    private readonly counters: RateLimitStore,
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
  ) {}

  async usage(name: string): Promise<UsageResponse> {
    const { consumer } = await this.store.get(name);
    const limits = this.planLimits.effective({ plan: consumer.plan, limits: limitsOf(consumer) });
    if (!limits) throw new ApiError('VALIDATION_FAILED', `Consumer "${name}" has no limits to measure against.`);
    const windows = consumerWindows({ name: consumer.name, plan: consumer.plan, limits }, this.config);
    const usage = await this.counters.usage(consumerTracker(consumer.name), windows);
    return {
      consumer: consumer.name,
      plan: consumer.plan,
      windows: usage.windows.map((w) => ({
        name: w.name,
        limit: w.limit,
        used: w.count,
        remaining: Math.max(0, w.limit - w.count),
        resetSeconds: Math.ceil(w.resetMs / 1000),
      })),
      banned: usage.bannedForMs > 0,
      banSecondsLeft: usage.bannedForMs > 0 ? Math.ceil(usage.bannedForMs / 1000) : null,
    };
  }
}
