import { createHash } from 'node:crypto';
import { AppMetrics } from '@app/platform';
import { Inject, Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { LRUCache } from 'lru-cache';
import { Counter } from 'prom-client';
import { Clock } from '../clock';
import { clientBindingHash } from '../client-bindings/client-binding';
import { GATEWAY_CONFIG, GatewayConfig } from '../config/gateway.config';
import type { AddressRestriction } from '../consumers/allowed-addresses';
import type { Consumer } from '../consumers/consumer';
import { ConsumerChange, ConsumerChanges } from '../consumers/consumer-changes';
import { consumerOf } from '../consumers/consumer-record';
import type { KeyRecord } from '../keys/key-lookup.repository';
import { PlanLimits } from '../plans/plan-limits';
import { ClientBindingLookupRepository } from './client-binding-lookup.repository';
import { IssuerKeys } from './issuer-keys';
import { ScopeGrant } from './scope-grant';
import { TokenVerifier } from './token-verifier';

export type TokenAuthentication =
  /** `keyId`: the client binding's id (the usage history's credential); `grant`: what its scopes allow, if mapped. */
  | {
      outcome: 'valid';
      consumer: Consumer;
      keyId: string;
      addresses: AddressRestriction | undefined;
      grant?: ScopeGrant;
    }
  | { outcome: 'invalid'; reason: 'invalid' | 'disabled' }
  /** The issuer or the consumers database cannot be asked now, for a token or binding not held: 503. */
  | { outcome: 'unavailable'; retryAfterS: number };

/** A verified token, held by its SHA-256 until `goodUntilMs` (wall clock). */
interface TokenEntry {
  goodUntilMs: number;
  bindingHash: string;
  issuer: string;
  clientId: string;
  grant?: ScopeGrant;
}

/** A binding as last read (null: none), fresh until `freshUntil` (monotonic) in its generation. */
interface BindingEntry {
  record: KeyRecord | null;
  freshUntil: number;
  generation: number;
}

const INVALID: TokenAuthentication = { outcome: 'invalid', reason: 'invalid' };
const RETRY_AFTER_DOWN_S = 5;

/**
 * OAuth access tokens as credentials (docs/oauth.md), the token twin of KeyCache. A verified token is held by its
 * SHA-256 until its `exp` (an introspected one, at most the issuer's introspection TTL) in a bounded LRU
 * (OAUTH_TOKEN_CACHE_SIZE), so a known token costs a hash and two map reads, about what a key costs; a token the
 * issuer did not call active is held as such for the same TTL (a smaller LRU), so junk opaque tokens do not each
 * cost an introspection. The binding (issuer, client id) → consumer is held like a key (KEY_CACHE_SIZE and TTLs),
 * forgotten by the change channel when a binding is made or deleted (its hash rides among the key hashes) or its
 * consumer changes (disabled, re-planned), so a deleted binding or a disabled consumer stops its tokens as fast as
 * a revoked key stops. Neither a token nor a binding is ever kept by key id: the consumer is every counter's key.
 */
@Injectable()
export class TokenCache implements OnModuleInit {
  private readonly logger = new Logger('OAuth');
  private readonly verifier: TokenVerifier;
  private readonly tokens: LRUCache<string, TokenEntry>;
  /** Opaque tokens no issuer called active: wall-clock ms until they may be asked about again. */
  private readonly inactive: LRUCache<string, number>;
  private readonly bindings: LRUCache<string, BindingEntry>;
  private readonly byConsumer = new Map<string, Set<string>>();
  private readonly verifying = new Map<string, Promise<TokenEntry | null | { retryAfterS: number }>>();
  private readonly loading = new Map<string, Promise<KeyRecord | null>>();
  private generation = 0;
  private changeSequence = 0;
  private readonly results: Counter<'result'>;
  private readonly hits: Counter.Internal;
  private readonly unreachable = new Set<string>();
  readonly enabled: boolean;

  constructor(
    private readonly lookup: ClientBindingLookupRepository,
    private readonly planLimits: PlanLimits,
    private readonly changes: ConsumerChanges,
    private readonly clock: Clock,
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
    metrics: AppMetrics,
  ) {
    const { issuers, tokenCacheSize } = config.oauth;
    this.enabled = issuers.length > 0;
    const keys = issuers.map(
      (issuer) =>
        new IssuerKeys(
          issuer,
          () => clock.monotonic(),
          (error) => this.reportUnreachable(issuer.issuer, error),
        ),
    );
    this.verifier = new TokenVerifier(keys, () => clock.now());
    this.tokens = new LRUCache({ max: tokenCacheSize });
    this.inactive = new LRUCache({ max: Math.max(100, Math.floor(tokenCacheSize / 5)) });
    const { size, negativeSize } = config.consumers.cache;
    this.bindings = new LRUCache({
      max: size + negativeSize,
      dispose: ({ record }, hash) => {
        if (!record) return;
        const hashes = this.byConsumer.get(record.consumerId);
        hashes?.delete(hash);
        if (hashes?.size === 0) this.byConsumer.delete(record.consumerId);
      },
    });
    this.results = new Counter({
      name: 'gateway_token_authentications_total',
      help: 'OAuth access token authentications by result (hit: a verified token held; verified: checked now, by signature or introspection; invalid; unavailable: the issuer or the database away).',
      labelNames: ['result'],
      registers: [metrics.registry],
    });
    this.hits = this.results.labels({ result: 'hit' });
  }

  onModuleInit(): void {
    this.changes.onChange((change) => this.apply(change));
    this.changes.onReconnect(() => this.expireAll());
  }

  async authenticate(token: string): Promise<TokenAuthentication> {
    const hash = createHash('sha256').update(token).digest('hex');
    const now = this.clock.now();
    let entry = this.tokens.get(hash);
    if (entry && entry.goodUntilMs > now) this.hits.inc();
    else {
      const verified = await this.verify(hash, token, now);
      if (verified === null) {
        this.results.inc({ result: 'invalid' });
        return INVALID;
      }
      if ('retryAfterS' in verified) {
        this.results.inc({ result: 'unavailable' });
        return { outcome: 'unavailable', retryAfterS: verified.retryAfterS };
      }
      this.results.inc({ result: 'verified' });
      entry = verified;
    }
    return this.bound(entry);
  }

  /** Forgets the bindings a change names (by their hash among the key hashes, or by consumer), or all of them. */
  apply(change: ConsumerChange): void {
    this.changeSequence += 1;
    if (change.all) return this.expireAll();
    for (const hash of change.keyHashes) this.bindings.delete(hash);
    for (const id of change.consumerIds)
      for (const hash of [...(this.byConsumer.get(id) ?? [])]) this.bindings.delete(hash);
  }

  private expireAll(): void {
    this.changeSequence += 1;
    this.generation += 1;
  }

  /** The token verified (and held), null when it is not valid, or the issuer's retry time when it cannot be checked. */
  private verify(hash: string, token: string, now: number): Promise<TokenEntry | null | { retryAfterS: number }> {
    const inactiveUntil = this.inactive.peek(hash);
    if (inactiveUntil !== undefined && inactiveUntil > now) return Promise.resolve(null);
    let pending = this.verifying.get(hash);
    if (pending) return pending;
    pending = this.verifier
      .verify(token)
      .then((verification) => {
        if (verification.outcome === 'unavailable') return { retryAfterS: verification.retryAfterS };
        if (verification.outcome === 'invalid') {
          // Only opaque tokens: a bad JWT costs no request to anyone, and its refusal is cheap.
          const ttl = this.introspectionTtlMs();
          if (token.split('.').length !== 3 && ttl > 0) this.inactive.set(hash, this.clock.now() + ttl);
          return null;
        }
        const { issuer, clientId, scopes, goodUntilMs } = verification.token;
        const entry: TokenEntry = {
          goodUntilMs,
          bindingHash: clientBindingHash(issuer.issuer, clientId),
          issuer: issuer.issuer,
          clientId,
          grant: ScopeGrant.of(issuer, scopes),
        };
        this.tokens.set(hash, entry);
        return entry;
      })
      .finally(() => this.verifying.delete(hash));
    this.verifying.set(hash, pending);
    return pending;
  }

  /** The consumer a verified token's client is bound to, through the binding cache. */
  private async bound(entry: TokenEntry): Promise<TokenAuthentication> {
    const tick = this.clock.monotonic();
    const held = this.bindings.get(entry.bindingHash);
    let record: KeyRecord | null;
    if (held && held.freshUntil > tick && held.generation === this.generation) record = held.record;
    else {
      try {
        record = await this.load(entry);
      } catch (error) {
        // The database away: a binding past its TTL still answers (stale if error), as a key does.
        if (held) record = held.record;
        else {
          this.logger.debug(`Client binding lookup failed: ${(error as Error).message}`);
          return { outcome: 'unavailable', retryAfterS: RETRY_AFTER_DOWN_S };
        }
      }
    }
    if (!record) return INVALID;
    if (record.disabledAt !== null) return { outcome: 'invalid', reason: 'disabled' };
    const consumer = consumerOf(record, this.planLimits);
    if (!consumer) return INVALID;
    return { outcome: 'valid', consumer, keyId: record.keyId, addresses: record.addresses, grant: entry.grant };
  }

  private load(entry: TokenEntry): Promise<KeyRecord | null> {
    let pending = this.loading.get(entry.bindingHash);
    if (pending) return pending;
    const sequence = this.changeSequence;
    const sentAt = this.clock.monotonic();
    pending = this.lookup
      .find(entry.issuer, entry.clientId)
      .then((record) => {
        // A change during the query leaves its answer uncached (it may predate the change).
        if (sequence === this.changeSequence) this.remember(entry.bindingHash, record, sentAt);
        return record;
      })
      .finally(() => this.loading.delete(entry.bindingHash));
    this.loading.set(entry.bindingHash, pending);
    return pending;
  }

  private remember(hash: string, record: KeyRecord | null, sentAt: number): void {
    const { ttlMs, negativeTtlMs } = this.config.consumers.cache;
    this.bindings.delete(hash);
    if (record) {
      let hashes = this.byConsumer.get(record.consumerId);
      if (!hashes) this.byConsumer.set(record.consumerId, (hashes = new Set()));
      hashes.add(hash);
    }
    this.bindings.set(hash, {
      record,
      freshUntil: sentAt + (record ? ttlMs : negativeTtlMs),
      generation: this.generation,
    });
  }

  /** The shortest introspection TTL of the issuers that introspect: how long an inactive answer is believed. */
  private introspectionTtlMs(): number {
    const ttls = this.config.oauth.issuers.filter((i) => i.introspection).map((i) => i.introspectionCacheMs);
    return ttls.length === 0 ? 0 : Math.min(...ttls);
  }

  private reportUnreachable(issuer: string, error: Error): void {
    if (this.unreachable.has(issuer)) return;
    this.unreachable.add(issuer);
    setTimeout(() => this.unreachable.delete(issuer), 60_000).unref();
    this.logger.error(
      `Cannot fetch the keys of issuer ${issuer} (${error.message}): tokens of the keys held keep working, tokens of keys never seen get 503`,
    );
  }
}
