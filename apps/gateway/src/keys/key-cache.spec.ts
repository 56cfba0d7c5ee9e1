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
 * A store whose answers and failures the test controls, counting the queries and the hashes they carry (the
 * database itself is covered by the e2e tests on both engines).
 */
function fakeStore(rows: Map<string, KeyRecord>) {
  const state = { queries: 0, hashes: 0, down: false, delayMs: 0, gate: undefined as Promise<void> | undefined };
  const valid = () => [...rows].filter(([, r]) => r.revokedAt === null).map(([hash]) => hash);
  const store = {
    findByKeyHashes: async (hashes: string[]) => {
      state.queries += 1;
      state.hashes += hashes.length;
      if (state.delayMs) await new Promise((resolve) => setTimeout(resolve, state.delayMs));
      if (state.gate) await state.gate;
      if (state.down) throw new Error('connect ECONNREFUSED');
      return new Map(hashes.filter((hash) => rows.has(hash)).map((hash) => [hash, rows.get(hash)!]));
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

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/**
 * The rest of this turn of the event loop: the key lookups' batch, sent from a setImmediate queued before this one,
 * has gone. (A 0 ms timer is no such point: it may fire before or after that immediate, by whether a millisecond
 * has passed; under load it came first and the batch was not sent yet.)
 */
const turn = () => new Promise((resolve) => setImmediate(resolve));

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

  it('makes no more queries for unseen keys than its budget, each carrying up to a batch of them', async () => {
    // 5 queries a second of up to 200 hashes; the clock stands still, so the budget does not refill by itself.
    cache = build({ KEY_LOOKUPS_PER_SECOND: '5' });
    const wave = (from: number, count: number) =>
      Promise.all(Array.from({ length: count }, (_, i) => cache.authenticate(`random-${from + i}`)));
    const first = await wave(0, 800);
    expect(first.every((r) => r.outcome === 'invalid')).toBe(true);
    expect(fake.state).toMatchObject({ queries: 4, hashes: 800 });
    expect((await wave(800, 1)).map((r) => r.outcome)).toEqual(['invalid']);
    expect(fake.state.queries).toBe(5);
    // The budget is spent: the next unseen hashes wait for a token, with no query meanwhile.
    const waiting = wave(1_000, 300);
    await pause(250);
    expect(fake.state.queries).toBe(5);
    clock.advance(1_000);
    expect((await waiting).every((r) => r.outcome === 'invalid')).toBe(true);
    expect(fake.state).toMatchObject({ queries: 7, hashes: 1_101 });
  });

  it('learns thousands of distinct known keys arriving at once in a few queries, none refused', async () => {
    for (let i = 0; i < 5_000; i += 1) rows.set(`key-${i}`, record({ keyId: `k${i}`, consumerId: `c${i}` }));
    // 100 clients, each sending its 50 keys one after the other (a restarted instance's burst); a budget of 100
    // lookups a second would refuse all but 100 of them if it counted hashes.
    cache = build({ KEY_LOOKUPS_PER_SECOND: '100' });
    const client = async (c: number) => {
      const outcomes: string[] = [];
      for (let i = c; i < 5_000; i += 100) outcomes.push((await cache.authenticate(`key-${i}`)).outcome);
      return outcomes;
    };
    const outcomes = (await Promise.all(Array.from({ length: 100 }, (_, c) => client(c)))).flat();
    expect(outcomes.filter((outcome) => outcome !== 'valid')).toEqual([]);
    expect(outcomes).toHaveLength(5_000);
    expect(fake.state.hashes).toBe(5_000);
    // About 100 hashes a query (one per round of the clients), and the clock never moved: within a second's budget.
    expect(fake.state.queries).toBeLessThanOrEqual(60);
  }, 10_000); // counted per hash, the budget would leave clients waiting for a clock that never moves

  it('refuses unseen keys beyond a few batches waiting or running: 503, not a pile of queries', async () => {
    cache = build({ KEY_LOOKUPS_PER_SECOND: '5' });
    // The database is slow: the first batches' queries are still running when more keys come.
    let answer!: () => void;
    fake.state.gate = new Promise((resolve) => (answer = resolve));
    const running = Promise.all(Array.from({ length: 600 }, (_, i) => cache.authenticate(`random-${i}`)));
    await turn();
    expect(fake.state.queries).toBe(3);
    // 4 batches of 200 may wait or run: 200 more are taken, the rest refused at once, tokens left or not.
    const more = Array.from({ length: 201 }, (_, i) => cache.authenticate(`more-${i}`));
    expect(await more[200]).toEqual({ outcome: 'unavailable', retryAfterS: 1 });
    answer();
    const answered = await Promise.all([running, Promise.all(more.slice(0, 200))]);
    expect(answered.flat().every((r) => r.outcome === 'invalid')).toBe(true);
    expect(fake.state.queries).toBe(4);
    // Answered, they no longer count: the next unseen key is looked up.
    expect(await cache.authenticate('after')).toEqual({ outcome: 'invalid', reason: 'unknown' });
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
      // The flood's false positives and fresh keys spend the whole budget (5 queries) first, then fill the queue
      // (4 batches of 200 wait for a token that the stopped clock never gives).
      for (let i = 10; i < 15; i += 1) await cache.authenticate(hash(i));
      const spent = fake.state.queries;
      const queued = Array.from({ length: 800 }, (_, i) => cache.authenticate(hash(100 + i)));
      expect(await cache.authenticate(hash(20))).toEqual({ outcome: 'unavailable', retryAfterS: 1 });
      expect(fake.state.queries).toBe(spent);
      expect(await cache.authenticate(hash(1))).toEqual({ outcome: 'invalid', reason: 'revoked' });
      cache.onModuleDestroy(); // the queued ones are sent (they would wait for the clock otherwise)
      expect((await Promise.all(queued)).every((r) => r.outcome === 'valid')).toBe(true);
    });

    it('counts the TTL from when the query was sent, not from its late answer', async () => {
      let answer!: () => void;
      fake.state.gate = new Promise((resolve) => (answer = resolve));
      const pending = cache.authenticate(hash(2));
      await turn(); // its batch is sent
      expect(fake.state.queries).toBe(1);
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
