import { ThrottlerStorage } from '@nestjs/throttler';
import type { ThrottlerStorageRecord } from '@nestjs/throttler/dist/throttler-storage-record.interface';

/** One counting window of a limit, for example 60 requests per 60,000 ms. */
export interface WindowSpec {
  name: string;
  limit: number;
  ttlMs: number;
}

export interface BanPolicy {
  /** Refused requests tolerated within the limiting window before the key is banned. */
  threshold: number;
  durationMs: number;
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

export type Decision =
  | { outcome: 'allowed'; windows: WindowState[] }
  | { outcome: 'limited'; windows: WindowState[]; window: string; retryAfterMs: number }
  | { outcome: 'banned'; windows: WindowState[]; retryAfterMs: number };

/**
 * Counters shared by every request of one tracker. `consume` decides for all windows at once, atomically:
 * a request is admitted (and counted in every window) only when every window has room; a refused request
 * counts nowhere but as a strike towards a ban.
 *
 * It also implements @nestjs/throttler's ThrottlerStorage, so that a plain ThrottlerGuard could use it.
 */
export abstract class RateLimitStore implements ThrottlerStorage {
  abstract consume(key: string, windows: WindowSpec[], ban: BanPolicy): Promise<Decision>;

  /** Read-only: the current counts of `windows` and any ban, exactly as `consume` would see them; counts nothing. */
  abstract usage(key: string, windows: WindowSpec[]): Promise<Usage>;

  async increment(key: string, ttl: number, limit: number, blockDuration: number, throttlerName: string): Promise<ThrottlerStorageRecord> {
    const decision = await this.consume(key, [{ name: throttlerName, limit, ttlMs: ttl }], {
      threshold: Number.MAX_SAFE_INTEGER,
      durationMs: blockDuration,
    });
    const window = decision.windows[0];
    const blocked = decision.outcome !== 'allowed';
    return {
      totalHits: blocked ? window.limit + 1 : window.count,
      timeToExpire: Math.ceil(window.resetMs / 1000),
      isBlocked: blocked,
      timeToBlockExpire: blocked ? Math.ceil(decision.retryAfterMs / 1000) : 0,
    };
  }

  async close(): Promise<void> {}
}
