import { AppMetrics } from '@app/platform';
import { loadGatewayConfig } from '../config/gateway.config';
import { Clock } from '../clock';
import { LocalConsumerChanges } from './consumer-changes';
import { KeyLookupRepository, KeyRecord } from './key-lookup.repository';
import { PlanLimits } from '../plans/plan-limits';
import { KeyCache } from './key-cache.service';

class ManualClock extends Clock {
  time = Date.parse('2026-11-23T00:00:00Z');
  now(): number {
    return this.time;
  }
}

const record = (overrides: Partial<KeyRecord> = {}): KeyRecord => ({
  keyId: 'k1',
  consumerId: 'c1',
  name: 'acme',
  plan: 'pro',
  limits: null,
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
  const state = { queries: 0, down: false, delayMs: 0 };
  const store = {
    findByKeyHash: async (hash: string) => {
      state.queries += 1;
      if (state.delayMs) await new Promise((resolve) => setTimeout(resolve, state.delayMs));
      if (state.down) throw new Error('connect ECONNREFUSED');
      return rows.get(hash) ?? null;
    },
    effective: (c: { plan: string; limits: unknown }) => (c.limits as never) ?? { perMinute: 300, perDay: 10_000 },
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
    await new Promise((resolve) => setTimeout(resolve, 120));
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
});
