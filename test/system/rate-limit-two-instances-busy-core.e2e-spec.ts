import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  createGatewayTestDatabase,
  GatewayTestDatabase,
  GatewayUnderTest,
  mintKey,
  startGateway,
} from '../support/gateway';
import { call, expectErrorBody, Reply } from '../support/http';
import { RunningPets, startPetsService } from '../support/pets-service';
import { runIf } from '../support/skip';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Several gateway instances behind a round-robin balancer must hold a key to its plan exactly. Needs a real
 * Redis: CI runs this file with REDIS_URL set (the run without it has no shared counters to test).
 */
const ifRedis = runIf(process.env.REDIS_URL, 'REDIS_URL (a Redis server)');
ifRedis.describe('rate limits across two gateway instances sharing Redis', () => {
  let pets: RunningPets;
  const gateways: GatewayUnderTest[] = [];
  const keys: Record<string, string> = {};
  const as = (key: string) => ({ headers: { authorization: `Bearer ${key}` } });
  const burst = (key: string, count: number) =>
    Promise.all(Array.from({ length: count }, (_, i) => call(`${gateways[i % 2].url}/v1/pets?limit=1`, as(key))));
  let database: GatewayTestDatabase;

  beforeAll(async () => {
    pets = await startPetsService();
    database = await createGatewayTestDatabase();
    const keyPrefix = `${process.env.REDIS_KEY_PREFIX ?? 'test:'}cluster-${randomBytes(4).toString('hex')}:`;
    // Default REDIS_COMMAND_TIMEOUT_MS, BAN_THRESHOLD (20) and BAN_GRACE_MS (5 s).
    for (let i = 0; i < 2; i += 1) gateways.push(await startGateway({ petsUrl: pets.url, database, keyPrefix }));
    keys.burst = await mintKey(gateways[0], 'free', 'burst');
    keys.persistent = await mintKey(gateways[0], 'free', 'persistent');
    keys.loaded = await mintKey(gateways[0], 'free', 'loaded');
    keys.load = await mintKey(gateways[0], 'enterprise', 'load', { perMinute: 1_000_000, perDay: 100_000_000 });
  });
  afterAll(async () => {
    for (const gateway of gateways) await gateway.close();
    await database?.drop();
    await pets?.close();
  });

  it('admits exactly 60 of a burst of 200 concurrent requests for a Free key, with consistent headers', async () => {
    const replies = await burst(keys.burst, 200);
    const admitted = replies.filter((r) => r.status === 200);
    const refused = replies.filter((r) => r.status !== 200);
    expect(admitted).toHaveLength(60);
    for (const reply of refused) expectErrorBody(reply, 429);

    // Each admitted request saw its own place in the window: Remaining 59..0, each exactly once, never negative.
    const remaining = admitted.map((r: Reply) => Number(r.headers.get('x-ratelimit-remaining'))).sort((a, b) => a - b);
    expect(remaining).toEqual(Array.from({ length: 60 }, (_, i) => i));
    for (const reply of replies) {
      expect(reply.headers.get('x-ratelimit-limit')).toBe('60');
      expect(Number(reply.headers.get('x-ratelimit-remaining'))).toBeGreaterThanOrEqual(0);
      expect(reply.headers.get('x-ratelimit-reset')).toMatch(/^\d+$/);
    }
    for (const reply of refused) {
      expect(reply.headers.get('x-ratelimit-remaining')).toBe('0');
      expect(Number(reply.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    }
    // Both instances took part.
    const servedBy = new Set(replies.map((_, i) => i % 2));
    expect(servedBy.size).toBe(2);
  });

  it('refuses such a burst without banning it: its 140 refusals came before the client could read a 429', async () => {
    // The burst above: 140 refusals within the grace period, far more than BAN_THRESHOLD, and no ban.
    for (const gateway of gateways) {
      const reply = await call(`${gateway.url}/v1/pets?limit=1`, as(keys.burst));
      expectErrorBody(reply, 429, 'RATE_LIMITED');
    }
  });

  it('bans, on every instance, a client that keeps sending after the grace period, with headers that agree', async () => {
    await burst(keys.persistent, 61);
    await sleep(5_100); // BAN_GRACE_MS: from now on refusals are strikes
    const codes: string[] = [];
    for (let i = 0; i < 22; i += 1)
      codes.push(
        ((await call(`${gateways[i % 2].url}/v1/pets?limit=1`, as(keys.persistent))).body as { code: string }).code,
      );
    // Strikes 1 to 20 (BAN_THRESHOLD) are tolerated; the 21st bans.
    expect(codes).toEqual([...Array(20).fill('RATE_LIMITED'), 'KEY_BANNED', 'KEY_BANNED']);
    for (const gateway of gateways) {
      const banned = await call(`${gateway.url}/v1/pets?limit=1`, as(keys.persistent));
      expectErrorBody(banned, 429, 'KEY_BANNED');
      const retryAfter = Number(banned.headers.get('retry-after'));
      expect(retryAfter).toBeGreaterThan(590);
      // A delay in whole seconds, rounded up: at most the ban.
      expect(retryAfter).toBeLessThanOrEqual(600);
      expect(banned.headers.get('x-ratelimit-remaining')).toBe('0');
      // No t during a ban: t=600 would exceed the minute's w=60 (Retry-After says when a request passes).
      expect(banned.headers.get('ratelimit')).toBe('"minute";r=0');
      expect(
        Math.abs(Number(banned.headers.get('x-ratelimit-reset')) - (Date.now() / 1000 + retryAfter)),
      ).toBeLessThanOrEqual(1.5);
    }
  });

  it('admits exactly 60 of 1,000 concurrent requests over both instances on a loaded machine', async () => {
    // The load: a process spinning on a core, and a stream of requests on another key through the same gateways.
    const spinner = spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' });
    let loading = true;
    const load = (async () => {
      while (loading)
        await Promise.all(
          Array.from({ length: 50 }, (_, i) => call(`${gateways[i % 2].url}/v1/pets?limit=1`, as(keys.load))),
        );
    })();
    try {
      await sleep(300);
      const replies = await burst(keys.loaded, 1_000);
      const admitted = replies.filter((r) => r.status === 200);
      expect(replies.filter((r) => r.status !== 200 && r.status !== 429).map((r) => r.status)).toEqual([]);
      expect(admitted).toHaveLength(60);
      const remaining = admitted.map((r) => Number(r.headers.get('x-ratelimit-remaining')));
      expect(new Set(remaining).size).toBe(60);
    } finally {
      loading = false;
      spinner.kill('SIGKILL');
      await load;
    }
  });
});

describe('rate limits while Redis is unreachable', () => {
  let pets: RunningPets;
  let gateway: GatewayUnderTest;
  let key: string;

  beforeAll(async () => {
    pets = await startPetsService();
    // Port 1 on loopback: nothing listens there, connections are refused at once.
    gateway = await startGateway({
      petsUrl: pets.url,
      env: { REDIS_URL: 'redis://127.0.0.1:1', REDIS_COMMAND_TIMEOUT_MS: '100' },
    });
    key = await mintKey(gateway, 'enterprise', 'degraded', { perMinute: 3, perDay: 100 });
  });
  afterAll(async () => {
    await gateway?.close();
    await pets?.close();
  });

  it('keeps serving promptly on in-process counters, still enforcing the limits, and says so in readiness', async () => {
    const started = Date.now();
    const statuses: number[] = [];
    for (let i = 0; i < 4; i += 1)
      statuses.push(
        (await call(`${gateway.url}/v1/pets?limit=1`, { headers: { authorization: `Bearer ${key}` } })).status,
      );
    expect(statuses).toEqual([200, 200, 200, 429]);
    expect(Date.now() - started).toBeLessThan(5_000);
    const ready = await call(`${gateway.url}/health/ready`);
    expect(ready.status).toBe(503);
  });
});
