import { randomBytes } from 'node:crypto';
import { Cluster } from 'ioredis';
import { loadGatewayConfig } from '../../apps/gateway/src/config/gateway.config';
import { Decision, WindowSpec } from '../../apps/gateway/src/rate-limit/rate-limit-store';
import { RedisRateLimitStore } from '../../apps/gateway/src/rate-limit/redis-rate-limit.store';
import { noBan, redisStore, seededCredits as credits } from '../support/rate-limit-stores';
import { hasRedisCluster, OwnRedisCluster } from '../support/redis-topologies';
import { runIf } from '../support/skip';

const minute: WindowSpec = { name: 'minute', limit: 10_000, ttlMs: 60_000 };

/**
 * Prepaid credits on a Redis Cluster of three masters that this file starts (private ports, a temporary folder;
 * never the shared Redis), decided by two stores as two gateway instances would: the balance and the windows in
 * the one script call, so exact to the unit with the keys of a consumer in one hash slot. Needs redis-server and
 * redis-cli (redis-tools), as CI has; without them there is no cluster to start, so the suite is skipped.
 */
const ifRedisCluster = runIf(
  hasRedisCluster,
  'redis-server and redis-cli on PATH (the test starts a three-master cluster)',
);
ifRedisCluster.describe('prepaid credits on a three-master Redis Cluster, through two instances', () => {
  let cluster: OwnRedisCluster;
  let inspector: Cluster;
  const stores: RedisRateLimitStore[] = [];
  const keyPrefix = `credits-cluster-${randomBytes(4).toString('hex')}:`;

  beforeAll(async () => {
    cluster = await OwnRedisCluster.start(3);
    inspector = cluster.client();
    // REDIS_URL '' overrides the CI run's REDIS_URL: exactly one topology may be set.
    const config = loadGatewayConfig({ REDIS_URL: '', REDIS_CLUSTER_NODES: cluster.nodeList });
    for (let i = 0; i < 2; i += 1) {
      const store = redisStore(config.redis!.connection, {
        label: 'credits-cluster',
        keyPrefix,
        replyTimeoutMs: 5_000,
        failureMode: 'closed',
      });
      await store.waitUntilReady(10_000);
      stores.push(store);
    }
  }, 90_000);
  afterAll(async () => {
    for (const store of stores) await store.close();
    inspector?.disconnect();
    await cluster?.stop();
  });

  it.each([
    [1, 100],
    [5, 20],
  ])(
    '1,000 concurrent decisions at cost %i with 100 credits admit exactly %i and leave 0, never below',
    async (cost, admitted) => {
      const key = `consumer:c${cost}-${randomBytes(4).toString('hex')}`;
      const { spec, calls } = credits(cost, { balance: 100, refilledPeriodStartMs: 0 });
      const decisions: Decision[] = await Promise.all(
        Array.from({ length: 1_000 }, (_, i) => stores[i % 2].consume(key, [minute], noBan, spec)),
      );
      const outcomes = decisions.map((d) => d.outcome);
      expect(outcomes.filter((o) => o === 'allowed')).toHaveLength(admitted);
      // No refill scheduled: every other answer is "exhausted"; none undecided, none by a window.
      expect(outcomes.filter((o) => o === 'exhausted')).toHaveLength(1_000 - admitted);
      expect(Math.min(...decisions.map((d) => d.credits!.balance))).toBe(0);
      for (const store of stores) expect((await store.credits(key, { read: true }, spec.rebuild)).after).toBe(0);
      expect(await inspector.get(`${keyPrefix}rl:{${key}}:credits`)).toBe('0');
      // The refusals counted nothing in the minute window.
      expect((await stores[1].usage(key, [minute])).windows[0].count).toBe(admitted);
      // The balance was seeded from the ledger's answer once per racing first decision, never after.
      const before = calls.rebuilds;
      expect((await stores[0].consume(key, [minute], noBan, spec)).outcome).toBe('exhausted');
      expect(calls.rebuilds).toBe(before);
    },
    60_000,
  );

  it('keeps every key of a consumer (windows, credits, last refill, strikes) in one hash slot on one master', async () => {
    const key = `consumer:slot-${randomBytes(4).toString('hex')}`;
    const { spec } = credits(1, { balance: 3, refilledPeriodStartMs: 0 });
    const day: WindowSpec = { name: 'day', limit: 10_000, ttlMs: 86_400_000 };
    const ban = { threshold: 5, durationMs: 60_000, graceMs: 0 };
    for (let i = 0; i < 3; i += 1)
      expect((await stores[i % 2].consume(key, [minute, day], ban, spec)).outcome).toBe('allowed');
    // A refusal by a window creates the strikes counter: every key the script writes exists.
    const tight: WindowSpec = { name: 'minute', limit: 3, ttlMs: 60_000 };
    expect(
      (await stores[0].consume(key, [tight, day], ban, credits(1, { balance: 0, refilledPeriodStartMs: 0 }).spec))
        .outcome,
    ).toBe('limited');
    const found: Array<{ name: string; port: number; slot: number }> = [];
    for (const node of cluster.nodes) {
      const client = node.client();
      try {
        const names = await client.keys(`${keyPrefix}rl:{${key}}:*`);
        for (const name of names)
          found.push({ name, port: node.port, slot: Number(await client.cluster('KEYSLOT', name)) });
      } finally {
        client.disconnect();
      }
    }
    const suffixes = found.map((k) => k.name.slice(k.name.lastIndexOf('}:') + 2)).sort();
    expect(suffixes).toEqual(['credits', 'refilled', 'strikes', 'w:day', 'w:minute']);
    expect(new Set(found.map((k) => k.slot)).size).toBe(1);
    expect(new Set(found.map((k) => k.port)).size).toBe(1);
  });
});
