import { USAGE_RANGE } from './usage-range';
import { addCounts, countAnswer, emptyCounts, outcomeOf, UsageCounts } from './usage-counts';

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

/** The operation a key's minute cells are folded into once USAGE_MAX_MINUTE_CELLS are held (its hour's first minute). */
export const FOLDED_OPERATION = '(overflow)';

/**
 * One minute of one operation of one key: the answers per outcome (OutcomeIndex: ok, client errors, rate limited,
 * server errors), then the credits they spent, at 4 + OutcomeIndex. A plain array of eight numbers: the request
 * path adds to it in place.
 */
export type MinuteCell = number[];

const newCell = (): MinuteCell => [0, 0, 0, 0, 0, 0, 0, 0];

/** A key's minutes of one hour: by operation, then by the minute's offset in the hour (0 to 59). */
export type MinutesByOperation = Map<string, Map<number, MinuteCell>>;

/**
 * One hour of one key of one consumer (or of the anonymous or overflow row): its key id is '' for those. A
 * consumer's key bucket also holds its answers per minute and operation (`minutes`), for usage_minutely.
 */
export interface UsageBucket extends UsageCounts {
  hour: number;
  consumer: string;
  keyId: string;
  /** Unset on the anonymous and overflow rows (nobody to bill: no minutes kept), and until a first answer. */
  minutes?: MinutesByOperation;
}

/** One row of usage_minutely: a minute, consumer and operation, its keys summed. */
export interface UsageMinuteRow {
  minute: number;
  consumer: string;
  operation: string;
  cell: MinuteCell;
}

const MINUTE_MS = 60_000;

/**
 * The minute rows of a batch: each key bucket's cells summed per (minute, consumer, operation), sorted in that
 * order (the upsert's lock order, the same on every instance). Work for the flush, never for the request path.
 */
export function minuteRowsOf(buckets: readonly UsageBucket[]): UsageMinuteRow[] {
  const rows = new Map<string, UsageMinuteRow>();
  for (const bucket of buckets) {
    if (bucket.minutes === undefined) continue;
    for (const [operation, cells] of bucket.minutes)
      for (const [offset, cell] of cells) {
        const minute = bucket.hour + offset * MINUTE_MS;
        const key = `${minute}\u0000${bucket.consumer}\u0000${operation}`;
        const row = rows.get(key);
        if (row === undefined) rows.set(key, { minute, consumer: bucket.consumer, operation, cell: [...cell] });
        else addCell(row.cell, cell);
      }
  }
  const compare = (x: string, y: string) => (x < y ? -1 : x > y ? 1 : 0);
  return [...rows.values()].sort(
    (x, y) => x.minute - y.minute || compare(x.consumer, y.consumer) || compare(x.operation, y.operation),
  );
}

function addCell(into: MinuteCell, from: MinuteCell): void {
  for (let i = 0; i < into.length; i += 1) into[i] += from[i];
}

/** What a flush takes: the buckets held, by hour then by key id (or special row). */
export type UsageBatch = Map<number, Map<string, UsageBucket>>;

export function bucketsOf(batch: UsageBatch): UsageBucket[] {
  const all: UsageBucket[] = [];
  for (const hour of batch.values()) for (const bucket of hour.values()) all.push(bucket);
  return all;
}

/** Bounds of what a recorder holds, and who is told when answers are folded to stay within them. */
export interface UsageRecorderLimits {
  /** Key buckets (USAGE_MAX_BUCKETS). */
  maxBuckets: number;
  /** Minute cells, every key's (USAGE_MAX_MINUTE_CELLS). */
  maxMinuteCells: number;
  /** An answer counted in its hour's OVERFLOW row (its key's bucket could not be held). */
  onFold?: () => void;
  /** An answer counted in its key's FOLDED_OPERATION cell (its minute's cell could not be held). */
  onMinuteFold?: () => void;
}

const nothing = (): void => undefined;

/**
 * Counts every /v1 answer in memory, in hourly buckets per key (the consumer with it), and within a consumer's
 * key bucket per operation and minute (its minute cells), until a flush takes them (drain) and writes them with
 * an additive upsert. The request path pays one map lookup for the bucket, two for the cell (an operation is one
 * of the route table's strings, a minute a small integer: no key is built) and a few additions.
 *
 * Bounded: at most `maxBuckets` consumer buckets are held; past it, a new key's answers of that hour are counted
 * in the hour's OVERFLOW row instead (`onFold` is told, for the metric), so every total stays exact while memory
 * stays bounded. The anonymous and overflow rows are always there: at most maxBuckets + 2 per hour held. Likewise
 * at most `maxMinuteCells` minute cells: past it, a new cell's answers go to its key's FOLDED_OPERATION cell of
 * the hour's first minute (one per bucket at most), so the consumer's totals stay exact, the minute and the
 * operation of those answers are lost.
 */
export class UsageRecorder {
  private batch: UsageBatch = new Map();
  private held = 0;
  private cells = 0;
  private currentHour = -1;
  private current: Map<string, UsageBucket> | undefined;
  private readonly maxBuckets: number;
  private readonly maxMinuteCells: number;
  private readonly onFold: () => void;
  private readonly onMinuteFold: () => void;

  constructor(limits: UsageRecorderLimits) {
    this.maxBuckets = limits.maxBuckets;
    this.maxMinuteCells = limits.maxMinuteCells;
    this.onFold = limits.onFold ?? nothing;
    this.onMinuteFold = limits.onMinuteFold ?? nothing;
  }

  /** Buckets held (consumer buckets, without the anonymous and overflow rows). */
  get size(): number {
    return this.held;
  }

  /** Minute cells held (the folded ones included). */
  get minuteCells(): number {
    return this.cells;
  }

  /**
   * One answer: `consumer` and `keyId` when the key was valid, else undefined (the anonymous row); the operation
   * it was for and the credits its admission spent (kept per minute for a consumer's key only).
   */
  record(
    consumer: string | undefined,
    keyId: string | undefined,
    status: number,
    ms: number,
    now: number,
    operation: string,
    credits: number,
  ): void {
    const hour = now - (now % USAGE_RANGE.hour.ms);
    let buckets = this.current;
    if (hour !== this.currentHour || buckets === undefined) buckets = this.hourOf(hour);
    const bucket = this.bucketIn(buckets, hour, consumer, keyId);
    const outcome = outcomeOf(status);
    countAnswer(bucket, outcome, ms);
    if (bucket.keyId === '') return;
    const cell = this.cellOf(bucket, operation, ((now - hour) / MINUTE_MS) | 0);
    cell[outcome] += 1;
    cell[4 + outcome] += credits;
  }

  /** Everything held, handed to the flush; the recorder starts empty. */
  drain(): UsageBatch {
    const batch = this.batch;
    this.batch = new Map();
    this.held = 0;
    this.cells = 0;
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
        const target = this.bucketIn(
          into,
          hour,
          special ? undefined : bucket.consumer,
          special ? undefined : bucket.keyId,
          special ? bucket.consumer : undefined,
        );
        addCounts(target, bucket);
        // A key folded into OVERFLOW on the way back loses its minutes, as its hour row loses its answers.
        if (target.keyId === '' || bucket.minutes === undefined) continue;
        for (const [operation, cells] of bucket.minutes)
          for (const [offset, cell] of cells) addCell(this.cellOf(target, operation, offset), cell);
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
      bucket = { hour, consumer, keyId, ...emptyCounts(), minutes: undefined };
      buckets.set(keyId, bucket);
      this.held += 1;
    }
    return bucket;
  }

  private specialIn(buckets: Map<string, UsageBucket>, hour: number, name: string): UsageBucket {
    let bucket = buckets.get(name);
    if (bucket === undefined) {
      bucket = { hour, consumer: name, keyId: '', ...emptyCounts(), minutes: undefined };
      buckets.set(name, bucket);
    }
    return bucket;
  }

  /** The cell of `operation`'s minute `offset` in `bucket`; its key's folded cell once maxMinuteCells are held. */
  private cellOf(bucket: UsageBucket, operation: string, offset: number): MinuteCell {
    let minutes = bucket.minutes;
    if (minutes === undefined) bucket.minutes = minutes = new Map();
    // Operations are the route table's (a fixed set): their maps need no bound of their own.
    let cells = minutes.get(operation);
    if (cells === undefined) minutes.set(operation, (cells = new Map()));
    let cell = cells.get(offset);
    if (cell === undefined) {
      if (this.cells >= this.maxMinuteCells && operation !== FOLDED_OPERATION) {
        this.onMinuteFold();
        return this.cellOf(bucket, FOLDED_OPERATION, 0);
      }
      cells.set(offset, (cell = newCell()));
      this.cells += 1;
    }
    return cell;
  }
}
