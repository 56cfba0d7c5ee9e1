import { Injectable, Logger } from '@nestjs/common';
import { Clock } from '../../clock';
import { billingPeriodAt } from '../../periods/billing-period';
import { consumerTracker } from '../../rate-limit/plan-throttlers';
import { RateLimitStore } from '../../rate-limit/rate-limit-store';
import { UsageHistoryService } from '../../usage/usage-history.service';
import { UsageService } from '../../usage/usage.service';
import type { BillingState } from '../billing.service';
import { MONTH_WINDOW } from '../../periods/month-window';

const HOUR_MS = 3_600_000;

/**
 * A monthly quota set mid-period counts what the period has already used (docs/billing.md, "A quota set
 * mid-period"): the month's counter is raised to the period's admitted requests in the usage history, so the month
 * never counts from the moment the quota was set. The history is hourly: the hour the period starts in counts when
 * the consumer was created in the period (none of its requests in that hour is older), else the period's first
 * whole hour opens the count (at most that hour of the previous period's tail is left out, never counted twice).
 */
@Injectable()
export class MonthQuotaCountService {
  private readonly logger = new Logger(MonthQuotaCountService.name);

  constructor(
    private readonly store: RateLimitStore,
    private readonly history: UsageHistoryService,
    private readonly usage: UsageService,
    private readonly clock: Clock,
  ) {}

  /** After a quota was set or changed: the month's count is at least what the period used. Answers that count. */
  async countPeriodSoFar(state: BillingState): Promise<number | undefined> {
    if (state.perMonth === null) return undefined;
    const { startMs, endMs } = state.currentPeriod;
    // This instance's answers not written yet (USAGE_FLUSH_MS): written first, so that they are in the history.
    await this.usage.flush();
    const from =
      state.createdAt.getTime() >= startMs ? startMs - (startMs % HOUR_MS) : Math.ceil(startMs / HOUR_MS) * HOUR_MS;
    const now = this.clock.now();
    const used =
      from >= now
        ? 0
        : (await this.history.history(state.consumer, { granularity: 'hour', from: new Date(from), to: new Date(now) }))
            // Admitted: every answer but the 429s (a request refused by a limit never counts in any window).
            .reduce((sum, hour) => sum + hour.requests - hour.rateLimited, 0);
    const window = {
      name: MONTH_WINDOW,
      limit: state.perMonth,
      ttlMs: endMs - startMs,
      period: { endMs, nextEndMs: billingPeriodAt(state.billingAnchor.getTime(), endMs).endMs },
    };
    try {
      return await this.store.raiseWindow(consumerTracker(state.consumer), window, used);
    } catch (error) {
      this.logger.warn(
        `The month of ${state.consumer} could not be raised to what its period used (${used}): ${(error as Error).message}; it counts from now`,
      );
      return undefined;
    }
  }
}
