import { AppMetrics } from '@app/platform';
import { Inject, Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { Counter, Gauge } from 'prom-client';
import { Clock } from '../clock';
import { GATEWAY_CONFIG, GatewayConfig } from '../config/gateway.config';
import { Consumer } from '../plans/consumer';
import { ConsumerChange, ConsumerChanges } from './consumer-changes';
import { KeyLookupRepository, KeyRecord } from './key-lookup.repository';
import { PlanLimits } from '../plans/plan-limits';

export type Authentication =
  | { outcome: 'valid'; consumer: Consumer }
  | { outcome: 'invalid'; reason: 'unknown' | 'revoked' | 'expired' | 'disabled' }
  /** Not in the cache and the database cannot be asked (down, or the lookup budget is spent): neither yes nor no. */
  | { outcome: 'unavailable'; retryAfterS: number };

/** Seconds a client is told to wait when the key store is unreachable, or busy with a flood of unknown keys. */
const RETRY_AFTER_DOWN_S = 5;
const RETRY_AFTER_BUSY_S = 1;

interface Entry {
  /** null: no such key (a negative entry). */
  record: KeyRecord | null;
  freshUntil: number;
  /** Entries older than the last "everything may have changed" are stale, whatever their TTL says. */
  generation: number;
}

/**
 * The data plane's view of the keys: a bounded LRU of known keys and a separate, smaller one of unknown hashes
 * (so that a flood of random keys cannot push the real ones out), each with a short TTL as the safety net
 * behind the published changes. A miss costs one indexed query, shared by concurrent requests for the same hash.
 * Expiry, revocation and disabling are evaluated on every hit, not only on load. While the database cannot be
 * reached, an entry past its TTL keeps answering (stale if error); only a key never seen gets "unavailable".
 * Memory is bounded by KEY_CACHE_SIZE + KEY_NEGATIVE_CACHE_SIZE entries, whatever the number of consumers.
 */
@Injectable()
export class KeyCache implements OnModuleInit {
  private readonly logger = new Logger('Consumers');
  private readonly known = new Map<string, Entry>();
  private readonly unknown = new Map<string, Entry>();
  private readonly byConsumer = new Map<string, Set<string>>();
  private readonly inflight = new Map<string, Promise<KeyRecord | null>>();
  private generation = 0;
  /** Bumped by every change: a load that overlapped a change is answered but not cached. */
  private changeSequence = 0;
  private databaseDown = false;
  private tokens: number;
  private refilledAt: number;
  private readonly lookups: Counter<'result'>;
  /** The hot path's label, bound once (a label lookup per request otherwise). */
  private readonly hits: Counter.Internal;
  private readonly queries: Counter<'outcome'>;

  constructor(
    private readonly lookup: KeyLookupRepository,
    private readonly planLimits: PlanLimits,
    private readonly changes: ConsumerChanges,
    private readonly clock: Clock,
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
    metrics: AppMetrics,
  ) {
    this.tokens = config.consumers.cache.lookupsPerSecond;
    this.refilledAt = performance.now();
    this.lookups = new Counter({
      name: 'gateway_key_cache_lookups_total',
      help: 'API key authentications by where the answer came from (hit, negative_hit, miss, stale, over_budget, unavailable).',
      labelNames: ['result'],
      registers: [metrics.registry],
    });
    this.hits = this.lookups.labels({ result: 'hit' });
    this.queries = new Counter({
      name: 'gateway_key_store_queries_total',
      help: 'Queries of the key store on a cache miss, by outcome (found, not_found, error).',
      labelNames: ['outcome'],
      registers: [metrics.registry],
    });
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
  }

  onModuleInit(): void {
    this.changes.onChange((change) => this.apply(change));
    this.changes.onReconnect(() => this.expireAll());
  }

  /** Whether authenticating `keyHash` would start a query: not cached (fresh or stale) and not being looked up. */
  needsLookup(keyHash: string): boolean {
    return !this.known.has(keyHash) && !this.unknown.has(keyHash) && !this.inflight.has(keyHash);
  }

  async authenticate(keyHash: string): Promise<Authentication> {
    // TTLs and the budget run on a monotonic clock; expiry dates are wall-clock (the injectable Clock).
    const tick = performance.now();
    const now = this.clock.now();
    const known = this.known.get(keyHash);
    if (known && this.fresh(known, tick)) {
      // Refresh its place in the LRU order.
      this.known.delete(keyHash);
      this.known.set(keyHash, known);
      this.hits.inc();
      return this.evaluate(known.record!, now);
    }
    const unknown = this.unknown.get(keyHash);
    if (unknown && this.fresh(unknown, tick)) {
      this.lookups.inc({ result: 'negative_hit' });
      return { outcome: 'invalid', reason: 'unknown' };
    }

    // Lookup budget (KEY_LOOKUPS_PER_SECOND): a flood of random keys from many addresses cannot turn into
    // more queries than this; while it is spent, keys never seen get 503 and cached keys are unaffected.
    if (!this.inflight.has(keyHash) && !this.takeLookupToken(tick)) {
      this.lookups.inc({ result: 'over_budget' });
      const stale = known ?? unknown;
      if (stale) return stale.record ? this.evaluate(stale.record, now) : { outcome: 'invalid', reason: 'unknown' };
      return { outcome: 'unavailable', retryAfterS: RETRY_AFTER_BUSY_S };
    }
    let record: KeyRecord | null;
    try {
      record = await this.load(keyHash);
    } catch (error) {
      this.reportDown(error as Error);
      const stale = known ?? unknown;
      if (stale) {
        this.lookups.inc({ result: 'stale' });
        return stale.record ? this.evaluate(stale.record, this.clock.now()) : { outcome: 'invalid', reason: 'unknown' };
      }
      this.lookups.inc({ result: 'unavailable' });
      return { outcome: 'unavailable', retryAfterS: RETRY_AFTER_DOWN_S };
    }
    this.reportUp();
    this.lookups.inc({ result: 'miss' });
    return record ? this.evaluate(record, this.clock.now()) : { outcome: 'invalid', reason: 'unknown' };
  }

  /** Forgets what a change names (both caches), or marks everything stale. */
  apply(change: ConsumerChange): void {
    this.changeSequence += 1;
    if (change.all) {
      this.expireAll();
      return;
    }
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

  /** A token bucket refilled at KEY_LOOKUPS_PER_SECOND, holding at most a second's worth. */
  private takeLookupToken(now: number): boolean {
    const rate = this.config.consumers.cache.lookupsPerSecond;
    this.tokens = Math.min(rate, this.tokens + ((now - this.refilledAt) / 1000) * rate);
    this.refilledAt = now;
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }

  private fresh(entry: Entry, tick: number): boolean {
    return entry.freshUntil > tick && entry.generation === this.generation;
  }

  private evaluate(record: KeyRecord, now: number): Authentication {
    if (record.revokedAt !== null) return { outcome: 'invalid', reason: 'revoked' };
    if (record.disabledAt !== null) return { outcome: 'invalid', reason: 'disabled' };
    if (record.expiresAt !== null && record.expiresAt.getTime() <= now) return { outcome: 'invalid', reason: 'expired' };
    const limits = this.planLimits.effective(record);
    if (!limits) return { outcome: 'invalid', reason: 'unknown' };
    return { outcome: 'valid', consumer: { name: record.name, plan: record.plan, limits } };
  }

  /** One query per hash at a time, however many requests carry it. */
  private load(keyHash: string): Promise<KeyRecord | null> {
    let pending = this.inflight.get(keyHash);
    if (!pending) {
      const sequence = this.changeSequence;
      pending = this.lookup
        .findByKeyHash(keyHash)
        .then(
          (record) => {
            this.queries.inc({ outcome: record ? 'found' : 'not_found' });
            if (sequence === this.changeSequence) this.remember(keyHash, record);
            return record;
          },
          (error: unknown) => {
            this.queries.inc({ outcome: 'error' });
            throw error;
          },
        )
        .finally(() => this.inflight.delete(keyHash));
      this.inflight.set(keyHash, pending);
    }
    return pending;
  }

  private remember(keyHash: string, record: KeyRecord | null): void {
    const { ttlMs, negativeTtlMs, size, negativeSize } = this.config.consumers.cache;
    const now = performance.now();
    this.forget(keyHash);
    if (record) {
      this.known.set(keyHash, { record, freshUntil: now + ttlMs, generation: this.generation });
      let hashes = this.byConsumer.get(record.consumerId);
      if (!hashes) this.byConsumer.set(record.consumerId, (hashes = new Set()));
      hashes.add(keyHash);
      while (this.known.size > size) this.forget(this.known.keys().next().value!);
    } else {
      this.unknown.set(keyHash, { record: null, freshUntil: now + negativeTtlMs, generation: this.generation });
      while (this.unknown.size > negativeSize) this.unknown.delete(this.unknown.keys().next().value!);
    }
  }

  private forget(keyHash: string): void {
    this.unknown.delete(keyHash);
    const entry = this.known.get(keyHash);
    if (!entry) return;
    this.known.delete(keyHash);
    const hashes = this.byConsumer.get(entry.record!.consumerId);
    hashes?.delete(keyHash);
    if (hashes?.size === 0) this.byConsumer.delete(entry.record!.consumerId);
  }

  private reportDown(error: Error): void {
    if (this.databaseDown) return;
    this.databaseDown = true;
    this.logger.error(`Key store unreachable (${error.message}): cached keys keep working, unseen keys get 503 until it returns`);
  }

  private reportUp(): void {
    if (!this.databaseDown) return;
    this.databaseDown = false;
    this.logger.warn('Key store reachable again');
  }
}
