/**
 * When a failed delivery is tried again: the schedule the field uses (Svix's, which Standard Webhooks senders
 * follow). The first attempt is immediate; after the n-th failure the next waits RETRY_DELAYS_MS[n - 1], with
 * ±10 % of jitter (so that endpoints that failed together are not all retried in the same instant); after the
 * last delay's attempt fails too, the delivery is given up. Eight attempts over about 27 hours and a half.
 */
export const RETRY_DELAYS_MS: readonly number[] = [
  5_000,
  5 * 60_000,
  30 * 60_000,
  2 * 3_600_000,
  5 * 3_600_000,
  10 * 3_600_000,
  10 * 3_600_000,
];

/** Attempts in all: the immediate one and one per delay. */
export const MAX_ATTEMPTS = RETRY_DELAYS_MS.length + 1;

/** The share of a delay the jitter moves it by, either way. */
export const RETRY_JITTER = 0.1;

/**
 * The delay after `failedAttempts` failures (1 for the first), jittered by `random` (0 to 1: 0.5 is the exact
 * delay), or null when the delivery is given up.
 */
export function retryDelayMs(failedAttempts: number, random: number = Math.random()): number | null {
  if (failedAttempts < 1 || failedAttempts >= MAX_ATTEMPTS) return null;
  const delay = RETRY_DELAYS_MS[failedAttempts - 1];
  return Math.round(delay * (1 + RETRY_JITTER * (2 * random - 1)));
}
