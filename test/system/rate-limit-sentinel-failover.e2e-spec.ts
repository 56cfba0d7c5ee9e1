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
import { call, expectErrorBody, Reply } from '../support/http';
import { RunningPets, startPetsService } from '../support/pets-service';
import { command, hasRedisSentinel, OwnSentinelSetup } from '../support/redis-topologies';
import { runIf } from '../support/skip';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const remaining = (reply: Reply) => Number(reply.headers.get('x-ratelimit-remaining'));

/** What the load saw of one request. */
interface Sample {
  at: number;
  ms: number;
  status: number;
  code?: string;
  retryAfter: string | null;
}

/**
 * A Sentinel-managed primary killed under load: a primary, a replica and three sentinels of this file's own
 * (private ports, a temporary folder; never the shared Redis), three gateway instances failing open (the
 * default). Needs Debian's redis-server (run as a sentinel with --sentinel), as CI has; skipped without it.
 */
const ifRedisSentinel = runIf(
  hasRedisSentinel,
  'redis-server on PATH (the test starts a primary, a replica and Sentinels)',
);
ifRedisSentinel.describe('rate limits through Sentinel when the primary dies under load', () => {
  const commandTimeoutMs = 1000;
  const loadLimit = 300;
  let setup: OwnSentinelSetup;
  let pets: RunningPets;
  let subscriber: Redis | Cluster;
  const heard: string[] = [];
  const gateways: GatewayUnderTest[] = [];
  const keys: Record<string, string> = {};
  let database: GatewayTestDatabase;
  const keyPrefix = `sentinel-${randomBytes(4).toString('hex')}:`;
  const as = (key: string) => ({ headers: { authorization: `Bearer ${key}` } });
  const get = (i: number, key: string) => call(`${gateways[i % gateways.length].url}/v1/pets?limit=1`, as(key));
  /** The status of /health/ready and, when it is 200, what it says of Redis (a 503 carries the Error body only). */
  const readiness = async (gateway: GatewayUnderTest) => {
    const reply = await call(`${gateway.url}/health/ready`);
    return {
      status: reply.status,
      redis: (reply.body as { details?: { redis?: { status?: string } } } | undefined)?.details?.redis?.status,
    };
  };

  beforeAll(async () => {
    setup = await OwnSentinelSetup.start(2000);
    pets = await startPetsService();
    database = await createGatewayTestDatabase();
    const env = {
      REDIS_URL: '', // the CI run's REDIS_URL: exactly one topology may be set
      REDIS_SENTINELS: setup.sentinelList,
      REDIS_SENTINEL_NAME: OwnSentinelSetup.masterName,
      REDIS_COMMAND_TIMEOUT_MS: String(commandTimeoutMs),
    };
    for (let i = 0; i < 3; i += 1) gateways.push(await startGateway({ petsUrl: pets.url, database, keyPrefix, env }));
    keys.before = await mintKey(gateways[0], 'enterprise', 'before', { perMinute: 5, perDay: 100 });
    keys.load = await mintKey(gateways[0], 'enterprise', 'load', { perMinute: loadLimit, perDay: 1_000_000 });
    keys.after = await mintKey(gateways[0], 'enterprise', 'after', { perMinute: 5, perDay: 100 });
    // A pub/sub subscriber from the same factory and configuration (what consumer change notifications use).
    subscriber = createRedisConnection(gateways[0].config.redis!.connection, 'subscriber');
    subscriber.on('error', () => undefined);
    subscriber.on('message', (_channel: string, message: string) => heard.push(message));
    await subscriber.subscribe(`${keyPrefix}changes`);
  });
  afterAll(async () => {
    subscriber?.disconnect();
    for (const gateway of gateways) await gateway.close();
    await database?.drop();
    await pets?.close();
    await setup?.stop();
  });

  it('counts once for all instances on the primary Sentinel names', async () => {
    expect(remaining(await get(0, keys.before))).toBe(4);
    expect(remaining(await get(1, keys.before))).toBe(3);
    expect(remaining(await get(2, keys.before))).toBe(2);
    for (const gateway of gateways) expect(await readiness(gateway)).toEqual({ status: 200, redis: 'up' });
  });

  it('keeps answering while the primary is killed and replaced, then counts shared again; readiness and metrics say so', async () => {
    const samples: Sample[] = [];
    const ready: Array<{ at: number; gateway: number; status: number; redis?: string }> = [];
    const degraded = new Set<number>();
    let loading = true;
    let watching = true;
    let next = 0;
    // 12 clients in a loop over the three instances, on one Enterprise key of 300 a minute.
    const load = Promise.all(
      Array.from({ length: 12 }, async () => {
        while (loading) {
          const at = Date.now();
          const reply = await get(next++, keys.load);
          samples.push({
            at,
            ms: Date.now() - at,
            status: reply.status,
            code: (reply.body as { code?: string } | undefined)?.code,
            retryAfter: reply.headers.get('retry-after'),
          });
        }
      }),
    );
    // Each instance watched on its own (readiness and the degraded gauge side by side), so a slow answer of
    // one does not hide another's degraded window.
    const watch = Promise.all(
      gateways.map(async (gateway, i) => {
        while (watching) {
          const [seen, gauge] = await Promise.all([readiness(gateway), metric(gateway, 'rate_limit_store_degraded')]);
          ready.push({ at: Date.now(), gateway: i, ...seen });
          if (gauge === 1) degraded.add(i);
          await sleep(50);
        }
      }),
    );
    let killedAt = 0;
    let recoveredAt = 0;
    let admittedBeforeKill: number;
    try {
      await sleep(300);
      const oldPort = await setup.primaryPort();
      admittedBeforeKill = samples.filter((s) => s.status === 200).length;
      killedAt = Date.now();
      await setup.server(oldPort).stop(); // SIGKILL: no goodbye to clients or sentinels
      const newPort = await setup.waitForFailover(oldPort, 30_000);
      for (const gateway of gateways) {
        const deadline = Date.now() + 15_000;
        let last = await readiness(gateway);
        while (last.redis !== 'up') {
          if (Date.now() > deadline)
            throw new Error(`a gateway did not see Redis again after the failover: ${JSON.stringify(last)}`);
          last = await readiness(gateway);
          await sleep(100);
        }
      }
      recoveredAt = Date.now();
      expect(Number(String(await command(newPort, 'DBSIZE')))).toBeGreaterThan(0);
      // Carry on until the shared counters on the new primary refuse the key on every instance.
      const deadline = Date.now() + 30_000;
      while (samples.slice(-30).some((s) => s.status !== 429) && Date.now() < deadline) await sleep(50);
    } finally {
      loading = false;
      await load;
      watching = false;
      await watch;
    }

    // Never an answer other than the documented ones: 200, 429, and 503 SERVICE_UNAVAILABLE with Retry-After.
    expect([...new Set(samples.map((s) => s.status))].filter((status) => ![200, 429, 503].includes(status))).toEqual(
      [],
    );
    for (const s of samples.filter((sample) => sample.status === 503)) {
      expect(s.code).toBe('SERVICE_UNAVAILABLE');
      expect(Number(s.retryAfter)).toBeGreaterThanOrEqual(1);
    }
    // No request hung on the dead primary beyond REDIS_COMMAND_TIMEOUT_MS: the slowest answer of the failover
    // window is within the timeout of the slowest answer outside it (the loaded machine's own slowness).
    const inWindow = (s: Sample) => s.at >= killedAt && s.at < recoveredAt;
    const slowestDuring = Math.max(0, ...samples.filter(inWindow).map((s) => s.ms));
    const slowestOutside = Math.max(0, ...samples.filter((s) => !inWindow(s)).map((s) => s.ms));
    expect(slowestDuring).toBeLessThanOrEqual(commandTimeoutMs + Math.max(1_000, slowestOutside));

    // Readiness and metrics told what happened: every instance answered 503 ready and reported Redis degraded.
    for (const i of gateways.keys()) {
      expect(ready.some((r) => r.gateway === i && r.at > killedAt && r.status === 503)).toBe(true);
      expect(degraded.has(i)).toBe(true);
      expect(await metric(gateways[i], 'rate_limit_store_degraded')).toBe(0);
    }
    let fallbacks = 0;
    for (const gateway of gateways) fallbacks += await metric(gateway, 'rate_limit_store_fallbacks_total');
    expect(fallbacks).toBeGreaterThan(0);

    // The price of availability: admissions beyond the limit, made on per-instance counters during the
    // failover and from counts the replica had not yet received. Bounded by what the instances could each admit.
    const admitted = samples.filter((s) => s.status === 200).length;
    expect(samples.slice(-30).every((s) => s.status === 429)).toBe(true);
    expect(admitted).toBeGreaterThanOrEqual(loadLimit);
    expect(admitted).toBeLessThanOrEqual(loadLimit * (gateways.length + 1));
    const during = samples.filter(inWindow);
    console.log(
      `Sentinel failover under load: ${recoveredAt - killedAt} ms from the kill until every instance was ready again; ` +
        `${samples.length} requests, ${during.length} during the failover (${during.filter((s) => s.status === 200).length} admitted on per-instance counters, ` +
        `${samples.filter((s) => s.status === 503).length} answered 503); admitted ${admitted} for a limit of ${loadLimit} ` +
        `(over-admission ${admitted - loadLimit}, ${admittedBeforeKill} admitted before the kill); slowest answer ${slowestDuring} ms during the failover, ${slowestOutside} ms outside it`,
    );
  });

  it('a subscriber from the same connection factory hears messages again after the failover', async () => {
    const primary = await setup.primaryPort();
    const deadline = Date.now() + 15_000;
    // Published on the promoted primary until the subscriber, resubscribed by ioredis after reconnecting, hears one.
    while (!heard.includes('after-failover')) {
      if (Date.now() > deadline)
        throw new Error(`the subscriber heard nothing after the failover (status ${subscriber.status})`);
      await command(primary, 'PUBLISH', `${keyPrefix}changes`, 'after-failover');
      await sleep(200);
    }
    expect(subscriber.status).toBe('ready');
  });

  it('counts exactly and shared on the promoted primary', async () => {
    const seen: number[] = [];
    for (let i = 0; i < 5; i += 1) seen.push(remaining(await get(i, keys.after)));
    expect(seen).toEqual([4, 3, 2, 1, 0]);
    expectErrorBody(await get(5, keys.after), 429, 'RATE_LIMITED');
    const primary = await setup.primaryPort();
    expect(await command(primary, 'GET', `${keyPrefix}rl:{consumer:after}:w:minute`)).toBe('5');
  });
});
