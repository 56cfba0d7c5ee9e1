import { refillAdds } from '../credits/refill-period';
import type { AnchoredPeriod } from '../periods/month-window';
import { Clock } from '../clock';
import { BanPolicy, Decision, RateLimitStore, Usage, WindowSpec, WindowState } from './rate-limit-store';
import {
  CREDITS_POLICY,
  CreditBalances,
  CreditChange,
  creditState,
  CreditSeed,
  CreditSpec,
  refillCovers,
} from '../credits/credit-decision';

/** Where an anchored window's counter ends at `now`: the end of the period now falls in. */
const periodEnd = (spec: WindowSpec, now: number): number =>
  spec.period!.endMs > now ? spec.period!.endMs : spec.period!.nextEndMs;

interface Counter {
  count: number;
  expiresAt: number;
}

/** Everything known about one tracker; the whole record is one entry of the bounded map. */
interface TrackerState {
  windows: Map<string, Counter>;
  /** Open from the window's first 429 until the limiting window resets. */
  refusals?: { graceEndsAt: number; strikes: number; expiresAt: number };
  bannedUntil?: number;
  /**
   * Prepaid credits: the balance and the start of the last refilled period. Never written to the state file and
   * never dropped by expiry: a restart rebuilds them from the ledger (docs/billing.md).
   */
  credits?: { balance: number; refilledPeriodStartMs: number };
}

/** The counters as written to RATE_LIMIT_STATE_FILE: absolute times (Unix ms), so that a restart resumes them. */
export interface MemoryRateLimitSnapshot {
  version: 1;
  trackers: Array<
    [
      key: string,
      state: { windows: Array<[name: string, Counter]>; refusals?: TrackerState['refusals']; bannedUntil?: number },
    ]
  >;
}

/**
 * In-process counters: the embedded default, and the fallback while Redis is gone. JavaScript runs one
 * request's decision to the end before the next, so it is atomic within the process. The same algorithm as
 * the Redis script: windows open at a tracker's first request and last their full length; strikes only after
 * the grace period that follows the window's first 429.
 *
 * Bounded: at most `maxTrackers` trackers, least recently seen evicted first (a Map keeps insertion order,
 * and every access re-inserts), so a flood of new trackers cannot grow memory without bound.
 */
export class MemoryRateLimitStore extends RateLimitStore {
  private readonly trackers = new Map<string, TrackerState>();
  private readonly sweeper: NodeJS.Timeout;

  constructor(
    private readonly clock: Clock,
    private readonly maxTrackers = 100_000,
  ) {
    super();
    this.sweeper = setInterval(() => this.sweep(), 60_000);
    this.sweeper.unref();
  }

  /** How many trackers are held now. */
  get size(): number {
    return this.trackers.size;
  }

  async consume(key: string, windows: WindowSpec[], ban: BanPolicy, credits?: CreditSpec): Promise<Decision> {
    if (credits !== undefined && this.trackers.get(key)?.credits === undefined) {
      // No balance held (a restarted embedded gateway, or one evicted): rebuilt from the ledger, kept only if no
      // other decision seeded it meanwhile.
      const seed = await credits.rebuild();
      return this.decide(key, windows, ban, credits, seed);
    }
    return this.decide(key, windows, ban, credits);
  }

  async credits(key: string, change: CreditChange, rebuild: () => Promise<CreditSeed>): Promise<CreditBalances> {
    if (this.trackers.get(key)?.credits === undefined) {
      const seed = await rebuild();
      const tracker = this.touch(key, this.clock.now());
      tracker.credits ??= { balance: seed.balance, refilledPeriodStartMs: seed.refilledPeriodStartMs };
    }
    const tracker = this.touch(key, this.clock.now());
    const held = tracker.credits!;
    const before = held.balance;
    if ('add' in change) held.balance += change.add;
    else if ('set' in change) {
      if (change.set === null) {
        tracker.credits = undefined;
        return { before, after: null };
      }
      held.balance = change.set;
    }
    return { before, after: held.balance };
  }

  /** Read without counting and without touching the LRU order (the admin API's usage, the guard's flood check). */
  async usage(key: string, windows: WindowSpec[]): Promise<Usage> {
    const now = this.clock.now();
    const tracker = this.trackers.get(key);
    return {
      windows: windows.map((spec) => {
        const counter = tracker?.windows.get(spec.name);
        const live = counter && counter.expiresAt > now ? counter : undefined;
        const resetMs = spec.period ? periodEnd(spec, now) - now : live ? live.expiresAt - now : spec.ttlMs;
        return { ...spec, count: live?.count ?? 0, resetMs };
      }),
      bannedForMs: tracker?.bannedUntil !== undefined && tracker.bannedUntil > now ? tracker.bannedUntil - now : 0,
    };
  }

  async raiseWindow(key: string, window: WindowSpec & { period: AnchoredPeriod }, atLeast: number): Promise<number> {
    const now = this.clock.now();
    const tracker = this.touch(key, now);
    const end = periodEnd(window, now);
    const counter = tracker.windows.get(window.name);
    const count = Math.max(counter && counter.expiresAt > now ? counter.count : 0, atLeast);
    if (count > 0) tracker.windows.set(window.name, { count, expiresAt: end });
    return count;
  }

  decide(key: string, windows: WindowSpec[], ban: BanPolicy, credits?: CreditSpec, seed?: CreditSeed): Decision {
    const now = this.clock.now();
    const tracker = this.touch(key, now);
    let held: TrackerState['credits'];
    let refilled = -1;
    let refilledTo = 0;
    if (credits !== undefined) {
      held = tracker.credits ??= seed && { balance: seed.balance, refilledPeriodStartMs: seed.refilledPeriodStartMs };
      if (held === undefined) throw new Error('credits decided without a balance: consume() rebuilds it first');
      const refill = credits.refill;
      if (refill && held.refilledPeriodStartMs < refill.periodStartMs) {
        held.refilledPeriodStartMs = refill.periodStartMs;
        refilled = refillAdds(refill.amount, held.balance);
        held.balance += refilled;
        refilledTo = held.balance;
      }
    }
    // Fields written out, not spread: an object spread here cost ~3 µs per window (V8's generic clone path), half
    // of the in-process decision (measured with the decision alone, in process).
    const states: WindowState[] = windows.map((spec) => {
      const counter = tracker.windows.get(spec.name);
      let resetMs: number;
      if (spec.period) {
        // Anchored: the counter ends with the billing period; one that ends elsewhere was cut on another anchor
        // (the anchor moved): re-cut, its count kept.
        const end = periodEnd(spec, now);
        if (counter) counter.expiresAt = end;
        resetMs = end - now;
      } else {
        resetMs = counter ? counter.expiresAt - now : spec.ttlMs;
      }
      return { name: spec.name, limit: spec.limit, ttlMs: spec.ttlMs, count: counter?.count ?? 0, resetMs };
    });

    const creditsNow = () => (credits && held ? creditState(credits, held.balance, refilled, refilledTo) : undefined);
    if (tracker.bannedUntil !== undefined)
      return { outcome: 'banned', windows: states, retryAfterMs: tracker.bannedUntil - now, credits: creditsNow() };

    const full = states.filter((state) => state.count >= state.limit);
    let limiting: { name: string; resetMs: number } | undefined =
      full.length > 0 ? full.reduce((a, b) => (b.resetMs > a.resetMs ? b : a)) : undefined;
    if (limiting === undefined && credits && held && credits.cost > held.balance) {
      limiting = { name: CREDITS_POLICY, resetMs: credits.refill ? credits.refill.waitMs : ban.durationMs };
    }
    if (limiting !== undefined) {
      const limited: Decision =
        limiting.name === CREDITS_POLICY && !refillCovers(credits!)
          ? { outcome: 'exhausted', windows: states, credits: creditsNow() }
          : {
              outcome: 'limited',
              windows: states,
              window: limiting.name,
              retryAfterMs: limiting.resetMs,
              credits: creditsNow(),
            };
      const refusals = tracker.refusals;
      if (!refusals) {
        tracker.refusals = { graceEndsAt: now + ban.graceMs, strikes: 0, expiresAt: now + limiting.resetMs };
        return limited;
      }
      if (now < refusals.graceEndsAt) return limited;
      refusals.strikes += 1;
      if (refusals.strikes > ban.threshold) {
        tracker.bannedUntil = now + ban.durationMs;
        tracker.refusals = undefined;
        return {
          outcome: 'banned',
          windows: states,
          retryAfterMs: ban.durationMs,
          started: true,
          credits: creditsNow(),
        };
      }
      return limited;
    }

    if (credits && held) held.balance -= credits.cost;
    for (const state of states) {
      let counter = tracker.windows.get(state.name);
      if (!counter) {
        counter = { count: 0, expiresAt: now + state.resetMs };
        tracker.windows.set(state.name, counter);
      }
      counter.count += 1;
      state.count = counter.count;
    }
    return { outcome: 'allowed', windows: states, credits: creditsNow() };
  }

  /**
   * Keeps what Redis last said about a tracker (window counts, a ban), so that if Redis goes away the fallback
   * carries on from there instead of handing the tracker a fresh quota or lifting its ban.
   */
  remember(key: string, decision: Decision): void {
    const now = this.clock.now();
    const tracker = this.touch(key, now);
    for (const state of decision.windows) {
      if (state.count > 0) tracker.windows.set(state.name, { count: state.count, expiresAt: now + state.resetMs });
    }
    if (decision.outcome === 'banned') tracker.bannedUntil = now + decision.retryAfterMs;
  }

  async unban(key: string): Promise<void> {
    this.forgetBan(key);
  }

  /** Lifts the ban, forgets the strikes and grace; the window counts stay (without touching the LRU order). */
  forgetBan(key: string): void {
    const tracker = this.trackers.get(key);
    if (!tracker) return;
    tracker.bannedUntil = undefined;
    tracker.refusals = undefined;
  }

  /** Everything not yet expired, least recently seen first (the order restore() keeps). */
  snapshot(): MemoryRateLimitSnapshot {
    const now = this.clock.now();
    const trackers: MemoryRateLimitSnapshot['trackers'] = [];
    for (const [key, tracker] of this.trackers) {
      if (!this.expire(tracker, now)) continue;
      trackers.push([
        key,
        { windows: [...tracker.windows], refusals: tracker.refusals, bannedUntil: tracker.bannedUntil },
      ]);
    }
    return { version: 1, trackers };
  }

  /** Takes back a snapshot (at start, before any request): what has expired since is dropped. */
  restore(snapshot: MemoryRateLimitSnapshot): number {
    const now = this.clock.now();
    for (const [key, state] of snapshot.trackers.slice(-this.maxTrackers)) {
      const tracker: TrackerState = {
        windows: new Map(state.windows),
        refusals: state.refusals,
        bannedUntil: state.bannedUntil,
      };
      if (this.expire(tracker, now)) this.trackers.set(key, tracker);
    }
    return this.trackers.size;
  }

  override async close(): Promise<void> {
    clearInterval(this.sweeper);
  }

  /** The tracker's record with everything expired dropped, moved to the most recently used end. */
  private touch(key: string, now: number): TrackerState {
    let tracker = this.trackers.get(key);
    if (tracker) {
      this.trackers.delete(key);
      this.expire(tracker, now);
    } else {
      tracker = { windows: new Map() };
      while (this.trackers.size >= this.maxTrackers) this.trackers.delete(this.trackers.keys().next().value!);
    }
    this.trackers.set(key, tracker);
    return tracker;
  }

  /** Drops what has ended; returns whether anything is left. */
  private expire(tracker: TrackerState, now: number): boolean {
    for (const [name, counter] of tracker.windows) if (counter.expiresAt <= now) tracker.windows.delete(name);
    if (tracker.refusals && tracker.refusals.expiresAt <= now) tracker.refusals = undefined;
    if (tracker.bannedUntil !== undefined && tracker.bannedUntil <= now) tracker.bannedUntil = undefined;
    return (
      tracker.windows.size > 0 ||
      tracker.refusals !== undefined ||
      tracker.bannedUntil !== undefined ||
      tracker.credits !== undefined
    );
  }

  private sweep(): void {
    const now = this.clock.now();
    for (const [key, tracker] of this.trackers) if (!this.expire(tracker, now)) this.trackers.delete(key);
  }
}
