import { Logger } from '@nestjs/common';
import { LRUCache } from 'lru-cache';

/** Attempts per address block and minute, whatever their outcome. */
export const ATTEMPTS_PER_MINUTE = 10;
/** Failures (within FAILURE_MEMORY_MS) from an address block after which each next attempt waits. */
export const SLOW_AFTER_FAILURES = 3;
/** The wait after the SLOW_AFTER_FAILURES-th failure; it doubles with every further one, up to MAX_WAIT_MS. */
export const FIRST_WAIT_MS = 5000;
export const MAX_WAIT_MS = 5 * 60 * 1000;
const FAILURE_MEMORY_MS = 15 * 60 * 1000;
const MINUTE_MS = 60 * 1000;

interface BlockState {
  windowStart: number;
  attempts: number;
  failures: number;
  lastFailureAt: number;
  /** No attempt before this (set by each failure from the SLOW_AFTER_FAILURES-th on). */
  nextAllowedAt: number;
}

export type ConsoleSignInVerdict =
  | { allowed: true }
  | { allowed: false; code: 'TOO_MANY_ATTEMPTS' | 'SLOWED_AFTER_FAILURES'; retryAfterSeconds: number };

/**
 * Console sign-in guesses, per client address block (an IPv4 address, an IPv6 /64): at most ATTEMPTS_PER_MINUTE
 * attempts a minute, and from the SLOW_AFTER_FAILURES-th wrong token on, each failure makes the block wait before
 * its next attempt (5 s, 10 s, 20 s… up to 5 minutes); a right token forgets the block's failures. Guesses sent in
 * parallel are bounded by the per-minute count (taken at admission). In this instance's memory (the console runs as one instance; the
 * admin API's own limits stand behind it), at most 10,000 blocks (least recently seen forgotten first).
 */
export class ConsoleSignInThrottle {
  private readonly logger = new Logger('SignIn');
  private readonly blocks = new LRUCache<string, BlockState>({ max: 10_000 });

  constructor(private readonly now: () => number = Date.now) {}

  admit(block: string): ConsoleSignInVerdict {
    const now = this.now();
    let state = this.blocks.get(block);
    if (!state) {
      state = { windowStart: now, attempts: 0, failures: 0, lastFailureAt: 0, nextAllowedAt: 0 };
      this.blocks.set(block, state);
    }
    if (now - state.windowStart >= MINUTE_MS) {
      state.windowStart = now;
      state.attempts = 0;
    }
    if (state.failures > 0 && now - state.lastFailureAt >= FAILURE_MEMORY_MS) state.failures = 0;
    if (state.attempts >= ATTEMPTS_PER_MINUTE)
      return this.refuse(block, 'TOO_MANY_ATTEMPTS', state.windowStart + MINUTE_MS - now);
    if (now < state.nextAllowedAt) return this.refuse(block, 'SLOWED_AFTER_FAILURES', state.nextAllowedAt - now);
    state.attempts += 1;
    return { allowed: true };
  }

  /** A token the admin API refused: counted, and logged at warn (the address block and why; never the token). */
  failed(block: string, reason: string): void {
    const state = this.blocks.get(block);
    if (state) {
      state.failures += 1;
      state.lastFailureAt = this.now();
      const past = state.failures - SLOW_AFTER_FAILURES;
      if (past >= 0)
        state.nextAllowedAt = state.lastFailureAt + Math.min(MAX_WAIT_MS, FIRST_WAIT_MS * 2 ** Math.min(20, past));
    }
    this.logger.warn({ event: 'console.sign-in.failed', address: block, reason, failures: state?.failures ?? 1 });
  }

  succeeded(block: string): void {
    const state = this.blocks.get(block);
    if (state) {
      state.failures = 0;
      state.nextAllowedAt = 0;
    }
  }

  private refuse(block: string, code: 'TOO_MANY_ATTEMPTS' | 'SLOWED_AFTER_FAILURES', waitMs: number) {
    const retryAfterSeconds = Math.max(1, Math.ceil(waitMs / 1000));
    this.logger.warn({ event: 'console.sign-in.throttled', address: block, code, retryAfterSeconds });
    return { allowed: false as const, code, retryAfterSeconds };
  }
}
