import { randomBytes } from 'node:crypto';
import { AppMetrics } from '@app/platform';
import { loadGatewayConfig } from '../config/gateway.config';
import { Clock } from '../clock';
import { LocalConsumerChanges } from '../consumers/consumer-changes';
import { KeyLookupRepository, KeyRecord } from './key-lookup.repository';
import { PlanLimits } from '../plans/plan-limits';
import { KeyCache } from './key-cache';

class ManualClock extends Clock {
  time = Date.parse('2026-11-23T00:00:00Z');
  tick = 1_000;
  now(): number {
    return this.time;
  }
  override monotonic(): number {
    return this.tick;
  }
  /** Time passes, for expiry dates and TTLs alike. */
  advance(ms: number): void {
    this.time += ms;
    this.tick += ms;
  }
}

const record = (overrides: Partial<KeyRecord> = {}): KeyRecord => ({
  keyId: 'k1',
  consumerId: 'c1',
  name: 'acme',
  plan: 'pro',
  limits: null,
  perMonth: null,
  billingAnchor: new Date(0),
  recutPeriod: null,
  creditsEnabled: null,
  creditRefill: null,
  costs: null,
  disabledAt: null,
  expiresAt: null,
  revokedAt: null,
  ...overrides,
});

/**
 * A store whose answers and failures the test controls, counting the queries (the database itself is covered
 * by the e2e tests on both engines).
 */
function fakeStore(rows: Map<string, KeyRecord>) {
  const state = { queries: 0, down: false, delayMs: 0, gate: undefined as Promise<void> | undefined };
  const valid = () => [...rows].filter(([, r]) => r.revokedAt === null).map(([hash]) => hash);
  const store = {
    findByKeyHash: async (hash: string) => {
      state.queries += 1;
      if (state.delayMs) await new Promise((resolve) => setTimeout(resolve, state.delayMs));
      if (state.gate) await state.gate;
      if (state.down) throw new Error('connect ECONNREFUSED');
      return rows.get(hash) ?? null;
    },
    countValidKeyHashes: async () => valid().length,
    async *validKeyHashPages() {
      yield valid();
    },
    effective: (c: { plan: string; limits: unknown }) => (c.limits as never) ?? { perMinute: 300, perDay: 10_000 },
    credits: () => undefined,
  } as unknown as KeyLookupRepository & PlanLimits;
  return { store, state };
}

describe('KeyCache', () => {
  const rows = new Map<string, KeyRecord>();
  let clock: ManualClock;
  let changes: LocalConsumerChanges;
  let fake: ReturnType<typeof fakeStore>;
  let cache: KeyCache;
  const build = (env: Record<string, string> = {}) => {
    const c = new KeyCache(fake.store, fake.store, changes, clock, loadGatewayConfig(env), new AppMetrics('test'));
    c.onModuleInit();
    return c;
  };

  beforeEach(() => {
    rows.clear();
    rows.set('h1', record());
    clock = new ManualClock();
    changes = new LocalConsumerChanges();
    fake = fakeStore(rows);
    cache = build();
  });

  it('answers a known key from memory after one query, and shares the query among concurrent requests', async () => {
    const results = await Promise.all(Array.from({ length: 10 }, () => cache.authenticate('h1')));
    expect(results.every((r) => r.outcome === 'valid')).toBe(true);
    await cache.authenticate('h1');
    expect(fake.state.queries).toBe(1);
  });

  it('remembers unknown hashes too, apart from the known keys', async () => {
    expect(await cache.authenticate('nope')).toEqual({ outcome: 'invalid', reason: 'unknown' });
    expect(await cache.authenticate('nope')).toEqual({ outcome: 'invalid', reason: 'unknown' });
    expect(fake.state.queries).toBe(1);
    expect(cache.size).toEqual({ known: 0, unknown: 1 });
  });

  it('checks expiry on every hit, not only on load', async () => {
    rows.set('h1', record({ expiresAt: new Date(clock.time + 1_000) }));
    expect((await cache.authenticate('h1')).outcome).toBe('valid');
    clock.time += 1_000;
    expect(await cache.authenticate('h1')).toEqual({ outcome: 'invalid', reason: 'expired' });
    expect(fake.state.queries).toBe(1);
  });

  it('forgets what a change names, including a hash cached as unknown', async () => {
    await cache.authenticate('h1');
    await cache.authenticate('h2');
    rows.set('h1', record({ revokedAt: new Date() }));
    rows.set('h2', record({ keyId: 'k2' }));
    await changes.publish({ keyHashes: ['h2'], consumerIds: ['c1'] });
    expect(await cache.authenticate('h1')).toEqual({ outcome: 'invalid', reason: 'revoked' });
    expect((await cache.authenticate('h2')).outcome).toBe('valid');
  });

  it('does not cache a load that a change overtook', async () => {
    fake.state.delayMs = 20;
    const pending = cache.authenticate('h1');
    await changes.publish({ keyHashes: ['h1'], consumerIds: [] });
    await pending;
    await cache.authenticate('h1');
    expect(fake.state.queries).toBe(2);
  });

  it('keeps serving a cached key while the store is down, and says "unavailable" for one never seen', async () => {
    cache = build({ KEY_CACHE_TTL_MS: '100' });
    await cache.authenticate('h1');
    clock.advance(120);
    fake.state.down = true;
    expect((await cache.authenticate('h1')).outcome).toBe('valid');
    expect(await cache.authenticate('never-seen')).toEqual({ outcome: 'unavailable', retryAfterS: 5 });
  });

  it('looks up no more unseen keys than its budget', async () => {
    cache = build({ KEY_LOOKUPS_PER_SECOND: '5' });
    const results = await Promise.all(Array.from({ length: 50 }, (_, i) => cache.authenticate(`random-${i}`)));
    expect(fake.state.queries).toBeLessThanOrEqual(6);
    expect(results.filter((r) => r.outcome === 'unavailable').length).toBeGreaterThanOrEqual(44);
  });

  it('stays within its size bound', async () => {
    cache = build({ KEY_CACHE_SIZE: '100', KEY_NEGATIVE_CACHE_SIZE: '100', KEY_LOOKUPS_PER_SECOND: '100000' });
    for (let i = 0; i < 250; i += 1) rows.set(`k${i}`, record({ keyId: `k${i}`, consumerId: `c${i}` }));
    for (let i = 0; i < 250; i += 1) await cache.authenticate(`k${i}`);
    for (let i = 0; i < 250; i += 1) await cache.authenticate(`u${i}`);
    expect(cache.size).toEqual({ known: 100, unknown: 100 });
  });

  describe('under a flood, with the key filter built', () => {
    const hash = (i: number) => i.toString(16).padStart(64, '0');
    beforeEach(async () => {
      rows.clear();
      for (let i = 0; i < 1_000; i += 1) rows.set(hash(i), record({ keyId: `k${i}`, consumerId: `c${i}` }));
      cache = build({ KEY_LOOKUPS_PER_SECOND: '5' });
      await cache.onApplicationBootstrap();
    });
    afterEach(() => cache.onModuleDestroy());

    it('refuses hashes the filter does not hold without a query, and spends the budget on its false positives only', async () => {
      const random = Array.from({ length: 2_000 }, () => randomBytes(32).toString('hex'));
      const results = await Promise.all(random.map((h) => cache.authenticate(h)));
      // Only the filter's false positives (well under 1 % with 1,000 keys in a filter sized for 11,100) and the
      // one hash a second looked up although not in the filter reached the store.
      expect(fake.state.queries).toBeLessThanOrEqual(1 + 5);
      expect(results.every((r) => r.outcome === 'invalid')).toBe(true);
      // Fresh valid keys are still looked up (the budget refills at 5 a second).
      clock.advance(1_000);
      const fresh = await Promise.all([1, 2, 3].map((i) => cache.authenticate(hash(i))));
      expect(fresh.map((r) => r.outcome)).toEqual(['valid', 'valid', 'valid']);
    });

    it('accepts a key issued after the build as soon as its change is heard', async () => {
      const issued = 'a'.repeat(64);
      expect(await cache.authenticate(issued)).toEqual({ outcome: 'invalid', reason: 'unknown' });
      rows.set(issued, record({ keyId: 'new', consumerId: 'cn' }));
      await changes.publish({ keyHashes: [issued], consumerIds: ['cn'] });
      expect((await cache.authenticate(issued)).outcome).toBe('valid');
    });

    it('looks up a few hashes a second that it does not hold: a key whose change was not heard, unless a flood spends them', async () => {
      cache.onModuleDestroy();
      cache = build({ KEY_LOOKUPS_PER_SECOND: '100' }); // 1 a second for hashes not in the filter
      await cache.onApplicationBootstrap();
      const unheard = 'c'.repeat(64);
      rows.set(unheard, record({ keyId: 'unheard', consumerId: 'cu' }));
      // A flood spends that one lookup at once; the rest of it is refused without a query, the unheard key too.
      const flood = await Promise.all(
        Array.from({ length: 200 }, () => cache.authenticate(randomBytes(32).toString('hex'))),
      );
      expect(flood.every((r) => r.outcome === 'invalid')).toBe(true);
      expect(fake.state.queries).toBe(1);
      expect(await cache.authenticate(unheard)).toEqual({ outcome: 'invalid', reason: 'unknown' });
      expect(fake.state.queries).toBe(1);
      // A second later, no flood: it is looked up, accepted, and in the filter from then on.
      clock.advance(1_000);
      expect((await cache.authenticate(unheard)).outcome).toBe('valid');
      expect(cache.filterState.keys).toBe(1_001);
    });

    it('after a reconnection of the change channel, looks unseen keys up until its filter is rebuilt', async () => {
      // Issued while the channel was down: its message is lost (and the lookups of unheard keys are spent).
      const missed = 'b'.repeat(64);
      rows.set(missed, record({ keyId: 'missed', consumerId: 'cm' }));
      for (let i = 0; i < 20; i += 1) await cache.authenticate(randomBytes(32).toString('hex'));
      expect(await cache.authenticate(missed)).toEqual({ outcome: 'invalid', reason: 'unknown' });
      (changes as unknown as { reconnected(): void }).reconnected();
      expect(cache.filterState.complete).toBe(false);
      await cache.rebuildFilter();
      expect(cache.filterState.complete).toBe(true);
      expect((await cache.authenticate(missed)).outcome).toBe('valid');
    });

    it('never answers a known key from its entry past the TTL, however spent the budget is', async () => {
      expect((await cache.authenticate(hash(1))).outcome).toBe('valid');
      // Revoked, and the message lost: only the TTL (30 s) stands between the revocation and a refusal.
      rows.set(hash(1), record({ keyId: 'k1', consumerId: 'c1', revokedAt: new Date(clock.time) }));
      clock.advance(30_001);
      // The flood's false positives and fresh keys spend the whole budget (5 tokens) first.
      for (let i = 10; i < 15; i += 1) await cache.authenticate(hash(i));
      expect(await cache.authenticate(hash(20))).toEqual({ outcome: 'unavailable', retryAfterS: 1 });
      expect(await cache.authenticate(hash(1))).toEqual({ outcome: 'invalid', reason: 'revoked' });
    });

    it('counts the TTL from when the query was sent, not from its late answer', async () => {
      let answer!: () => void;
      fake.state.gate = new Promise((resolve) => (answer = resolve));
      const pending = cache.authenticate(hash(2));
      // The database takes 5 s to answer under load; the state it read is the one of the query's start.
      clock.advance(5_000);
      answer();
      fake.state.gate = undefined;
      expect((await pending).outcome).toBe('valid');
      rows.set(hash(2), record({ keyId: 'k2', consumerId: 'c2', revokedAt: new Date(clock.time) }));
      clock.advance(25_001);
      expect(await cache.authenticate(hash(2))).toEqual({ outcome: 'invalid', reason: 'revoked' });
    });
  });
});
