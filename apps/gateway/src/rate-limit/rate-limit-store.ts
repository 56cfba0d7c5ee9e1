import { ThrottlerStorage } from '@nestjs/throttler';
import type { AnchoredPeriod } from '../periods/month-window';
import type { CreditBalances, CreditChange, CreditSeed, CreditSpec, CreditState } from '../credits/credit-decision';

/** What ThrottlerStorage.increment answers (the package does not export the record type from its entry point). */
type ThrottlerStorageRecord = Awaited<ReturnType<ThrottlerStorage['increment']>>;

/**
 * One counting window of a limit, for example 60 requests per 60,000 ms. A window opens at a tracker's first
 * request and lasts `ttlMs`; an anchored window (a monthly quota, `period` set) ends instead at the end of the
 * billing period it falls in (`ttlMs` is then that period's length, for RateLimit-Policy).
 */
export interface WindowSpec {
  name: string;
  limit: number;
  ttlMs: number;
  period?: AnchoredPeriod;
}

/**
 * When refusals become a ban. The first 429 of a window opens a grace period of `graceMs`: refusals within it
 * are requests the client sent before it could have read that 429, so they are not strikes. Every refusal
 * after it is a strike; the strike that makes more than `threshold` (the threshold + 1st) bans the tracker
 * for `durationMs`. Strikes are forgotten when the limiting window resets.
 */
export interface BanPolicy {
  threshold: number;
  durationMs: number;
  graceMs: number;
}

/** A window after the decision: `count` requests admitted so far, resetting in `resetMs`. */
export interface WindowState extends WindowSpec {
  count: number;
  resetMs: number;
}

/** What a tracker has used, read without counting (the admin API's usage, the guard's flood check). */
export interface Usage {
  windows: WindowState[];
  /** 0 when not banned. */
  bannedForMs: number;
}

/**
 * What was decided for one request. Stores return the first three; `unavailable` is the limiter's own (no
 * decision could be taken, see RateLimitUnavailableError) so that its 503 carries headers like any answer.
 */
export type Decision = (
  | { outcome: 'allowed'; windows: WindowState[] }
  /** `window`: the violated policy (a window's name, or `credits` when the balance is short and a refill is due). */
  | { outcome: 'limited'; windows: WindowState[]; window: string; retryAfterMs: number }
  /** `started`: this request started the ban (the requests refused during it are not marked). */
  | { outcome: 'banned'; windows: WindowState[]; retryAfterMs: number; started?: boolean }
  | { outcome: 'unavailable'; windows: WindowState[]; retryAfterMs: number }
  /** The balance is short of the cost and no scheduled refill can cover it (none, or below the cost): only a top-up helps (402). */
  | { outcome: 'exhausted'; windows: WindowState[] }
) & { credits?: CreditState };

/**
 * No decision could be taken: the reply of a live Redis came too late (`late`), or Redis is gone and the
 * failure mode is closed (`outage`). The request is answered 503 with Retry-After; it is never admitted on a
 * fresh in-process quota.
 */
export class RateLimitUnavailableError extends Error {
  constructor(
    readonly reason: 'late' | 'outage',
    readonly retryAfterMs: number,
  ) {
    super(reason === 'late' ? 'the rate-limit store answered too late' : 'the rate-limit store is unavailable');
  }
}

/**
 * Counters shared by every request of one tracker. `consume` decides for all windows at once, atomically:
 * a request is admitted (and counted in every window) only when every window has room; a refused request
 * counts nowhere but as a strike towards a ban.
 *
 * It is @nestjs/throttler's ThrottlerStorage (ThrottlerModule's `storage`): PlanThrottlerGuard decides every
 * window of a request in one `consume`; `increment` serves a plain ThrottlerGuard, one window per call.
 */
export abstract class RateLimitStore implements ThrottlerStorage {
  /**
   * `credits`: the consumer's prepaid credits, decided with the windows (the same Lua call, the same synchronous
   * decision). Credits fail closed: with `credits`, a store that cannot decide throws RateLimitUnavailableError
   * whatever the failure mode says for the windows.
   */
  abstract consume(key: string, windows: WindowSpec[], ban: BanPolicy, credits?: CreditSpec): Promise<Decision>;

  /**
   * A consumer's balance outside a decision (the admin API): read it, add to it, set it, or drop it (`set: null`,
   * credits no longer in force). A store without a balance first takes `rebuild()`'s. Answers the balance before
   * and after (null: none held). Throws RateLimitUnavailableError when the store cannot be reached.
   */
  abstract credits(key: string, change: CreditChange, rebuild: () => Promise<CreditSeed>): Promise<CreditBalances>;

  /** Read-only: the current counts of `windows` and any ban, exactly as `consume` would see them; counts nothing. */
  abstract usage(key: string, windows: WindowSpec[]): Promise<Usage>;

  /**
   * An anchored window's count (a monthly quota's) raised to at least `atLeast` for the period in progress, ending
   * with it, as `consume` would cut it: a quota set mid-period counts what the period already used (its usage
   * history), never from zero. A count already higher is kept. Answers the count now. Throws
   * RateLimitUnavailableError when the store cannot be reached.
   */
  abstract raiseWindow(key: string, window: WindowSpec & { period: AnchoredPeriod }, atLeast: number): Promise<number>;

  /**
   * Lifts the tracker's ban and forgets its strikes and grace period (its window counts stay), where every
   * instance reads them: Redis's keys, or the in-process counters. Throws RateLimitUnavailableError when that
   * cannot be done now (Redis gone or late).
   */
  abstract unban(key: string): Promise<void>;

  /** The same, in what this instance alone holds of the tracker (told by another instance that unbanned it). */
  abstract forgetBan(key: string): void;

  async increment(
    key: string,
    ttl: number,
    limit: number,
    blockDuration: number,
    throttlerName: string,
  ): Promise<ThrottlerStorageRecord> {
    const decision = await this.consume(key, [{ name: throttlerName, limit, ttlMs: ttl }], {
      threshold: Number.MAX_SAFE_INTEGER,
      durationMs: blockDuration,
      graceMs: 0,
    });
    const window = decision.windows[0];
    const blocked = decision.outcome !== 'allowed';
    if (decision.outcome === 'exhausted') throw new Error('increment decides no credits');
    return {
      totalHits: blocked ? window.limit + 1 : window.count,
      timeToExpire: Math.ceil(window.resetMs / 1000),
      isBlocked: blocked,
      timeToBlockExpire: blocked ? Math.ceil(decision.retryAfterMs / 1000) : 0,
    };
  }

  /**
   * Resolves once every decision this store has already answered has reached its caller (the credits' spend of
   * a rebuild's barrier): in process, decisions are synchronous, so at once.
   */
  async settle(): Promise<void> {}

  /** For readiness: the server the counters live on ('redis'), or null for in-process counters. */
  readonly dependency: string | null = null;

  /** For readiness: whether decisions currently come from `dependency` (always, in process). */
  async ping(): Promise<boolean> {
    return true;
  }

  async close(): Promise<void> {}
}
