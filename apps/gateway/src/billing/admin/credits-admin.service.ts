import { ApiError } from '@app/errors';
import { Injectable } from '@nestjs/common';
import { AdminActor, AdminRequestContext } from '../../access/admin-context';
import { AuditLog } from '../../access/audit-log';
import { Clock } from '../../clock';
import { ConsumersService } from '../../consumers/consumers.service';
import type { CreditTerms } from '../../plans/plan-limits';
import { consumerTracker } from '../../rate-limit/plan-throttlers';
import { RateLimitStore, RateLimitUnavailableError } from '../../rate-limit/rate-limit-store';
import type { CreditChange } from '../../credits/credit-decision';
import type { LedgerEntry } from '../../credits/credit-ledger.repository';
import { CreditsService } from '../../credits/credits.service';
import { refillPeriodAt } from '../../credits/refill-period';

/** A consumer's credits as GET /consumers/{name}/billing shows them. */
export interface CreditsView {
  balance: number;
  refill: CreditTerms['refill'];
  refillSet: boolean;
  nextRefillAt: Date | null;
  costs: CreditTerms['costs'];
}

/** The ledger page of GET /consumers/{name}/credits/ledger. */
export interface LedgerView {
  balance: number | null;
  entries: LedgerEntry[];
  spendPerDay: Array<{ day: string; spent: number }>;
  projectedExhaustionAt: Date | null;
  /** Why projectedExhaustionAt is null, or that it is not. */
  exhaustion: Exhaustion;
}

/**
 * The projection's outcomes: a date; already exhausted (a balance of 0); none (no spend, no credits, or a refill
 * covers the spend); or a date past the last one JavaScript (and ISO 8601 in JSON) can write, +275760-09-13: "not
 * within any date".
 */
export type Exhaustion = 'projected' | 'exhausted' | 'not-expected' | 'not-within-any-date';

/** The last instant a Date holds (ECMA-262 §21.4.1.1: ±8.64e15 ms from the epoch). */
const LAST_DATE_MS = 8.64e15;

const DAY_MS = 86_400_000;
/** The most entries one ledger page lists. */
const LEDGER_PAGE = 500;

/**
 * The admin API's credits (docs/billing.md): top-ups and sets of a balance (the counter store's, every instance's),
 * each with its ledger row and audit row in one transaction under the consumer's lock; the ledger with the spend
 * per day and a projection. A store that cannot be reached refuses with 503: a balance is never changed blind.
 */
@Injectable()
export class CreditsAdminService {
  constructor(
    private readonly consumers: ConsumersService,
    private readonly store: RateLimitStore,
    private readonly credits: CreditsService,
    private readonly audit: AuditLog,
    private readonly clock: Clock,
  ) {}

  /** The live balance and terms, or null when credits are not in force. */
  async view(name: string, terms: CreditTerms | undefined, anchorMs: number): Promise<CreditsView | null> {
    if (terms === undefined) return null;
    const { after } = await this.change(name, { read: true });
    const now = this.clock.now();
    return {
      balance: after ?? 0,
      refill: terms.refill,
      refillSet: terms.refillSet,
      nextRefillAt: terms.refill ? new Date(refillPeriodAt(terms.refill.every, anchorMs, now).endMs) : null,
      costs: terms.costs,
    };
  }

  /** Adds `amount` (the first top-up puts credits in force), audited `consumer.credits.top-up`. */
  async topUp(
    call: AdminRequestContext,
    name: string,
    amount: number,
    reason: string,
  ): Promise<{ balance: number; entry: LedgerEntry }> {
    await this.warm(call.actor, name);
    let applied = false;
    try {
      return await this.consumers.changeCredits(call, name, async (manager, consumer) => {
        const { before, after } = await this.change(name, { add: amount });
        applied = true;
        const entry = await this.credits.record(
          {
            consumer: name,
            at: new Date(this.clock.now()),
            kind: 'top-up',
            amount,
            balanceAfter: after!,
            reason,
            actor: call.actor.name,
          },
          manager,
        );
        await this.audit.record(call, manager, {
          action: 'consumer.credits.top-up',
          targetConsumer: consumer.name,
          changes: { balance: { before, after }, reason: { before: null, after: reason } },
        });
        return { value: { balance: after!, entry }, creditsEnabled: true };
      });
    } catch (error) {
      // The store took it but the transaction did not: take it back (the ledger has no row of it).
      if (applied) await this.change(name, { add: -amount }).catch(() => undefined);
      throw error;
    }
  }

  /** Sets the balance (null: credits no longer in force), audited `consumer.credits.set`. */
  async set(call: AdminRequestContext, name: string, balance: number | null, reason: string): Promise<number | null> {
    await this.warm(call.actor, name);
    let previous: number | null = null;
    let applied = false;
    try {
      return await this.consumers.changeCredits(call, name, async (manager, consumer) => {
        const { before, after } = await this.change(name, { set: balance });
        previous = before;
        applied = true;
        await this.credits.record(
          {
            consumer: name,
            at: new Date(this.clock.now()),
            kind: 'set',
            amount: (after ?? 0) - (before ?? 0),
            balanceAfter: after ?? 0,
            reason,
            actor: call.actor.name,
          },
          manager,
        );
        await this.audit.record(call, manager, {
          action: 'consumer.credits.set',
          targetConsumer: consumer.name,
          changes: { balance: { before, after }, reason: { before: null, after: reason } },
        });
        return { value: after, creditsEnabled: balance !== null };
      });
    } catch (error) {
      if (applied && previous !== null) await this.change(name, { set: previous }).catch(() => undefined);
      throw error;
    }
  }

  /** The ledger of the last `days` days, the spend per day and the projected exhaustion. */
  async ledger(actor: AdminActor, name: string, days: number, terms: CreditTerms | undefined): Promise<LedgerView> {
    await this.consumers.get(actor, name);
    const now = this.clock.now();
    const from = now - (days - 1) * DAY_MS;
    const balance = terms ? (await this.change(name, { read: true })).after : null;
    const [entries, spendPerDay] = await Promise.all([
      this.credits.entries(name, from - (from % DAY_MS), LEDGER_PAGE),
      this.credits.spendPerDay(name, from, now),
    ]);
    const at = this.projection(balance, spendPerDay, terms, now);
    return {
      balance,
      entries,
      spendPerDay,
      projectedExhaustionAt: typeof at === 'number' ? new Date(at) : null,
      exhaustion: typeof at === 'number' ? 'projected' : at,
    };
  }

  /**
   * When the balance runs out at the mean spend of the last 7 days (today included). A balance of 0 has run out
   * already: 'exhausted' (until the next refill, if one is scheduled), never "now". No date without spend, without
   * credits, or when a refill covers that spend (a refill of at least a period's spend): 'not-expected'. A large
   * balance at a tiny spend lands past the last date a Date holds: 'not-within-any-date', never an Invalid Date
   * (whose toISOString throws: a 500 for a value we accepted).
   */
  private projection(
    balance: number | null,
    spendPerDay: Array<{ spent: number }>,
    terms: CreditTerms | undefined,
    now: number,
  ): number | Exclude<Exhaustion, 'projected'> {
    if (balance === null || terms === undefined) return 'not-expected';
    if (balance <= 0) return 'exhausted';
    const week = spendPerDay.slice(-7);
    const perMs = week.reduce((sum, d) => sum + d.spent, 0) / (week.length * DAY_MS);
    if (!(perMs > 0)) return 'not-expected';
    if (terms.refill && terms.refill.amount >= perMs * (terms.refill.every === 'day' ? DAY_MS : 31 * DAY_MS))
      return 'not-expected';
    const at = now + Math.floor(balance / perMs);
    return Number.isFinite(at) && at <= LAST_DATE_MS ? at : 'not-within-any-date';
  }

  /**
   * Before a change under the consumer's lock: 404/403 as any read, and a store without the balance rebuilds it
   * now, outside the transaction (the rebuild reads the ledger: on the embedded database's one connection it
   * could not while the transaction holds it).
   */
  private async warm(actor: AdminActor, name: string): Promise<void> {
    await this.consumers.get(actor, name);
    await this.change(name, { read: true });
  }

  /** One balance change in the counter store; 503 when it cannot be reached. */
  private async change(name: string, change: CreditChange) {
    try {
      return await this.store.credits(consumerTracker(name), change, () => this.credits.rebuild(name));
    } catch (error) {
      if (error instanceof RateLimitUnavailableError)
        throw new ApiError(
          'SERVICE_UNAVAILABLE',
          'The counter store holding the balances is unreachable: retry shortly.',
        );
      throw error;
    }
  }
}
