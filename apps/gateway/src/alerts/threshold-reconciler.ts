import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { Clock } from '../clock';
import { GATEWAY_CONFIG, GatewayConfig } from '../config/gateway.config';
import type { Consumer } from '../consumers/consumer';
import { CreditLedgerRepository } from '../credits/credit-ledger.repository';
import { utcDay } from '../credits/credit-spend';
import { currentBillingPeriod } from '../periods/billing-period';
import { CountedWindow, thresholdCount, windowPeriod } from './threshold-crossing';
import { ThresholdCandidate, ThresholdEventsRepository } from './threshold-events.repository';
import { FleetLeases } from './fleet-leases';
import { ThresholdEvents } from './threshold-events';
import { ThresholdMetrics } from './threshold-metrics';
import { ThresholdPolicy } from './threshold-policy';

const HOUR_MS = 3_600_000;
/** The lease one instance of the fleet holds to reconcile (FleetLeases). */
export const RECONCILIATION_LEASE = 'threshold-reconciliation';
const DAY_MS = 86_400_000;
/** Most consumers one reconciliation looks at (the most recently active are not favoured: name order). */
const MAX_CONSUMERS = 10_000;

/**
 * Where the usage history of the consumer's current month starts, as a quota set mid-period counts it
 * (docs/billing.md): from the hour the period starts in when the consumer was created in the period, else from its
 * first whole hour (nothing of the previous period). The counter is read beside it: a Redis that forgot restarted it.
 */
function monthFrom(consumer: Consumer, createdAtMs: number, now: number): number {
  const period = currentBillingPeriod(consumer.billingAnchorMs, consumer.recutPeriod, now);
  return createdAtMs >= period.startMs
    ? period.startMs - (period.startMs % HOUR_MS)
    : Math.ceil(period.startMs / HOUR_MS) * HOUR_MS;
}

/**
 * The consumers named, as the data plane sees them (the key lookup's mapping, consumers/consumer-record.ts), with
 * when each was created (ms); disabled ones and those without limits left out.
 */
export type ConsumerReader = (names: readonly string[]) => Promise<Array<{ consumer: Consumer; createdAtMs: number }>>;

/** A consumer's counters as the limits decide them (its windows' counts now), read without counting. */
export type CounterReader = (consumer: Consumer, nowMs: number) => Promise<readonly CountedWindow[]>;

/**
 * Never missed (docs/alerts.md, "Reconciliation"): every ALERT_RECONCILE_MS each instance recomputes, for the
 * consumers active lately (usage history of the last two hours, credit spend since yesterday), what their current
 * periods have used (the day window: the shared counters; the month: the larger of the counters and the usage
 * history; the credits: the ledger's balance) and writes any threshold reached whose event is missing: the crossing
 * request's instance died before its flush, or its write failed. The writes go through the same repository as the
 * request path's, so a reconciliation racing a flush (or another instance's reconciliation) writes nothing twice, and
 * nothing for a period already over.
 */
@Injectable()
export class ThresholdReconciler implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('Alerts');
  private readCounters?: CounterReader;
  private readConsumers?: ConsumerReader;
  private timer?: NodeJS.Timeout;
  private running?: Promise<number>;
  /** The periodic run in progress (the lease, then the reconciliation). */
  private periodic?: Promise<void>;

  constructor(
    private readonly repository: ThresholdEventsRepository,
    private readonly events: ThresholdEvents,
    private readonly policy: ThresholdPolicy,
    private readonly ledger: CreditLedgerRepository,
    private readonly clock: Clock,
    private readonly leases: FleetLeases,
    private readonly metrics: ThresholdMetrics,
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
  ) {}

  /** How to read a consumer's counters: set by the rate-limit room, which owns the store. */
  readCountersWith(reader: CounterReader): void {
    this.readCounters = reader;
  }

  /**
   * How to read consumers: given by the composition root (ReconciledConsumersModule), as the consumers' mapping
   * stands in a room this one may not import (consumers/admin imports the limits, which import this room).
   */
  readConsumersWith(reader: ConsumerReader): void {
    this.readConsumers = reader;
  }

  /** One reconciliation (one at a time on this instance): answers how many events it wrote. */
  reconcile(): Promise<number> {
    this.running ??= this.reconcileOnce().finally(() => (this.running = undefined));
    return this.running;
  }

  private async reconcileOnce(): Promise<number> {
    const now = this.clock.now();
    const names = await this.repository.recentConsumers(now - 2 * HOUR_MS, utcDay(now - DAY_MS), MAX_CONSUMERS);
    if (this.readConsumers === undefined) throw new Error('No reader of consumers was given');
    const consumers = await this.readConsumers(names);
    // One query bounds every month from above (the history since the earliest month's start): a consumer below its
    // lowest threshold there costs no query of its own, so reconciling 10,000 quiet consumers is a few queries.
    const monthly = consumers.filter(({ consumer }) => consumer.limits.perMonth !== undefined);
    const earliest = Math.min(...monthly.map(({ consumer, createdAtMs }) => monthFrom(consumer, createdAtMs, now)));
    const monthBound =
      monthly.length > 0
        ? await this.repository.usedSinceByConsumer(
            monthly.map(({ consumer }) => consumer.name),
            earliest,
          )
        : new Map<string, number>();
    // Every candidate first, then one batch: those whose event is known written (most, run after run) cost no write.
    const candidates: ThresholdCandidate[] = [];
    for (const { consumer, createdAtMs } of consumers) {
      const monthMayBeReached = this.mayReach(consumer, monthBound.get(consumer.name) ?? 0);
      candidates.push(...(await this.candidatesOf(consumer, createdAtMs, this.clock.now(), monthMayBeReached)));
    }
    return this.events.writeAll(candidates);
  }

  /** Every threshold the consumer's current periods have reached (the repository drops those already written). */
  /** Whether the history bound `used` reaches the consumer's lowest month threshold (the counter may still do). */
  private mayReach(consumer: Consumer, used: number): boolean {
    const perMonth = consumer.limits.perMonth;
    if (perMonth === undefined) return false;
    return this.policy.windowShares(consumer).some((share) => used >= thresholdCount(perMonth, share));
  }

  private async candidatesOf(
    consumer: Consumer,
    createdAtMs: number,
    now: number,
    monthMayBeReached: boolean,
  ): Promise<ThresholdCandidate[]> {
    const candidates: ThresholdCandidate[] = [];
    const shares = this.policy.windowShares(consumer);
    const counters = await this.counters(consumer, now);
    const reached = (policy: 'day' | 'month', used: number, limit: number, startMs: number, endMs: number) => {
      for (const share of shares)
        if (used >= thresholdCount(limit, share))
          candidates.push({
            consumer: consumer.name,
            policy,
            threshold: Math.round(share * 100),
            periodStartMs: startMs,
            periodEndMs: endMs,
            limit,
            used,
            balance: null,
            crossedAtMs: now,
            source: 'reconciler',
          });
    };
    const day = counters.find((window) => window.name === 'day');
    if (day && day.count > 0) {
      const period = windowPeriod(day, now);
      reached('day', day.count, day.limit, period.startMs, period.endMs);
    }
    const perMonth = consumer.limits.perMonth;
    if (perMonth !== undefined) {
      const period = currentBillingPeriod(consumer.billingAnchorMs, consumer.recutPeriod, now);
      const from = monthFrom(consumer, createdAtMs, now);
      const history = monthMayBeReached ? await this.repository.usedSince(consumer.name, from) : 0;
      const counted = counters.find((window) => window.name === 'month')?.count ?? 0;
      reached('month', Math.max(history, counted), perMonth, period.startMs, period.endMs);
    }
    if (consumer.credits !== undefined) {
      const { balance } = await this.ledger.totals(consumer.name);
      for (const level of this.policy.creditLevels(consumer))
        if (balance <= level)
          candidates.push({
            consumer: consumer.name,
            policy: 'credits',
            threshold: level,
            periodStartMs: 0,
            periodEndMs: 0,
            limit: null,
            used: null,
            balance: Math.max(0, balance),
            crossedAtMs: now,
            source: 'reconciler',
          });
    }
    return candidates;
  }

  private async counters(consumer: Consumer, now: number): Promise<readonly CountedWindow[]> {
    if (this.readCounters === undefined) return [];
    try {
      return await this.readCounters(consumer, now);
    } catch (error) {
      this.logger.warn(`Counters of ${consumer.name} not read for reconciliation: ${(error as Error).message}`);
      return [];
    }
  }

  /**
   * The periodic run: only the instance holding the fleet's reconciliation lease reconciles (docs/alerts.md). The
   * lease lasts two intervals and its holder renews it at each of its runs, so it keeps it while it lives; when it
   * dies, another instance takes it over at its first run after the lease expired.
   */
  async reconcileIfHolder(): Promise<void> {
    try {
      if (!(await this.leases.acquire(RECONCILIATION_LEASE, 2 * this.config.alerts.reconcileMs))) {
        this.metrics.reconciliation('skipped');
        return;
      }
      this.metrics.reconciliation('ran');
      await this.reconcile();
    } catch (error) {
      this.metrics.reconciliation('failed');
      this.logger.warn(`Reconciliation failed: ${(error as Error).message}`);
    }
  }

  /** First within one interval of the start (a random delay: instances started together do not all try at once). */
  onApplicationBootstrap(): void {
    if (!this.policy.enabled) return;
    const every = this.config.alerts.reconcileMs;
    const run = () => {
      this.periodic ??= this.reconcileIfHolder().finally(() => (this.periodic = undefined));
    };
    this.timer = setTimeout(() => {
      run();
      this.timer = setInterval(run, every);
      this.timer.unref();
    }, Math.random() * every);
    this.timer.unref();
  }

  /** Stops, and hands the lease over at once (a graceful stop; a dead instance's lease expires). */
  async onApplicationShutdown(): Promise<void> {
    clearTimeout(this.timer);
    clearInterval(this.timer);
    await this.periodic;
    await this.running?.catch(() => undefined);
    if (this.policy.enabled)
      await this.leases
        .release(RECONCILIATION_LEASE)
        .catch((error: Error) => this.logger.warn(`Reconciliation lease not released: ${error.message}`));
  }
}
