import { Clock } from '../clock';
import { BanPolicy, Decision, RateLimitStore, Usage, WindowSpec, WindowState } from './rate-limit-store';

interface Counter {
  count: number;
  expiresAt: number;
}

/**
 * In-process counters: the embedded default, and the fallback while Redis is unreachable. JavaScript runs one
 * request's decision to the end before the next, so it is atomic within the process. The same algorithm as
 * the Redis script: windows open at a tracker's first request and last their full length.
 */
export class MemoryRateLimitStore extends RateLimitStore {
  private readonly counters = new Map<string, Counter>();
  private readonly sweeper: NodeJS.Timeout;

  constructor(private readonly clock: Clock) {
    super();
    this.sweeper = setInterval(() => this.sweep(), 60_000);
    this.sweeper.unref();
  }

  async consume(key: string, windows: WindowSpec[], ban: BanPolicy): Promise<Decision> {
    return this.decide(key, windows, ban);
  }

  async usage(key: string, windows: WindowSpec[]): Promise<Usage> {
    const now = this.clock.now();
    const live = (name: string) => {
      const counter = this.counters.get(name);
      return counter && counter.expiresAt > now ? counter : undefined;
    };
    const banned = live(`${key}:ban`);
    return {
      windows: windows.map((spec) => {
        const counter = live(`${key}:w:${spec.name}`);
        return { ...spec, count: counter?.count ?? 0, resetMs: counter ? counter.expiresAt - now : spec.ttlMs };
      }),
      bannedForMs: banned ? banned.expiresAt - now : 0,
    };
  }

  decide(key: string, windows: WindowSpec[], ban: BanPolicy): Decision {
    const now = this.clock.now();
    const live = (name: string) => {
      const counter = this.counters.get(name);
      return counter && counter.expiresAt > now ? counter : undefined;
    };
    const states: WindowState[] = windows.map((spec) => {
      const counter = live(`${key}:w:${spec.name}`);
      return { ...spec, count: counter?.count ?? 0, resetMs: counter ? counter.expiresAt - now : spec.ttlMs };
    });

    const banned = live(`${key}:ban`);
    if (banned) return { outcome: 'banned', windows: states, retryAfterMs: banned.expiresAt - now };

    const full = states.filter((state) => state.count >= state.limit);
    if (full.length > 0) {
      const limiting = full.reduce((a, b) => (b.resetMs > a.resetMs ? b : a));
      const strikesKey = `${key}:strikes`;
      const strikes = live(strikesKey) ?? { count: 0, expiresAt: now + limiting.resetMs };
      strikes.count += 1;
      this.counters.set(strikesKey, strikes);
      if (strikes.count > ban.threshold) {
        this.counters.set(`${key}:ban`, { count: 1, expiresAt: now + ban.durationMs });
        this.counters.delete(strikesKey);
        return { outcome: 'banned', windows: states, retryAfterMs: ban.durationMs };
      }
      return { outcome: 'limited', windows: states, window: limiting.name, retryAfterMs: limiting.resetMs };
    }

    for (const state of states) {
      const name = `${key}:w:${state.name}`;
      const counter = live(name) ?? { count: 0, expiresAt: now + state.ttlMs };
      counter.count += 1;
      this.counters.set(name, counter);
      state.count = counter.count;
    }
    return { outcome: 'allowed', windows: states };
  }

  override async close(): Promise<void> {
    clearInterval(this.sweeper);
  }

  private sweep(): void {
    const now = this.clock.now();
    for (const [name, counter] of this.counters) if (counter.expiresAt <= now) this.counters.delete(name);
  }
}
