import { ApiError } from '@app/errors';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { Clock } from '../../clock';
import { GATEWAY_CONFIG, GatewayConfig } from '../../config/gateway.config';
import { AdminActor, AdminRequestContext } from '../../access/admin-context';
import { AuditLog } from '../../access/audit-log';
import { ConsumerChanges } from '../consumer-changes';
import { limitsOf, recutPeriodOf } from '../consumer';
import { ConsumersService } from '../consumers.service';
import { PlanLimits } from '../../plans/plan-limits';
import { consumerTracker, consumerWindows } from '../../rate-limit/plan-throttlers';
import { RateLimitStore, RateLimitUnavailableError } from '../../rate-limit/rate-limit-store';
import { UsageResponse } from './dto/consumer.response';

export const BAN_STORE_UNAVAILABLE_MESSAGE =
  'The rate-limit store (Redis) is unreachable, and the ban lives there: retry shortly.';

/**
 * A consumer's rate limits as the gateway counts them: its current windows and ban, read from the rate-limit
 * store (never counted twice), and lifting a ban.
 */
@Injectable()
export class ConsumerRateLimitService {
  private readonly logger = new Logger('RateLimit');

  constructor(
    private readonly consumers: ConsumersService,
    private readonly planLimits: PlanLimits,
    private readonly counters: RateLimitStore,
    private readonly changes: ConsumerChanges,
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
    private readonly audit: AuditLog,
    private readonly clock: Clock,
  ) {}

  async usage(actor: AdminActor, name: string): Promise<UsageResponse> {
    const { consumer } = await this.consumers.get(actor, name);
    const limits = this.planLimits.effective({
      plan: consumer.plan,
      limits: limitsOf(consumer),
      perMonth: consumer.limitPerMonth,
    });
    if (!limits) throw new ApiError('VALIDATION_FAILED', `Consumer "${name}" has no limits to measure against.`);
    const billingAnchorMs = (consumer.billingAnchor ?? consumer.createdAt).getTime();
    const windows = consumerWindows(
      { name: consumer.name, plan: consumer.plan, limits, billingAnchorMs, recutPeriod: recutPeriodOf(consumer) },
      this.config,
      this.clock.now(),
    );
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

  /**
   * Lifts the consumer's ban and forgets its strikes, in the shared counters (Redis) and on every instance (a
   * published change: each forgets what it holds itself); its windows keep counting. Then its usage. 503 while
   * Redis cannot be reached: the ban lives there.
   */
  async unban(context: AdminRequestContext, name: string): Promise<UsageResponse> {
    await this.consumers.get(context.actor, name);
    try {
      await this.counters.unban(consumerTracker(name));
    } catch (error) {
      if (!(error instanceof RateLimitUnavailableError)) throw error;
      throw new ApiError('SERVICE_UNAVAILABLE', BAN_STORE_UNAVAILABLE_MESSAGE, {
        'Retry-After': String(Math.ceil(error.retryAfterMs / 1000)),
      });
    }
    // The ban lives in Redis, not in this database: its audit row follows the unban (no transaction spans both).
    await this.audit.recordAlone(context, { action: 'consumer.unban', targetConsumer: name });
    await this.changes.publish({ keyHashes: [], consumerIds: [], unbanned: [name] });
    this.logger.warn(`Unbanned: consumer:${name} (admin API)`);
    return this.usage(context.actor, name);
  }
}
