import { USAGE_RANGE } from './usage-range';
import { addCounts, countAnswer, emptyCounts, UsageCounts } from './usage-counts';

/** The row of answers without a valid key (no key material, no address: a flood of random keys adds nothing). */
export const ANONYMOUS = '(anonymous)';
/** The row new consumers of an hour are folded into once USAGE_MAX_BUCKETS are held (totals stay exact). */
export const OVERFLOW = '(overflow)';
/**
 * The fleet's total of an hour (and day), written by each flush beside the rows it sums, so that the fleet's
 * history reads one row per bucket (not every consumer's).
 */
export const FLEET = '*';
/** None can be a consumer's name (CONSUMER_NAME_PATTERN has no parentheses and no `*`). */
export const SPECIAL_ROWS: readonly string[] = [ANONYMOUS, OVERFLOW, FLEET];

/** One hour of one key of one consumer (or of the anonymous or overflow row): its key id is '' for those. */
export interface UsageBucket extends UsageCounts {
  hour: number;
  consumer: string;
  keyId: string;
}

/** What a flush takes: the buckets held, by hour then by key id (or special row). */
export type UsageBatch = Map<number, Map<string, UsageBucket>>;

export function bucketsOf(batch: UsageBatch): UsageBucket[] {
  const all: UsageBucket[] = [];
  for (const hour of batch.values()) for (const bucket of hour.values()) all.push(bucket);
  return all;
}

/**
 * Counts every /v1 answer in memory, in hourly buckets per key (the consumer with it), until a flush takes them
 * (drain) and writes them with an additive upsert. The request path pays one map lookup and a few additions.
 *
 * Bounded: at most `maxBuckets` consumer buckets are held; past it, a new key's answers of that hour are counted
 * in the hour's OVERFLOW row instead (`onFold` is told, for the metric), so every total stays exact while memory
 * stays bounded. The anonymous and overflow rows are always there: at most maxBuckets + 2 per hour held.
 */
export class UsageRecorder {
  private batch: UsageBatch = new Map();
  private held = 0;
  private currentHour = -1;
  private current: Map<string, UsageBucket> | undefined;

  constructor(
    private readonly maxBuckets: number,
    private readonly onFold: () => void = () => undefined,
  ) {}

  /** Buckets held (consumer buckets, without the anonymous and overflow rows). */
  get size(): number {
    return this.held;
  }

  /** One answer: `consumer` and `keyId` when the key was valid, else undefined (the anonymous row). */
  record(consumer: string | undefined, keyId: string | undefined, status: number, ms: number, now: number): void {
    const hour = now - (now % USAGE_RANGE.hour.ms);
    let buckets = this.current;
    if (hour !== this.currentHour || buckets === undefined) buckets = this.hourOf(hour);
    countAnswer(this.bucketIn(buckets, hour, consumer, keyId), status, ms);
  }

  /** Everything held, handed to the flush; the recorder starts empty. */
  drain(): UsageBatch {
    const batch = this.batch;
    this.batch = new Map();
    this.held = 0;
    this.current = undefined;
    this.currentHour = -1;
    return batch;
  }

  /** A batch that could not be written, counted in again (still within the bound: the excess is folded). */
  restore(batch: UsageBatch): void {
    for (const [hour, buckets] of batch) {
      const into = this.hourOf(hour);
      for (const bucket of buckets.values()) {
        const special = bucket.keyId === '';
        addCounts(
          this.bucketIn(
            into,
            hour,
            special ? undefined : bucket.consumer,
            special ? undefined : bucket.keyId,
            special ? bucket.consumer : undefined,
          ),
          bucket,
        );
      }
    }
  }

  private hourOf(hour: number): Map<string, UsageBucket> {
    let buckets = this.batch.get(hour);
    if (buckets === undefined) {
      buckets = new Map();
      this.batch.set(hour, buckets);
    }
    if (hour >= this.currentHour) {
      this.currentHour = hour;
      this.current = buckets;
    }
    return buckets;
  }

  private bucketIn(
    buckets: Map<string, UsageBucket>,
    hour: number,
    consumer: string | undefined,
    keyId: string | undefined,
    special = ANONYMOUS,
  ): UsageBucket {
    if (consumer === undefined || keyId === undefined) return this.specialIn(buckets, hour, special);
    let bucket = buckets.get(keyId);
    if (bucket === undefined) {
      if (this.held >= this.maxBuckets) {
        this.onFold();
        return this.specialIn(buckets, hour, OVERFLOW);
      }
      bucket = { hour, consumer, keyId, ...emptyCounts() };
      buckets.set(keyId, bucket);
      this.held += 1;
    }
    return bucket;
  }

  private specialIn(buckets: Map<string, UsageBucket>, hour: number, name: string): UsageBucket {
    let bucket = buckets.get(name);
    if (bucket === undefined) {
      bucket = { hour, consumer: name, keyId: '', ...emptyCounts() };
      buckets.set(name, bucket);
    }
    return bucket;
  }
}
