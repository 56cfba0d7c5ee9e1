import { Clock } from '../clock';
import type { KeyRecord } from './key-lookup.repository';
import { TokenBucket } from './token-bucket';

/** What a batch's query answered for one hash: its key (null: no key has that hash), and when the query was sent. */
export interface BatchedLookup {
  record: KeyRecord | null;
  sentAt: number;
}

interface Waiter {
  hash: string;
  resolve(answer: BatchedLookup): void;
  reject(error: unknown): void;
}

/**
 * Batches' worth of hashes that may wait or be in a query still running. With the budget's refill, a hash waits
 * for at most that many queries to be sent before its own (never more than a second of the budget, which is why
 * it is `min(4, queries a second)`): no longer than the Retry-After a refusal would tell it. Counting the
 * running queries too turns a slow database into quick refusals rather than a pile of queries.
 */
const QUEUED_BATCHES = 4;

/**
 * The key cache's misses, looked up in batches: hashes asked for while a query is prepared (the same turn of the
 * event loop, or while the budget has no token) join one query of at most `batchSize` hashes, sent when the
 * budget (`queriesPerSecond`, KEY_LOOKUPS_PER_SECOND) has a token. A restart's burst of distinct keys is thus
 * learnt as fast as it comes, its batches the fuller the shorter the budget runs, and the budget still bounds
 * the queries: it counts queries, not hashes. Beyond `maxHashes` waiting or running, an unpaid hash is refused
 * (the caller answers 503).
 *
 * The batch size (KEY_LOOKUP_BATCH_SIZE, 200 by default): a query's cost is mostly its round trip until its batch
 * is large. Measured with 10,000 keys on the shared 2-core machine, one hash costs 0.4 ms a query on PostgreSQL
 * and 1.8 ms on the embedded PGlite; 200 hashes cost 3.5 ms and 13 ms (17 and 67 µs a hash), within 2 to 3 times
 * the per-hash cost of batches of 1,000 (10 and 24 µs), while one query still holds its connection for
 * milliseconds. At the default budget of 500 queries a second that is 100,000 hashes a second, far more than an
 * instance receives requests.
 *
 * A `paid` hash (a known key past its TTL, or a hash that took one of the few lookups of hashes not in the key
 * filter) is sent with the next batch whatever the budget and the bound, and unpaid hashes ride along in its
 * query: those queries are bounded by the cached keys and their TTL, not by the traffic.
 */
export class KeyLookupBatcher {
  /** The most hashes waiting or in a running query (paid ones included) before an unpaid hash is refused. */
  readonly maxHashes: number;
  private readonly budget: TokenBucket;
  private readonly paid: Waiter[] = [];
  private readonly unpaid: Waiter[] = [];
  /** Hashes in queries not answered yet. */
  private running = 0;
  private immediate: NodeJS.Immediate | undefined;
  /** Set while unpaid hashes wait for the budget's next token. */
  private timer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(
    private readonly query: (hashes: string[]) => Promise<Map<string, KeyRecord>>,
    private readonly clock: Clock,
    queriesPerSecond: number,
    private readonly batchSize: number,
    /** Told each query's number of hashes as it is sent (metrics). */
    private readonly sent: (hashes: number) => void = () => undefined,
  ) {
    this.budget = new TokenBucket(queriesPerSecond, clock.monotonic());
    this.maxHashes = batchSize * Math.min(QUEUED_BATCHES, queriesPerSecond);
  }

  /** The hash's answer from the next batch; undefined when the bound is reached (only for an unpaid hash). */
  lookUp(hash: string, paid: boolean): Promise<BatchedLookup> | undefined {
    if (!paid && this.paid.length + this.unpaid.length + this.running >= this.maxHashes) return undefined;
    return new Promise<BatchedLookup>((resolve, reject) => {
      (paid ? this.paid : this.unpaid).push({ hash, resolve, reject });
      // Sent at the end of this turn of the event loop, with whatever else it asks for; while unpaid hashes wait
      // for a token, its timer sends them (a paid hash goes at once).
      if (this.immediate || (this.timer && !paid)) return;
      clearTimeout(this.timer);
      this.timer = undefined;
      this.immediate = setImmediate(() => {
        this.immediate = undefined;
        this.flush();
      });
    });
  }

  /** From now on, what waits and what comes is sent without waiting for the budget (shutdown: nothing hangs). */
  close(): void {
    this.closed = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    this.flush();
  }

  private flush(): void {
    const now = this.clock.monotonic();
    while (this.paid.length > 0 || this.unpaid.length > 0) {
      // A batch with a paid hash is a query made anyway: it takes no token.
      if (this.paid.length === 0 && !this.closed && !this.budget.take(now)) {
        this.timer = setTimeout(
          () => {
            this.timer = undefined;
            this.flush();
          },
          Math.max(1, Math.ceil(this.budget.msUntilToken(now))),
        );
        // Waiting for a token keeps no process alive (a shutdown is close's to handle).
        this.timer.unref();
        return;
      }
      const batch = this.paid.splice(0, this.batchSize);
      batch.push(...this.unpaid.splice(0, this.batchSize - batch.length));
      this.send(batch, now);
    }
  }

  private send(batch: Waiter[], sentAt: number): void {
    this.running += batch.length;
    this.sent(batch.length);
    this.query(batch.map((waiter) => waiter.hash)).then(
      (found) => {
        this.running -= batch.length;
        for (const waiter of batch) waiter.resolve({ record: found.get(waiter.hash) ?? null, sentAt });
      },
      (error: unknown) => {
        this.running -= batch.length;
        for (const waiter of batch) waiter.reject(error);
      },
    );
  }
}
