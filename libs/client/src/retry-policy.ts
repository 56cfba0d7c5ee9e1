/** Capped exponential backoff with full jitter: a random wait in [0, min(cap, base * 2^attempt)). */
export interface BackoffOptions {
  baseMs: number;
  capMs: number;
}

export function backoffDelay(attempt: number, options: BackoffOptions, random: () => number = Math.random): number {
  const ceiling = Math.min(options.capMs, options.baseMs * 2 ** attempt);
  return Math.floor(random() * ceiling);
}

/** Retry-After as milliseconds: delta-seconds or an HTTP date (RFC 9110 10.2.3); undefined when absent or bad. */
export function parseRetryAfter(value: string | null, nowMs: number): number | undefined {
  if (value === null || value.trim() === '') return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - nowMs);
}
