import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { Clock } from '../clock';
import { GATEWAY_CONFIG, GatewayConfig } from '../config/gateway.config';
import type { Consumer } from '../consumers/consumer';
import {
  CountedWindow,
  crossesLevel,
  crossesShare,
  balanceBeforeSpend,
  ObservedDecision,
  windowPeriod,
} from './threshold-crossing';
import { ThresholdCandidate, ThresholdEvent, ThresholdEventsRepository } from './threshold-events.repository';
import { ThresholdMetrics } from './threshold-metrics';
import { ALERTED_WINDOWS, ThresholdPolicy } from './threshold-policy';

/** Most candidates held between two flushes (the database away): past it the oldest are dropped; a reconciliation finds them. */
const MAX_QUEUED = 10_000;

/**
 * Threshold events on the request path (docs/alerts.md): `observe` runs after every rate-limit decision, a few
 * comparisons, and queues a candidate only for a request that crossed a threshold (nothing allocated otherwise; it
 * never awaits and never throws into the request). The queue is written every ALERT_FLUSH_MS, off the request path,
 * and on shutdown; ThresholdEventsRepository makes each event once for the fleet.
 */
@Injectable()
export class ThresholdEvents implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('Alerts');
  private queue: ThresholdCandidate[] = [];
  private timer?: NodeJS.Timeout;
  private flushing?: Promise<void>;

  constructor(
    private readonly policy: ThresholdPolicy,
    private readonly repository: ThresholdEventsRepository,
    private readonly metrics: ThresholdMetrics,
    private readonly clock: Clock,
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
  ) {}

  /** After a decision for `consumer` at `nowMs`: queues the thresholds an admitted request crossed. */
  observe(consumer: Consumer, decision: ObservedDecision, nowMs: number): void {
    if (decision.outcome !== 'allowed' || !this.policy.enabled) return;
    try {
      const windows = decision.windows;
      for (let i = 0; i < windows.length; i += 1) {
        const window = windows[i];
        if (!ALERTED_WINDOWS.has(window.name)) continue;
        const shares = this.policy.windowShares(consumer);
        for (let j = 0; j < shares.length; j += 1)
          if (crossesShare(window.count - 1, window.count, window.limit, shares[j]))
            this.queueWindow(consumer, window, shares[j], nowMs);
      }
      const credits = decision.credits;
      if (credits !== undefined && credits.cost > 0) {
        const before = balanceBeforeSpend(credits);
        const levels = this.policy.creditLevels(consumer);
        for (let j = 0; j < levels.length; j += 1)
          if (crossesLevel(before, credits.balance, levels[j]))
            this.queue.push({
              consumer: consumer.name,
              policy: 'credits',
              threshold: levels[j],
              periodStartMs: 0,
              periodEndMs: 0,
              limit: null,
              used: null,
              balance: credits.balance,
              crossedAtMs: nowMs,
              source: 'request',
            });
      }
      if (this.queue.length > MAX_QUEUED) this.queue.splice(0, this.queue.length - MAX_QUEUED);
    } catch (error) {
      this.logger.error(`Threshold check failed (the request goes on): ${(error as Error).message}`);
    }
  }

  private queueWindow(consumer: Consumer, window: CountedWindow, share: number, nowMs: number): void {
    const period = windowPeriod(window, nowMs, consumer);
    this.queue.push({
      consumer: consumer.name,
      policy: window.name as 'day' | 'month',
      threshold: Math.round(share * 100),
      periodStartMs: period.startMs,
      periodEndMs: period.endMs,
      limit: window.limit,
      used: window.count,
      balance: null,
      crossedAtMs: nowMs,
      source: 'request',
    });
  }

  /** Writes one candidate (a request's or a reconciliation's): the event when this call wrote it, else null. */
  async write(candidate: ThresholdCandidate): Promise<ThresholdEvent | null> {
    const written = await this.repository.record(candidate, this.clock.now());
    if (typeof written === 'string') return null;
    this.metrics.generatedOne(written.type, candidate.source);
    return written;
  }

  /** Writes what is queued, one at a time; what the database refused is kept for the next flush. */
  flush(): Promise<void> {
    this.flushing ??= this.flushOnce().finally(() => (this.flushing = undefined));
    return this.flushing;
  }

  private async flushOnce(): Promise<void> {
    const batch = this.queue;
    this.queue = [];
    for (let i = 0; i < batch.length; i += 1) {
      try {
        await this.write(batch[i]);
      } catch (error) {
        this.metrics.writeFailed();
        this.logger.warn(
          `${batch.length - i} threshold event(s) not written, kept for the next flush: ${(error as Error).message}`,
        );
        this.queue.unshift(...batch.slice(i));
        return;
      }
    }
  }

  onApplicationBootstrap(): void {
    if (!this.policy.enabled) return;
    this.timer = setInterval(() => void this.flush(), this.config.alerts.flushMs);
    this.timer.unref();
  }

  /** The last candidates, after the server stopped taking requests and before the database closes. */
  async onApplicationShutdown(): Promise<void> {
    clearInterval(this.timer);
    await this.flushing;
    await this.flush();
  }
}
