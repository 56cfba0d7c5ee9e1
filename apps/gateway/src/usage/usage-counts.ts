/**
 * What one hour (or day) of answers counts, and how an hour's latency percentiles are read back from a few
 * histogram buckets. One source of truth for the columns, the recorder, the upsert and the API's fields.
 */

/** Upper bounds (ms, inclusive) of the latency histogram's buckets; one more bucket holds everything slower. */
const LATENCY_BOUNDS_MS = [5, 10, 25, 50, 100, 250, 500, 1000, 2500] as const;

/** One column per histogram bucket: latency_le_5ms ... latency_le_2500ms, latency_over_2500ms. */
export const LATENCY_COLUMNS: readonly string[] = [
  ...LATENCY_BOUNDS_MS.map((bound) => `latency_le_${bound}ms`),
  `latency_over_${LATENCY_BOUNDS_MS[LATENCY_BOUNDS_MS.length - 1]}ms`,
];

/** The outcome counters, as columns (snake_case) and as API fields (camelCase). */
export const COUNTER_COLUMNS = ['requests', 'ok', 'client_errors', 'rate_limited', 'server_errors'] as const;

/** Every additive column of a usage row: counters, latency sum, histogram. */
export const ADDITIVE_COLUMNS: readonly string[] = [...COUNTER_COLUMNS, 'latency_sum_ms', ...LATENCY_COLUMNS];

export interface UsageCounts {
  requests: number;
  ok: number;
  clientErrors: number;
  rateLimited: number;
  serverErrors: number;
  latencySumMs: number;
  /** Counts per LATENCY_COLUMNS bucket. */
  latency: number[];
}

export function emptyCounts(): UsageCounts {
  return {
    requests: 0,
    ok: 0,
    clientErrors: 0,
    rateLimited: 0,
    serverErrors: 0,
    latencySumMs: 0,
    latency: new Array<number>(LATENCY_COLUMNS.length).fill(0),
  };
}

/** The histogram bucket of a duration. */
function latencyBucket(ms: number): number {
  for (let i = 0; i < LATENCY_BOUNDS_MS.length; i += 1) if (ms <= LATENCY_BOUNDS_MS[i]) return i;
  return LATENCY_BOUNDS_MS.length;
}

/** An answer's outcome, as an index: 0 ok (2xx, 3xx), 1 client error (4xx but 429), 2 rate limited (429), 3 server error. */
export type OutcomeIndex = 0 | 1 | 2 | 3;

/** The outcome columns, in OutcomeIndex order (usage_minutely's counts; its credits are `<outcome>_credits`). */
export const OUTCOME_COLUMNS = ['ok', 'client_errors', 'rate_limited', 'server_errors'] as const;

/** usage_minutely's value columns, in a MinuteCell's order: the outcome counts, then the credits they spent. */
export const MINUTE_VALUE_COLUMNS: readonly string[] = [
  ...OUTCOME_COLUMNS,
  ...OUTCOME_COLUMNS.map((outcome) => `${outcome}_credits`),
];

/** Which outcome an answer's status counts in: the one rule of the history's outcomes. */
export function outcomeOf(status: number): OutcomeIndex {
  return status === 429 ? 2 : status >= 500 ? 3 : status >= 400 ? 1 : 0;
}

/** Counts one answer: its outcome (outcomeOf) and how long it took. */
export function countAnswer(counts: UsageCounts, outcome: OutcomeIndex, ms: number): void {
  counts.requests += 1;
  if (outcome === 0) counts.ok += 1;
  else if (outcome === 1) counts.clientErrors += 1;
  else if (outcome === 2) counts.rateLimited += 1;
  else counts.serverErrors += 1;
  counts.latencySumMs += ms;
  counts.latency[latencyBucket(ms)] += 1;
}

export function addCounts(into: UsageCounts, from: UsageCounts): void {
  into.requests += from.requests;
  into.ok += from.ok;
  into.clientErrors += from.clientErrors;
  into.rateLimited += from.rateLimited;
  into.serverErrors += from.serverErrors;
  into.latencySumMs += from.latencySumMs;
  for (let i = 0; i < into.latency.length; i += 1) into.latency[i] += from.latency[i];
}

/**
 * The latency at quantile `q` (0.5, 0.95) read from a histogram: linear interpolation inside the bucket the
 * quantile falls in (between the bucket's lower and upper bound), so it is an estimate within that bucket's
 * width; in the last, open bucket it is that bucket's lower bound (2,500 ms: "at least"). Null without answers.
 */
export function latencyQuantile(latency: readonly number[], q: number): number | null {
  const total = latency.reduce((sum, n) => sum + n, 0);
  if (total === 0) return null;
  const rank = q * total;
  let below = 0;
  for (let i = 0; i < latency.length; i += 1) {
    const inBucket = latency[i];
    if (inBucket > 0 && below + inBucket >= rank) {
      const lower = i === 0 ? 0 : LATENCY_BOUNDS_MS[i - 1];
      if (i === LATENCY_BOUNDS_MS.length) return lower;
      const upper = LATENCY_BOUNDS_MS[i];
      return Math.round((lower + ((rank - below) / inBucket) * (upper - lower)) * 100) / 100;
    }
    below += inBucket;
  }
  return LATENCY_BOUNDS_MS[LATENCY_BOUNDS_MS.length - 1];
}
