import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { LRUCache } from 'lru-cache';
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
/** Most (consumer, policy, threshold) kept in the memory of events known written: the least recently used leave. */
const MAX_KNOWN = 10_000;
/** Periods remembered per (consumer, policy, threshold): the current one, and a few before it. */
const PERIODS_KNOWN = 4;

/**
 * The window events an instance knows written, by consumer, policy and threshold: the starts of their periods.
 * A candidate is known when one of them lies within half its window's length of its own start, the repository's
 * rule for "the same period" (a rolling day window's start differs by milliseconds between decisions). The credits
 * are not kept here (their generation is the ledger's): the query finds them.
 */
class KnownEvents {
  private readonly starts: LRUCache<string, number[]>;

  constructor(max: number) {
    this.starts = new LRUCache({ max });
  }

  private static keyOf(candidate: ThresholdCandidate): string {
    return `${candidate.consumer}\n${candidate.policy}\n${candidate.threshold}`;
  }

  has(candidate: ThresholdCandidate): boolean {
    if (candidate.policy === 'credits') return false;
    const starts = this.starts.get(KnownEvents.keyOf(candidate));
    if (starts === undefined) return false;
    const half = (candidate.periodEndMs - candidate.periodStartMs) / 2;
    return starts.some((start) => Math.abs(start - candidate.periodStartMs) < half);
  }

  remember(candidate: ThresholdCandidate): void {
    if (candidate.policy === 'credits' || this.has(candidate)) return;
    const key = KnownEvents.keyOf(candidate);
    const starts = this.starts.get(key) ?? [];
    starts.push(candidate.periodStartMs);
    if (starts.length > PERIODS_KNOWN) starts.shift();
    this.starts.set(key, starts);
  }
}

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
  /** The events this instance knows written (it wrote them, or found them written): their candidates are dropped. */
  private readonly known = new KnownEvents(MAX_KNOWN);
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
    if (written === 'duplicate' || typeof written !== 'string') this.known.remember(candidate);
    if (typeof written === 'string') return null;
    this.metrics.generatedOne(written.type, candidate.source);
    return written;
  }

  /**
   * Writes candidates (a flush's, a reconciliation's), in order, after dropping those whose event is known written:
   * by this instance's memory of recent events, then by one query for the rest (a burst of duplicates, or a
   * reconciliation that finds every threshold already reached, costs no transaction each). Answers how many events
   * it wrote; throws at the first failure with `failedAt` (the index of the first candidate not written).
   */
  async writeAll(candidates: readonly ThresholdCandidate[]): Promise<number> {
    const unknown = candidates.filter((candidate) => !this.known.has(candidate));
    let found: Set<number>;
    try {
      found = unknown.length > 0 ? await this.repository.alreadyWritten(unknown) : new Set();
    } catch (error) {
      throw Object.assign(error as Error, { failedAt: 0 });
    }
    this.metrics.droppedKnown(candidates.length - unknown.length + found.size);
    let written = 0;
    for (let i = 0; i < unknown.length; i += 1) {
      const candidate = unknown[i];
      if (found.has(i)) {
        this.known.remember(candidate);
        continue;
      }
      // Written a moment ago by this very batch (the same crossing twice in one flush).
      if (this.known.has(candidate)) {
        this.metrics.droppedKnown(1);
        continue;
      }
      try {
        if (await this.write(candidate)) written += 1;
      } catch (error) {
        throw Object.assign(error as Error, { failedAt: candidates.indexOf(candidate) });
      }
    }
    return written;
  }

  /** Writes what is queued; from the first the database refused on, the candidates are kept for the next flush. */
  flush(): Promise<void> {
    this.flushing ??= this.flushOnce().finally(() => (this.flushing = undefined));
    return this.flushing;
  }

  private async flushOnce(): Promise<void> {
    const batch = this.queue;
    this.queue = [];
    if (batch.length === 0) return;
    try {
      await this.writeAll(batch);
    } catch (error) {
      const failedAt = (error as { failedAt?: number }).failedAt ?? 0;
      this.metrics.writeFailed();
      this.logger.warn(
        `${batch.length - failedAt} threshold event(s) not written, kept for the next flush: ${(error as Error).message}`,
      );
      this.queue.unshift(...batch.slice(failedAt));
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
