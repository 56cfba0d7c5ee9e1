import { randomBytes } from 'node:crypto';
import { Cluster, Redis } from 'ioredis';
import { createRedisConnection } from '../../apps/gateway/src/redis/redis-connection';
import {
  createGatewayTestDatabase,
  GatewayTestDatabase,
  GatewayUnderTest,
  mintKey,
  startGateway,
} from '../support/gateway';
import { metric } from '../support/gateway-metrics';
import { call, expectErrorBody } from '../support/http';
import { RunningPets, startPetsService } from '../support/pets-service';
import { command, hasRedisCluster, OwnRedisCluster } from '../support/redis-topologies';
import { runIf } from '../support/skip';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Three gateway instances on a Redis Cluster of three masters that this file starts (private ports, a
 * temporary folder; never the shared Redis). Needs Debian's redis-server and redis-cli (redis-tools), as CI
 * has; without them there is no cluster to start, so the suite is skipped.
 */
const ifRedisCluster = runIf(
  hasRedisCluster,
  'redis-server and redis-cli on PATH (the test starts a three-master cluster)',
);
ifRedisCluster.describe('rate limits on a three-master Redis Cluster', () => {
  let cluster: OwnRedisCluster;
  let inspector: Cluster;
  let pets: RunningPets;
  const gateways: GatewayUnderTest[] = [];
  const keys: Record<string, string> = {};
  let database: GatewayTestDatabase;
  const keyPrefix = `cluster-${randomBytes(4).toString('hex')}:`;
  const as = (key: string) => ({ headers: { authorization: `Bearer ${key}` } });
  const get = (i: number, key: string) => call(`${gateways[i % gateways.length].url}/v1/pets?limit=1`, as(key));

  beforeAll(async () => {
    cluster = await OwnRedisCluster.start(3);
    inspector = cluster.client();
    pets = await startPetsService();
    database = await createGatewayTestDatabase();
    // REDIS_URL '' overrides the CI run's REDIS_URL: exactly one topology may be set.
    const env = { REDIS_URL: '', REDIS_CLUSTER_NODES: cluster.nodeList, BAN_THRESHOLD: '2', BAN_GRACE_MS: '3000' };
    for (let i = 0; i < 3; i += 1) gateways.push(await startGateway({ petsUrl: pets.url, database, keyPrefix, env }));
    keys.burst = await mintKey(gateways[0], 'free', 'burst');
    keys.banned = await mintKey(gateways[0], 'enterprise', 'banned', { perMinute: 1, perDay: 100 });
    keys.limited = await mintKey(gateways[0], 'enterprise', 'limited', { perMinute: 1, perDay: 100 });
    for (let i = 0; i < 12; i += 1) keys[`spread${i}`] = await mintKey(gateways[0], 'free', `spread${i}`);
  });
  afterAll(async () => {
    for (const gateway of gateways) await gateway.close();
    await database?.drop();
    await pets?.close();
    inspector?.disconnect();
    await cluster?.stop();
  });

  it('admits exactly the Free limit of a concurrent burst over three instances, each with its own Remaining', async () => {
    const replies = await Promise.all(Array.from({ length: 300 }, (_, i) => get(i, keys.burst)));
    const admitted = replies.filter((r) => r.status === 200);
    expect(replies.filter((r) => r.status !== 200 && r.status !== 429).map((r) => r.status)).toEqual([]);
    for (const reply of replies.filter((r) => r.status === 429)) expectErrorBody(reply, 429);
    expect(admitted).toHaveLength(60);
    const remaining = admitted.map((r) => Number(r.headers.get('x-ratelimit-remaining'))).sort((a, b) => a - b);
    expect(remaining).toEqual(Array.from({ length: 60 }, (_, i) => i));
    // Decided by the cluster, not on any instance's own counters.
    for (const gateway of gateways) {
      expect(await metric(gateway, 'rate_limit_store_fallbacks_total')).toBe(0);
      expect(await metric(gateway, 'rate_limit_undecided_total')).toBe(0);
      expect((await call(`${gateway.url}/health/ready`)).status).toBe(200);
    }
  });

  it('bans through the cluster: ban, strikes, grace and window keys all run in one script call', async () => {
    expect((await get(0, keys.banned)).status).toBe(200);
    expectErrorBody(await get(1, keys.banned), 429, 'RATE_LIMITED'); // opens the grace period
    await sleep(3_100); // BAN_GRACE_MS: from now on refusals are strikes
    const codes: string[] = [];
    for (let i = 0; i < 3; i += 1) codes.push(((await get(i, keys.banned)).body as { code: string }).code);
    expect(codes).toEqual(['RATE_LIMITED', 'RATE_LIMITED', 'KEY_BANNED']);
    for (let i = 0; i < 3; i += 1) expectErrorBody(await get(i, keys.banned), 429, 'KEY_BANNED');
    expect(await inspector.exists(`${keyPrefix}rl:{consumer:banned}:ban`)).toBe(1);
  });

  it('keeps every key of one tracker in one hash slot, on one master, while trackers spread over the masters', async () => {
    for (let i = 0; i < 12; i += 1) expect((await get(i, keys[`spread${i}`])).status).toBe(200);
    // A first refusal creates the strikes counter and the grace key (alive for BAN_GRACE_MS, 3 s).
    expect((await get(0, keys.limited)).status).toBe(200);
    expectErrorBody(await get(1, keys.limited), 429, 'RATE_LIMITED');
    // Every key the gateways created, read from each master (a key lives on the master owning its slot).
    const byTracker = new Map<string, Array<{ name: string; port: number; slot: number }>>();
    for (const node of cluster.nodes) {
      const client = node.client();
      try {
        const names = await client.keys(`${keyPrefix}*`);
        const slots = await Promise.all(names.map((name) => client.cluster('KEYSLOT', name)));
        names.forEach((name, i) => {
          const tracker = /rl:\{([^}]+)\}:/.exec(name)![1];
          byTracker.set(tracker, [
            ...(byTracker.get(tracker) ?? []),
            { name, port: node.port, slot: Number(slots[i]) },
          ]);
        });
      } finally {
        client.disconnect();
      }
    }
    const suffixes = new Set(
      [...byTracker.values()].flat().map((key) => key.name.slice(key.name.lastIndexOf('}:') + 2)),
    );
    expect([...suffixes].sort()).toEqual(['ban', 'grace', 'strikes', 'w:day', 'w:minute']);
    for (const [, trackerKeys] of byTracker) {
      expect(new Set(trackerKeys.map((key) => key.slot)).size).toBe(1);
      expect(new Set(trackerKeys.map((key) => key.port)).size).toBe(1);
    }
    expect(
      byTracker
        .get('consumer:limited')!
        .map((key) => key.name.split('}:')[1])
        .sort(),
    ).toEqual(['grace', 'strikes', 'w:day', 'w:minute']);
    expect(
      byTracker
        .get('consumer:banned')!
        .map((key) => key.name.split('}:')[1])
        .sort(),
    ).toEqual(['ban', 'w:day', 'w:minute']);
    // 15 trackers on 3 masters: the counters are sharded, not piled on one node.
    const masters = new Set([...byTracker.values()].map((trackerKeys) => trackerKeys[0].port));
    expect(masters.size).toBeGreaterThanOrEqual(2);
  });

  it('gives a pub/sub subscriber on the cluster from the same connection factory', async () => {
    const subscriber: Redis | Cluster = createRedisConnection(gateways[0].config.redis!.connection, 'subscriber');
    subscriber.on('error', () => undefined);
    try {
      const heard = new Promise<string>((resolve) =>
        subscriber.on('message', (_channel: string, message: string) => resolve(message)),
      );
      await subscriber.subscribe(`${keyPrefix}changes`);
      await inspector.publish(`${keyPrefix}changes`, 'consumer revoked'); // PUBLISH reaches every node of a cluster
      expect(await heard).toBe('consumer revoked');
    } finally {
      subscriber.disconnect();
    }
  });

  it('runs the script again after the masters forgot it (NOSCRIPT: ioredis falls back to EVAL)', async () => {
    for (const node of cluster.nodes) await command(node.port, 'SCRIPT', 'FLUSH');
    const before = Number((await inspector.get(`${keyPrefix}rl:{consumer:spread0}:w:minute`)) ?? 0);
    const reply = await get(0, keys.spread0);
    expect(reply.status).toBe(200);
    expect(Number(reply.headers.get('x-ratelimit-remaining'))).toBe(60 - before - 1);
    expect(Number(await inspector.get(`${keyPrefix}rl:{consumer:spread0}:w:minute`))).toBe(before + 1);
    for (const gateway of gateways) expect(await metric(gateway, 'rate_limit_store_fallbacks_total')).toBe(0);
  });
});
