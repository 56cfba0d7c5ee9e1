import { AppMetrics } from '@app/platform';
import { until } from '../../scripts/wait';
import {
  createGatewayTestDatabase,
  GatewayTestDatabase,
  GatewayUnderTest,
  mintKey,
  startGateway,
} from '../support/gateway';
import { call, expectErrorBody, Reply } from '../support/http';
import { RunningPets, startPetsService } from '../support/pets-service';
import { hasRedisServer, OwnRedisServer } from '../support/redis-server';
import { runIf } from '../support/skip';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const remaining = (reply: Reply) => Number(reply.headers.get('x-ratelimit-remaining'));

/** The value of one sample on a gateway's metrics port, e.g. metric(g, 'rate_limit_undecided_total', 'reason="late"'). */
async function metric(gateway: GatewayUnderTest, name: string, labels = ''): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${gateway.app.get(AppMetrics).port}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name}{`) && l.includes(labels));
  return line ? Number(line.split(' ').pop()) : 0;
}

/**
 * Redis really stopped and started again under the gateways: a redis-server of this file's own (never the
 * shared one). Two instances fail open (RATE_LIMIT_FAILURE_MODE=open, the default), one fails closed.
 * Needs a redis-server binary, as CI has; without one there is no Redis to stop.
 */
const ifRedisServer = runIf(hasRedisServer, 'redis-server on PATH (the test starts its own)');
ifRedisServer.describe('rate limits when Redis is late, gone, and back', () => {
  let redis: OwnRedisServer;
  let pets: RunningPets;
  let open: GatewayUnderTest[];
  let closed: GatewayUnderTest;
  let database: GatewayTestDatabase;
  const keys: Record<string, string> = {};
  // Nest's static Logger writes through the last app created, so the lines of all three instances land together.
  const lines: string[] = [];
  const logged = (text: string) => lines.filter((line) => line.includes(text)).length;
  const as = (key: string) => ({ headers: { authorization: `Bearer ${key}` } });
  const get = (gateway: GatewayUnderTest, key: string) => call(`${gateway.url}/v1/pets?limit=1`, as(key));

  beforeAll(async () => {
    redis = await OwnRedisServer.start();
    pets = await startPetsService();
    database = await createGatewayTestDatabase();
    const env = {
      REDIS_URL: redis.url,
      REDIS_COMMAND_TIMEOUT_MS: '500',
      BAN_THRESHOLD: '2',
      BAN_GRACE_MS: '0',
      LOG_LEVEL: 'warn',
    };
    const gateway = (keyPrefix: string, extra: Record<string, string> = {}) =>
      startGateway({
        petsUrl: pets.url,
        database,
        keyPrefix,
        env: { ...env, ...extra },
        logDestination: { write: (line: string) => lines.push(line) },
      });
    open = [await gateway('outage-open:'), await gateway('outage-open:')];
    closed = await gateway('outage-closed:', { RATE_LIMIT_FAILURE_MODE: 'closed' });
    for (const name of ['late', 'counted', 'banned', 'closed', 'after']) {
      keys[name] = await mintKey(open[0], 'enterprise', name, { perMinute: name === 'banned' ? 1 : 5, perDay: 100 });
    }
  });
  afterAll(async () => {
    for (const gateway of [...(open ?? []), closed]) await gateway?.close();
    await database?.drop();
    await pets?.close();
    await redis?.stop();
  });

  it('answers 503 with Retry-After when Redis replies too late, never a fresh quota; a Redis that hangs counts as gone', async () => {
    const [a] = open;
    expect((await get(a, keys.late)).status).toBe(200);
    const disturber = redis.client();
    const sleeping = disturber.call('DEBUG', 'SLEEP', '3'); // the process lives, the connection stays open, no reply
    await sleep(100);
    const late = await get(a, keys.late);
    expectErrorBody(late, 503, 'SERVICE_UNAVAILABLE');
    expect(late.headers.get('retry-after')).toBe('1');
    expect(late.headers.get('x-ratelimit-remaining')).toBe('0');
    expect(late.headers.get('ratelimit')).toBe('"minute";r=0;t=1');
    expect(await metric(a, 'rate_limit_undecided_total', 'reason="late"')).toBe(1);
    expect(await metric(a, 'rate_limit_store_fallbacks_total')).toBe(0);

    // Nothing at all answered within REDIS_COMMAND_TIMEOUT_MS: the connection was dropped as hung, so the next
    // request is decided as "Redis gone" (open: in-process, from the count Redis last gave: 1 of 5).
    const during = await get(a, keys.late);
    expect(during.status).toBe(200);
    expect(remaining(during)).toBe(3);
    expect(await metric(a, 'rate_limit_store_fallbacks_total')).toBe(1);
    expect(await metric(a, 'rate_limit_store_degraded')).toBe(1);

    await sleeping;
    disturber.disconnect();
    await until('ready again', async () => (await call(`${a.url}/health/ready`)).status === 200, 15_000);
    // Redis's count is the truth again: the late request may have been counted there, never twice.
    const next = await get(a, keys.late);
    expect(next.status).toBe(200);
    expect([3, 2]).toContain(remaining(next));
    expect(await metric(a, 'rate_limit_store_degraded')).toBe(0);
  });

  it('while Redis is gone: open instances carry on from the last counts and bans Redis gave them; closed ones answer 503', async () => {
    const [a, b] = open;
    expect(remaining(await get(a, keys.counted))).toBe(4);
    expect(remaining(await get(b, keys.counted))).toBe(3); // shared
    expect((await get(a, keys.banned)).status).toBe(200);
    const codes: string[] = [];
    for (let i = 0; i < 4; i += 1) codes.push(((await get(i % 2 ? b : a, keys.banned)).body as { code: string }).code);
    expect(codes).toEqual(['RATE_LIMITED', 'RATE_LIMITED', 'RATE_LIMITED', 'KEY_BANNED']);
    expect(((await get(a, keys.banned)).body as { code: string }).code).toBe('KEY_BANNED');
    expect((await get(closed, keys.closed)).status).toBe(200);

    await redis.stop();

    // B last saw the count at 2 of 5: it goes on from there, not from a fresh quota.
    const onFallback = await get(b, keys.counted);
    expect(onFallback.status).toBe(200);
    expect(remaining(onFallback)).toBe(2);
    expect(remaining(await get(b, keys.counted))).toBe(1);
    expect(remaining(await get(b, keys.counted))).toBe(0);
    expectErrorBody(await get(b, keys.counted), 429, 'RATE_LIMITED');
    // The ban Redis reported is still in force on both instances.
    for (const gateway of open) expectErrorBody(await get(gateway, keys.banned), 429, 'KEY_BANNED');

    const refused = await get(closed, keys.closed);
    expectErrorBody(refused, 503, 'SERVICE_UNAVAILABLE');
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(refused.headers.get('x-ratelimit-remaining')).toBe('0');
    expectErrorBody(await call(`${closed.url}/v1/pets`), 503, 'SERVICE_UNAVAILABLE'); // keyless too

    for (const gateway of [...open, closed]) {
      // Readiness is reused for a second (probes cannot amplify load): it turns 503 within that second.
      await until('not ready', async () => (await call(`${gateway.url}/health/ready`)).status === 503, 3_000);
      expect(await metric(gateway, 'rate_limit_store_degraded')).toBe(1);
    }
    expect(await metric(b, 'rate_limit_store_fallbacks_total')).toBeGreaterThanOrEqual(4);
    expect(await metric(closed, 'rate_limit_undecided_total', 'reason="outage"')).toBeGreaterThanOrEqual(2);
    expect(await metric(closed, 'rate_limit_store_fallbacks_total')).toBe(0);
  });

  it('when Redis is back, every instance counts in Redis again, shared', async () => {
    await redis.start(); // empty: no persistence
    for (const gateway of [...open, closed])
      await until('ready again', async () => (await call(`${gateway.url}/health/ready`)).status === 200, 15_000);
    const [a, b] = open;
    expect(remaining(await get(a, keys.after))).toBe(4);
    expect(remaining(await get(b, keys.after))).toBe(3);
    expect(remaining(await get(a, keys.after))).toBe(2);
    const back = await get(closed, keys.closed);
    expect(back.status).toBe(200);
    expect(remaining(back)).toBe(4); // a fresh Redis: the window starts again
    for (const gateway of [...open, closed]) expect(await metric(gateway, 'rate_limit_store_degraded')).toBe(0);
    // Said once per instance when Redis went and once when it came back (A twice: it also saw the hung Redis).
    expect(logged('Redis unreachable')).toBe(4);
    expect(logged('Redis reachable again')).toBe(4);
    expect(logged('answering 503 (RATE_LIMIT_FAILURE_MODE=closed)')).toBe(1);
    expect(logged('Redis sent no reply for 500 ms')).toBe(1);
    const inspector = redis.client();
    expect(await inspector.get(`outage-open:rl:{consumer:after}:w:minute`)).toBe('3');
    inspector.disconnect();
  });
});
