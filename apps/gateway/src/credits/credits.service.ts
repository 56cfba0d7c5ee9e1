import { randomUUID } from 'node:crypto';
import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import type { PublicOperationId } from '@app/contract';
import type { EntityManager } from 'typeorm';
import { Clock } from '../clock';
import { GATEWAY_CONFIG, GatewayConfig } from '../config/gateway.config';
import type { Consumer } from '../consumers/consumer';
import type { CreditTerms } from '../plans/plan-limits';
import type { CreditSeed, CreditSpec, CreditState } from './credit-decision';
import { CreditFlushRequests } from './credit-flush-requests';
import { CreditLedgerRepository, LedgerEntry, NewLedgerEntry } from './credit-ledger.repository';
import { CreditSpendRecorder, utcDay } from './credit-spend';
import { RefillPeriod, refillPeriodAt } from './refill-period';

/** Who the ledger says applied a refill. */
export const REFILL_ACTOR = 'gateway';

interface CachedRefill extends RefillPeriod {
  every: string;
  anchorMs: number;
}

/** Between two looks at which instances still have to acknowledge a rebuild's barrier. */
const ACK_POLL_MS = 20;

const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** The refill period once per consumer and period, not per request: consumers are cached objects. */
const refillPeriods = new WeakMap<Consumer, CachedRefill>();

/**
 * Prepaid credits on the request path (docs/billing.md): what a request costs and which refill is due (the
 * CreditSpec the rate-limit store decides with the windows, in the same call), the spend of admitted requests
 * (held in memory, flushed into credit_spend_daily with the usage history's interval and on shutdown), the
 * refill rows of the ledger, and the balance rebuilt from the ledger for a store that has none: once per consumer
 * on this instance however many requests find it missing, and, with shared counters, only after every live
 * instance has written the spend it held (the rebuild's barrier, acknowledged in the same transaction as the spend).
 */
@Injectable()
export class CreditsService implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('Credits');
  readonly spend = new CreditSpendRecorder();
  /** This process among the instances that hold spend (credit_spend_holder). */
  readonly instanceId = randomUUID();
  private flushTimer?: NodeJS.Timeout;
  private flushing?: Promise<void>;
  /**
   * Flushes and the readers of recorded + pending spend take turns: a read during a flush could count the rows it
   * writes twice (recorded, and still pending) or not at all.
   */
  private turn: Promise<unknown> = Promise.resolve();
  /** The last rebuild barrier this instance's written spend covers. */
  private ackedBarrier = 0;
  private readonly rebuilding = new Map<string, Promise<CreditSeed>>();
  /** Resolves once every decision the counter store has answered is in `spend` (see settleDecisionsWith). */
  private settleDecisions: () => Promise<void> = nextTurn;

  constructor(
    private readonly ledger: CreditLedgerRepository,
    private readonly clock: Clock,
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
    private readonly flushRequests: CreditFlushRequests,
  ) {
    flushRequests.onRequest((barrier) => void this.flushThrough(barrier).catch(() => undefined));
  }

  /**
   * How to wait until the counter store's answers already on their way are in `spend` (the rate-limit store's
   * round trip on its own connection): a flush that acknowledges a barrier must hold every spend decided before
   * the store was lost, including a reply still in the socket. Set by the rate-limit module, which owns the store.
   */
  settleDecisionsWith(settle: () => Promise<void>): void {
    this.settleDecisions = async () => {
      await settle();
      await nextTurn();
    };
  }

  /** How long an instance not heard from still counts as alive (its spend is waited for). */
  private get liveMs(): number {
    return Math.max(3 * this.config.usage.flushMs, 15_000);
  }

  /** How long a rebuild waits for live instances to acknowledge before it fences the silent ones. */
  private get ackTimeoutMs(): number {
    return 2 * this.config.usage.flushMs + 1_000;
  }

  /** The request's credits, or undefined when none are in force for the consumer. */
  specOf(consumer: Consumer, operationId: string | undefined, nowMs: number): CreditSpec | undefined {
    const terms = consumer.credits;
    if (terms === undefined) return undefined;
    const cost = operationId === undefined ? 1 : (terms.costs[operationId as PublicOperationId] ?? 1);
    const name = consumer.name;
    const spec: CreditSpec = { cost, rebuild: () => this.rebuild(name) };
    if (terms.refill) {
      const period = this.refillPeriodOf(consumer, terms, nowMs);
      spec.refill = {
        amount: terms.refill.amount,
        periodStartMs: period.startMs,
        periodMs: period.endMs - period.startMs,
        waitMs: period.endMs - nowMs,
      };
    }
    return spec;
  }

  /**
   * After a decision with credits: the refill it applied into the ledger, the cost of an admitted request as spend.
   * Answers the credits the request spent (0 when refused), for the usage history's per-minute rows.
   */
  afterDecision(consumer: string, admitted: boolean, credits: CreditState, nowMs: number): number {
    const spent = admitted ? credits.cost : 0;
    if (spent > 0) this.spend.add(consumer, spent, nowMs);
    const refilled = credits.refilled;
    if (refilled) {
      this.ledger
        .insertRefill({
          consumer,
          at: new Date(nowMs),
          kind: 'refill',
          amount: refilled.amount,
          balanceAfter: refilled.balanceAfter,
          reason: null,
          actor: REFILL_ACTOR,
          periodStart: new Date(refilled.periodStartMs),
        })
        .catch((error: Error) =>
          this.logger.error(`Refill of ${consumer} not written to the ledger: ${error.message}`),
        );
    }
    return spent;
  }

  /**
   * The balance for a store that holds none: the ledger's sum less the spend recorded once every live instance
   * has written what it held (with shared counters), less this instance's spend not yet flushed; never below 0.
   * The last refilled period comes with it, so the refill is not applied twice. Concurrent calls for one consumer
   * share one rebuild (one set of queries, not one per request).
   */
  rebuild(consumer: string): Promise<CreditSeed> {
    let pending = this.rebuilding.get(consumer);
    if (pending === undefined) {
      pending = this.rebuildOnce(consumer).finally(() => this.rebuilding.delete(consumer));
      this.rebuilding.set(consumer, pending);
    }
    return pending;
  }

  private async rebuildOnce(consumer: string): Promise<CreditSeed> {
    const barrier = await this.ledger.openRebuild(consumer, this.instanceId);
    let fenced = 0;
    if (this.flushRequests.fleetWide) {
      void this.flushRequests.request(barrier);
      await this.flushThrough(barrier);
      fenced = await this.awaitAcknowledgements(barrier);
    } else {
      await this.flushThrough(barrier);
    }
    const { totals, pending } = await this.inTurn(async () => ({
      totals: await this.ledger.totals(consumer),
      pending: this.spend.pending(consumer),
    }));
    if (totals.balance < 0)
      this.logger.error(`Credit ledger of ${consumer} spends more than it credits (${totals.balance}): rebuilt at 0`);
    const balance = Math.max(0, totals.balance - pending);
    await this.ledger.closeRebuild(barrier, balance, fenced);
    this.logger.warn(`Credit balance of ${consumer} rebuilt from the ledger: ${balance} (barrier ${barrier})`);
    return { balance, refilledPeriodStartMs: totals.refilledPeriodStartMs };
  }

  /**
   * Waits until every live instance has acknowledged `barrier`; past the bound, fences those still silent (their
   * held spend will not be recorded: the customer's favour). Answers how many were fenced.
   */
  private async awaitAcknowledgements(barrier: number): Promise<number> {
    const deadline = this.clock.monotonic() + this.ackTimeoutMs;
    for (;;) {
      const laggards = await this.ledger.laggards(barrier, this.liveMs);
      if (laggards.length === 0) return 0;
      if (this.clock.monotonic() >= deadline) {
        const fenced = await this.ledger.fence(barrier, laggards);
        if (fenced > 0)
          this.logger.error(
            `Credit rebuild ${barrier}: ${fenced} instance(s) did not write their spend within ${this.ackTimeoutMs} ms and are fenced: what they hold is not charged`,
          );
        return fenced;
      }
      await new Promise((resolve) => setTimeout(resolve, ACK_POLL_MS));
    }
  }

  /**
   * Flushes until this instance's written spend covers `barrier` (a flush already under way may have read an
   * earlier barrier: then one more); throws when the database refuses it.
   */
  private async flushThrough(barrier: number): Promise<void> {
    for (let attempt = 0; this.ackedBarrier < barrier; attempt += 1) {
      if (attempt === 2) throw new Error(`credit spend could not be written for rebuild ${barrier}`);
      await this.flush();
    }
  }

  /** The refill period in progress for a consumer's terms. */
  refillPeriodOf(consumer: Consumer, terms: CreditTerms, nowMs: number): RefillPeriod {
    const every = terms.refill!.every;
    // While the period an anchor move re-cut lasts, it is the monthly refill's: its start, the refill's id, is the
    // start of the period the move found in progress, so no move makes a refill due again (refill-period.ts).
    const recut = consumer.recutPeriod;
    if (every === 'month' && recut && nowMs >= recut.startMs && nowMs < recut.endMs)
      return refillPeriodAt(every, consumer.billingAnchorMs, nowMs, recut);
    let cached = refillPeriods.get(consumer);
    if (
      cached === undefined ||
      cached.every !== every ||
      cached.anchorMs !== consumer.billingAnchorMs ||
      nowMs >= cached.endMs ||
      nowMs < cached.startMs
    ) {
      cached = { ...refillPeriodAt(every, consumer.billingAnchorMs, nowMs), every, anchorMs: consumer.billingAnchorMs };
      refillPeriods.set(consumer, cached);
    }
    return cached;
  }

  /** Writes a top-up's or a set's ledger entry, in the transaction of the change (with its audit row). */
  record(entry: NewLedgerEntry, manager: EntityManager): Promise<LedgerEntry> {
    return this.ledger.insert(entry, manager);
  }

  /** The ledger's entries of the last `days` UTC days, newest first (at most `limit`). */
  entries(consumer: string, sinceMs: number, limit: number): Promise<LedgerEntry[]> {
    return this.ledger.entries(consumer, new Date(sinceMs), limit);
  }

  /**
   * Spend per UTC day from `fromMs`'s day to `toMs`'s, oldest first, one per day, with this instance's spend not yet
   * written; read between two flushes (see `turn`).
   */
  async spendPerDay(consumer: string, fromMs: number, toMs: number): Promise<Array<{ day: string; spent: number }>> {
    return this.inTurn(async () => {
      const recorded = await this.ledger.spendSince(consumer, utcDay(fromMs));
      const days: Array<{ day: string; spent: number }> = [];
      for (let ms = fromMs; utcDay(ms) <= utcDay(toMs); ms += 86_400_000) {
        const day = utcDay(ms);
        days.push({ day, spent: (recorded.get(day) ?? 0) + this.spend.pendingOn(consumer, day) });
      }
      return days;
    });
  }

  /** Runs `read` when no flush is under way, and holds the next flush until it is done. */
  private inTurn<T>(read: () => Promise<T>): Promise<T> {
    const run = this.turn.then(read, read);
    this.turn = run.catch(() => undefined);
    return run;
  }

  /** Writes the spend held; a failed write is counted back in. One at a time. */
  flush(): Promise<void> {
    this.flushing ??= this.inTurn(() => this.flushOnce())
      .then(() => undefined)
      .finally(() => (this.flushing = undefined));
    return this.flushing;
  }

  /**
   * One flush: the barrier first, then every answer on its way, then what is held, written with the
   * acknowledgement of that barrier. Answers whether it was written.
   */
  private async flushOnce(): Promise<boolean> {
    let rows: Array<{ consumer: string; day: string; spent: number }> = [];
    try {
      const barrier = await this.ledger.latestBarrier();
      await this.settleDecisions();
      rows = this.spend.drain();
      const { dropped } = await this.ledger.flushSpend(this.instanceId, rows, barrier);
      this.spend.written(rows);
      if (dropped)
        this.logger.error(
          `This instance was fenced out of a credit rebuild (silent past the bound): ${rows.reduce((sum, r) => sum + r.spent, 0)} credits of spend it held are not charged`,
        );
      this.ackedBarrier = Math.max(this.ackedBarrier, barrier);
      return true;
    } catch (error) {
      this.spend.restore(rows);
      this.logger.warn(
        `Credit spend of ${rows.length} rows not written, kept for the next flush: ${(error as Error).message}`,
      );
      return false;
    }
  }

  /** Registers this instance among those that hold spend (a first flush), then flushes on the interval. */
  onApplicationBootstrap(): void {
    void this.flush();
    this.flushTimer = setInterval(() => void this.flush(), this.config.usage.flushMs);
    this.flushTimer.unref();
  }

  /** The last spend, after the server stopped taking requests and before the database closes. */
  async onApplicationShutdown(): Promise<void> {
    clearInterval(this.flushTimer);
    await this.flushing;
    if (await this.inTurn(() => this.flushOnce()))
      await this.ledger.forgetHolder(this.instanceId).catch(() => undefined);
    await this.flushRequests.close();
  }
}
