import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import type { PublicOperationId } from '@app/contract';
import type { EntityManager } from 'typeorm';
import { Clock } from '../../clock';
import { GATEWAY_CONFIG, GatewayConfig } from '../../config/gateway.config';
import type { Consumer } from '../../consumers/consumer';
import type { CreditTerms } from '../../plans/plan-limits';
import type { CreditSeed, CreditSpec, CreditState } from './credit-decision';
import { CreditLedgerRepository, LedgerEntry, NewLedgerEntry } from './credit-ledger.repository';
import { CreditSpendRecorder, utcDay } from './credit-spend';
import { RefillPeriod, refillPeriodAt } from './refill-period';

/** Who the ledger says applied a refill. */
export const REFILL_ACTOR = 'gateway';

interface CachedRefill extends RefillPeriod {
  every: string;
  anchorMs: number;
}

/** The refill period once per consumer and period, not per request: consumers are cached objects. */
const refillPeriods = new WeakMap<Consumer, CachedRefill>();

/**
 * Prepaid credits on the request path (docs/billing.md): what a request costs and which refill is due (the
 * CreditSpec the rate-limit store decides with the windows, in the same call), the spend of admitted requests
 * (held in memory, flushed into credit_spend_daily with the usage history's interval and on shutdown), the
 * refill rows of the ledger, and the balance rebuilt from the ledger for a store that has none.
 */
@Injectable()
export class CreditsService implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('Credits');
  readonly spend = new CreditSpendRecorder();
  private flushTimer?: NodeJS.Timeout;
  private flushing?: Promise<void>;

  constructor(
    private readonly ledger: CreditLedgerRepository,
    private readonly clock: Clock,
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
  ) {}

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

  /** After a decision with credits: the refill it applied into the ledger, the cost of an admitted request as spend. */
  afterDecision(consumer: string, admitted: boolean, credits: CreditState, nowMs: number): void {
    if (admitted && credits.cost > 0) this.spend.add(consumer, credits.cost, nowMs);
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
  }

  /**
   * The balance for a store that holds none: the ledger's sum less the spend recorded and this instance's spend
   * not yet flushed; never below 0. The last refilled period comes with it, so the refill is not applied twice.
   */
  async rebuild(consumer: string): Promise<CreditSeed> {
    const totals = await this.ledger.totals(consumer);
    const balance = Math.max(0, totals.balance - this.spend.pending(consumer));
    this.logger.warn(`Credit balance of ${consumer} rebuilt from the ledger: ${balance}`);
    return { balance, refilledPeriodStartMs: totals.refilledPeriodStartMs };
  }

  /** The refill period in progress for a consumer's terms. */
  refillPeriodOf(consumer: Consumer, terms: CreditTerms, nowMs: number): RefillPeriod {
    const every = terms.refill!.every;
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

  /** Spend per UTC day from `fromMs`'s day to `toMs`'s, oldest first, one per day (with this instance's unflushed spend). */
  async spendPerDay(consumer: string, fromMs: number, toMs: number): Promise<Array<{ day: string; spent: number }>> {
    const recorded = await this.ledger.spendSince(consumer, utcDay(fromMs));
    const days: Array<{ day: string; spent: number }> = [];
    for (let ms = fromMs; utcDay(ms) <= utcDay(toMs); ms += 86_400_000) {
      const day = utcDay(ms);
      days.push({ day, spent: (recorded.get(day) ?? 0) + this.spend.pendingOn(consumer, day) });
    }
    return days;
  }

  /** Writes the spend held; a failed write is counted back in. One at a time. */
  flush(): Promise<void> {
    this.flushing ??= this.writeHeld().finally(() => (this.flushing = undefined));
    return this.flushing;
  }

  private async writeHeld(): Promise<void> {
    const rows = this.spend.drain();
    if (rows.length === 0) return;
    try {
      await this.ledger.addSpend(rows);
    } catch (error) {
      this.spend.restore(rows);
      this.logger.warn(
        `Credit spend of ${rows.length} rows not written, kept for the next flush: ${(error as Error).message}`,
      );
    }
  }

  onApplicationBootstrap(): void {
    this.flushTimer = setInterval(() => void this.flush(), this.config.usage.flushMs);
    this.flushTimer.unref();
  }

  /** The last spend, after the server stopped taking requests and before the database closes. */
  async onApplicationShutdown(): Promise<void> {
    clearInterval(this.flushTimer);
    await this.flushing;
    await this.flush();
  }
}
