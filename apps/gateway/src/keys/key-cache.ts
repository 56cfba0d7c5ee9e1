import { AppMetrics } from '@app/platform';
import { Inject, Injectable, Logger, OnApplicationBootstrap, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { LRUCache } from 'lru-cache';
import { Counter, Gauge, Histogram } from 'prom-client';
import { Clock } from '../clock';
import { GATEWAY_CONFIG, GatewayConfig } from '../config/gateway.config';
import type { AddressRestriction } from '../consumers/allowed-addresses';
import { Consumer } from '../consumers/consumer';
import { consumerOf } from '../consumers/consumer-record';
import { ConsumerChange, ConsumerChanges } from '../consumers/consumer-changes';
import { KeyFilter } from './key-filter';
import { KeyLookupBatcher } from './key-lookup-batcher';
import { KeyLookupRepository, KeyRecord } from './key-lookup.repository';
import { PlanLimits } from '../plans/plan-limits';
import { TokenBucket } from './token-bucket';

export type Authentication =
  /** `keyId`: which of the consumer's keys (its id, never the key), for the usage history. */
  | { outcome: 'valid'; consumer: Consumer; keyId: string; addresses: AddressRestriction | undefined }
  | { outcome: 'invalid'; reason: 'unknown' | 'revoked' | 'expired' | 'disabled' }
  /** Not in the cache and the database cannot be asked (down, or the lookup budget is spent): neither yes nor no. */
  | { outcome: 'unavailable'; retryAfterS: number };

/** Seconds a client is told to wait when the key store is unreachable, or busy with a flood of unknown keys. */
const RETRY_AFTER_DOWN_S = 5;
const RETRY_AFTER_BUSY_S = 1;
const UNKNOWN: Authentication = { outcome: 'invalid', reason: 'unknown' };
/** A SHA-256 no key has (readiness looks it up to see that lookups get answers). */
const PROBE_HASH = '0'.repeat(64);

interface Entry<R extends KeyRecord | null = KeyRecord | null> {
  /** null: no such key (a negative entry). */
  record: R;
  freshUntil: number;
  /** Entries older than the last "everything may have changed" are stale, whatever their TTL says. */
  generation: number;
}

/**
 * The data plane's view of the keys: a filter of every valid key hash (KeyFilter, a Bloom filter kept current by
 * the published changes), a bounded LRU of known keys and a separate, smaller one of unknown hashes (so that junk
 * cannot push the real keys out), each with a short TTL as the safety net behind the published changes. A hash
 * the filter does not hold is refused at once, without a query (but for a few a second, for a key whose change
 * was not heard): a flood of random keys costs no query but the filter's false positives (about 1 %) and those
 * few, and the false positives alone spend the lookup budget. A miss joins the next batch query
 * (KeyLookupBatcher: up to KEY_LOOKUP_BATCH_SIZE hashes a query, KEY_LOOKUPS_PER_SECOND queries a second), shared
 * by concurrent requests for the same hash. Expiry, revocation and disabling are evaluated on every hit,
 * not only on load. No entry is trusted past its TTL, counted from when its query was sent, whatever the budget
 * says; the one exception is the database being unreachable: then an entry past its TTL keeps answering (stale
 * if error) and only a key never seen gets "unavailable". Memory: KEY_CACHE_SIZE + KEY_NEGATIVE_CACHE_SIZE
 * entries, plus the filter's ~1.3 MB per million valid keys.
 */
@Injectable()
export class KeyCache implements OnModuleInit, OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('Consumers');
  /**
   * lru-cache keeps the order and the bound (evicting the least recently used); freshness stays ours (a TTL from
   * when the query was sent, and the generation), since a stale entry must stay to answer while the database is down.
   */
  private readonly known: LRUCache<string, Entry<KeyRecord>>;
  /** Looked up with peek (no recency): junk hashes leave in the order they came. */
  private readonly unknown: LRUCache<string, Entry<null>>;
  private readonly byConsumer = new Map<string, Set<string>>();
  private readonly inflight = new Map<string, Promise<KeyRecord | null>>();
  private generation = 0;
  /** Bumped by every change: a load that overlapped a change is answered but not cached. */
  private changeSequence = 0;
  private databaseDown = false;
  /** Misses in batch queries, KEY_LOOKUPS_PER_SECOND of them a second for hashes the filter may hold. */
  private readonly batcher: KeyLookupBatcher;
  /** 1 % of it (at least 1 a second): queries for hashes the filter does not hold (a change not heard). */
  private readonly unheardBudget: TokenBucket;
  private unheardWarnedAt = -Infinity;
  private readonly lookups: Counter<'result'>;
  /** The hot path's labels, bound once (a label lookup per request otherwise). */
  private readonly hits: Counter.Internal;
  private readonly notInFilter: Counter.Internal;
  private readonly filter: KeyFilter;
  private readonly queries: Counter<'outcome'>;

  constructor(
    private readonly lookup: KeyLookupRepository,
    private readonly planLimits: PlanLimits,
    private readonly changes: ConsumerChanges,
    private readonly clock: Clock,
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
    metrics: AppMetrics,
  ) {
    const { lookupsPerSecond, lookupBatchSize, size, negativeSize } = config.consumers.cache;
    this.known = new LRUCache({
      max: size,
      // Evicted, forgotten or replaced: out of its consumer's index too.
      dispose: ({ record }, keyHash) => {
        const hashes = this.byConsumer.get(record.consumerId);
        hashes?.delete(keyHash);
        if (hashes?.size === 0) this.byConsumer.delete(record.consumerId);
      },
    });
    this.unknown = new LRUCache({ max: negativeSize });
    this.unheardBudget = new TokenBucket(Math.max(1, Math.floor(lookupsPerSecond / 100)), clock.monotonic());
    this.lookups = new Counter({
      name: 'gateway_key_cache_lookups_total',
      help: 'API key authentications by where the answer came from (hit, not_in_filter, negative_hit, miss, stale, over_budget: refused beyond the lookup queue bound, unavailable).',
      labelNames: ['result'],
      registers: [metrics.registry],
    });
    this.hits = this.lookups.labels({ result: 'hit' });
    this.notInFilter = this.lookups.labels({ result: 'not_in_filter' });
    this.queries = new Counter({
      name: 'gateway_key_store_queries_total',
      help: 'Key hashes looked up in the key store on cache misses, by outcome (found, not_found, error); a query carries a batch of them (gateway_key_store_batch_size).',
      labelNames: ['outcome'],
      registers: [metrics.registry],
    });
    const batchSizes = new Histogram({
      name: 'gateway_key_store_batch_size',
      help: 'Key hashes per query of the key store on cache misses (its count: the queries).',
      buckets: [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000],
      registers: [metrics.registry],
    });
    this.batcher = new KeyLookupBatcher(
      (hashes) => lookup.findByKeyHashes(hashes),
      clock,
      lookupsPerSecond,
      lookupBatchSize,
      (hashes) => batchSizes.observe(hashes),
    );
    const sizes = () => ({ known: this.known.size, unknown: this.unknown.size });
    new Gauge({
      name: 'gateway_key_cache_entries',
      help: 'Entries in the key cache (known keys, unknown hashes).',
      labelNames: ['kind'],
      registers: [metrics.registry],
      collect() {
        const { known, unknown } = sizes();
        this.set({ kind: 'known' }, known);
        this.set({ kind: 'unknown' }, unknown);
      },
    });
    const rebuilds = new Counter({
      name: 'gateway_key_filter_rebuilds_total',
      help: 'Builds of the key filter from the database, by outcome (ok, error).',
      labelNames: ['outcome'],
      registers: [metrics.registry],
    });
    const lastRebuild = new Gauge({
      name: 'gateway_key_filter_rebuild_seconds',
      help: 'Duration of the last successful build of the key filter.',
      registers: [metrics.registry],
    });
    this.filter = new KeyFilter(lookup, config.consumers.cache.filterRebuildMs, {
      rebuilt: (ms, keys, bytes) => {
        rebuilds.inc({ outcome: 'ok' });
        lastRebuild.set(ms / 1000);
        this.logger.debug(`Key filter built: ${keys} keys, ${(bytes / 1048576).toFixed(2)} MB, ${Math.round(ms)} ms`);
      },
      failed: (error, first) => {
        rebuilds.inc({ outcome: 'error' });
        const message = `Cannot build the key filter (${error.message}): the last one built stays in use; without one, unseen keys are looked up within KEY_LOOKUPS_PER_SECOND`;
        if (first) this.logger.error(message);
        else this.logger.debug(message);
      },
    });
    const filterState = () => this.filter.state;
    for (const [name, help, read] of [
      [
        'gateway_key_filter_keys',
        'Key hashes in the key filter (valid keys at its last build, plus those added by changes since).',
        () => filterState().keys,
      ],
      ['gateway_key_filter_bytes', 'Memory of the key filter.', () => filterState().bytes],
      [
        'gateway_key_filter_complete',
        '1 when the key filter holds every valid key (unknown keys refused without a query), 0 while it is built.',
        () => Number(filterState().complete),
      ],
    ] as const) {
      new Gauge({
        name,
        help,
        registers: [metrics.registry],
        collect() {
          this.set(read());
        },
      });
    }
  }

  onModuleInit(): void {
    this.changes.onChange((change) => this.apply(change));
    // Messages may have been lost: every entry is re-checked on its next use, and the filter rebuilt.
    this.changes.onReconnect(() => {
      this.expireAll();
      this.filter.invalidate();
    });
  }

  /** Builds the key filter before the gateway takes requests (after the migrations: every onModuleInit ran). */
  async onApplicationBootstrap(): Promise<void> {
    await this.filter.start();
  }

  onModuleDestroy(): void {
    this.filter.close();
    this.batcher.close();
  }

  async authenticate(keyHash: string): Promise<Authentication> {
    // TTLs and the budget run on the monotonic clock, expiry dates on the wall clock (both the injectable Clock's).
    const tick = this.clock.monotonic();
    // get: refreshes its place in the LRU order (a stale entry is about to be read again).
    const known = this.known.get(keyHash);
    if (known && this.fresh(known, tick)) {
      this.hits.inc();
      return this.evaluate(known.record, this.clock.now());
    }
    const unknown = this.unknown.peek(keyHash);
    if (unknown && this.fresh(unknown, tick)) {
      this.lookups.inc({ result: 'negative_hit' });
      return UNKNOWN;
    }
    const excluded = this.filter.excludes(keyHash);
    // Paid: looked up whatever the budget. A known key past its TTL is read again whatever the budget (at most one
    // query per known key and TTL): an entry is never answered past its TTL because a flood spent the budget.
    let paid = known !== undefined;
    if (excluded) {
      // Not in the filter: no valid key, unless its change never reached this instance (a lost message, or
      // instances sharing the database over different change channels). A few such hashes a second are still
      // looked up (1 % of the budget, their own): enough for such a key when no flood spends them; a flood of
      // random keys is refused without a query once they are spent (microseconds: no query, no budget).
      if (!this.inflight.has(keyHash) && !this.unheardBudget.take(tick)) {
        this.notInFilter.inc();
        return UNKNOWN;
      }
      paid = true;
    }
    // Hashes the filter may hold that this instance does not know as keys (real keys it has not seen, the
    // filter's false positives, any unseen hash while the filter is incomplete) wait for a batch within the
    // lookup budget; beyond the batcher's bound (a few batches' worth waiting or being answered: the budget or
    // the database cannot keep up) they get 503.
    const loading = this.load(keyHash, paid);
    if (!loading) {
      this.lookups.inc({ result: 'over_budget' });
      return { outcome: 'unavailable', retryAfterS: RETRY_AFTER_BUSY_S };
    }
    let record: KeyRecord | null;
    try {
      record = await loading;
    } catch (error) {
      this.reportDown(error as Error);
      // The database is unreachable: the one case where an entry past its TTL still answers (stale if error).
      const stale = known ?? unknown;
      if (stale) {
        this.lookups.inc({ result: 'stale' });
        return stale.record ? this.evaluate(stale.record, this.clock.now()) : UNKNOWN;
      }
      this.lookups.inc({ result: 'unavailable' });
      return { outcome: 'unavailable', retryAfterS: RETRY_AFTER_DOWN_S };
    }
    this.reportUp();
    this.lookups.inc({ result: 'miss' });
    if (excluded && record && record.revokedAt === null) this.heardLate(keyHash);
    return record ? this.evaluate(record, this.clock.now()) : UNKNOWN;
  }

  /** Forgets what a change names (both caches) and adds its hashes to the filter, or marks everything stale. */
  apply(change: ConsumerChange): void {
    this.changeSequence += 1;
    if (change.all) {
      this.expireAll();
      this.filter.invalidate();
      return;
    }
    // A new key is named by its change: in the filter at once (an extra hash, e.g. a revoked one, costs nothing).
    this.filter.add(change.keyHashes);
    for (const hash of change.keyHashes) this.forget(hash);
    for (const id of change.consumerIds) for (const hash of [...(this.byConsumer.get(id) ?? [])]) this.forget(hash);
  }

  /** Every entry is re-checked on its next use (kept meanwhile, to answer if the database is down). */
  expireAll(): void {
    this.changeSequence += 1;
    this.generation += 1;
  }

  get size(): { known: number; unknown: number } {
    return { known: this.known.size, unknown: this.unknown.size };
  }

  /** The key filter: complete (refuses unknown keys), hashes held, bytes. */
  get filterState(): { complete: boolean; keys: number; bytes: number } {
    return this.filter.state;
  }

  /**
   * Whether a key this instance has never seen can be looked up now: the lookup's own query, for a hash no key
   * has, answers within `withinMs` through the pool the lookups use. Undefined when it does, else what went wrong
   * (every connection held by others, a database away or locked). Readiness asks it; the answer is not cached.
   */
  async unseenKeyLookupProblem(withinMs: number): Promise<string | undefined> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<string>((resolve) => {
      timer = setTimeout(() => resolve(`a key lookup got no answer within ${withinMs} ms`), withinMs);
    });
    const probe = this.lookup.findByKeyHashes([PROBE_HASH]).then(
      () => undefined,
      (error: Error) => `a key lookup failed: ${error.message}`,
    );
    try {
      return await Promise.race([probe, late]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Rebuilds the key filter from the database now (what the periodic rebuild does). */
  rebuildFilter(): Promise<void> {
    return this.filter.rebuild();
  }

  /** A key the filter did not hold: into the filter now, and said (at most every 10 minutes) for operators. */
  private heardLate(keyHash: string): void {
    this.filter.add([keyHash]);
    const now = this.clock.monotonic();
    if (now - this.unheardWarnedAt < 600_000) return;
    this.unheardWarnedAt = now;
    this.logger.warn(
      'A valid key was not in the key filter: its change did not reach this instance (a lost message, or instances sharing the consumers database over different change channels); such keys are refused under a flood until the filter is rebuilt',
    );
  }

  private fresh(entry: Entry, tick: number): boolean {
    return entry.freshUntil > tick && entry.generation === this.generation;
  }

  private evaluate(record: KeyRecord, now: number): Authentication {
    if (record.revokedAt !== null) return { outcome: 'invalid', reason: 'revoked' };
    if (record.disabledAt !== null) return { outcome: 'invalid', reason: 'disabled' };
    if (record.expiresAt !== null && record.expiresAt.getTime() <= now)
      return { outcome: 'invalid', reason: 'expired' };
    const consumer = consumerOf(record, this.planLimits);
    if (!consumer) return { outcome: 'invalid', reason: 'unknown' };
    return { outcome: 'valid', consumer, keyId: record.keyId, addresses: record.addresses };
  }

  /**
   * One lookup per hash at a time, however many requests carry it; undefined when the batcher refuses it (an
   * unpaid hash beyond its bound).
   */
  private load(keyHash: string, paid: boolean): Promise<KeyRecord | null> | undefined {
    let pending = this.inflight.get(keyHash);
    if (pending) return pending;
    // A change from now until the answer (while it waits for its batch, too) leaves the answer uncached.
    const sequence = this.changeSequence;
    const batched = this.batcher.lookUp(keyHash, paid);
    if (!batched) return undefined;
    pending = batched
      .then(
        // The answer is the database's state when the query was sent: its TTL runs from then, not from the
        // answer (which a loaded database may give seconds later).
        ({ record, sentAt }) => {
          this.queries.inc({ outcome: record ? 'found' : 'not_found' });
          if (sequence === this.changeSequence) this.remember(keyHash, record, sentAt);
          return record;
        },
        (error: unknown) => {
          this.queries.inc({ outcome: 'error' });
          throw error;
        },
      )
      .finally(() => this.inflight.delete(keyHash));
    this.inflight.set(keyHash, pending);
    return pending;
  }

  private remember(keyHash: string, record: KeyRecord | null, now: number): void {
    const { ttlMs, negativeTtlMs } = this.config.consumers.cache;
    this.forget(keyHash);
    if (record) {
      // Into the consumer's index before the set: an entry the set evicts leaves it through dispose.
      let hashes = this.byConsumer.get(record.consumerId);
      if (!hashes) this.byConsumer.set(record.consumerId, (hashes = new Set()));
      hashes.add(keyHash);
      this.known.set(keyHash, { record, freshUntil: now + ttlMs, generation: this.generation });
    } else {
      this.unknown.set(keyHash, { record: null, freshUntil: now + negativeTtlMs, generation: this.generation });
    }
  }

  /** Out of both caches (and, through dispose, out of its consumer's index). */
  private forget(keyHash: string): void {
    this.unknown.delete(keyHash);
    this.known.delete(keyHash);
  }

  private reportDown(error: Error): void {
    if (this.databaseDown) return;
    this.databaseDown = true;
    this.logger.error(
      `Key store unreachable (${error.message}): cached keys keep working, unseen keys get 503 until it returns`,
    );
  }

  private reportUp(): void {
    if (!this.databaseDown) return;
    this.databaseDown = false;
    this.logger.warn('Key store reachable again');
  }
}
