import { ApiError } from '@app/errors';
import { Injectable } from '@nestjs/common';
import { RateLimitStore } from '../../rate-limit/rate-limit-store';
import { RateLimiter } from '../../rate-limit/rate-limiter.service';
import { ConsumerStore, limitsOf } from '../consumer-store.service';
import { UsageResponse } from './dto/consumer.response';

/** A consumer's current windows and ban, read from the rate-limit store the gateway counts in (never counted twice). */
@Injectable()
export class ConsumerUsageService {
  constructor(
    private readonly store: ConsumerStore,
    private readonly limiter: RateLimiter,
    private readonly counters: RateLimitStore,
  ) {}

  async usage(name: string): Promise<UsageResponse> {
    const { consumer } = await this.store.get(name);
    const limits = this.store.effectiveLimits({ plan: consumer.plan, limits: limitsOf(consumer) });
    if (!limits) throw new ApiError('VALIDATION_FAILED', `Consumer "${name}" has no limits to measure against.`);
    const subject = this.limiter.forConsumer({ name: consumer.name, plan: consumer.plan, limits });
    const usage = await this.counters.usage(subject.tracker, subject.windows);
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
