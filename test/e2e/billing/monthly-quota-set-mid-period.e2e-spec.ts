import { randomBytes } from 'node:crypto';
import { adminCall, GatewayUnderTest, mintKey, startGateway } from '../../support/gateway';
import { call, expectErrorBody } from '../../support/http';
import { RunningPets, startPetsService } from '../../support/pets-service';
import { hasRedisServer, OwnRedisServer } from '../../support/redis-server';

const as = (key: string) => ({ headers: { authorization: `Bearer ${key}` } });
const unique = (prefix: string) => `${prefix}-${randomBytes(4).toString('hex')}`;
/**
 * Refusals are never strikes enough for a ban; usage written only a minute after it is held, so that the test sees
 * the admin API write this instance's answers first (a quota set seconds after them counts them too).
 */
const ENV = { BAN_GRACE_MS: '60000', USAGE_FLUSH_MS: '60000' };

interface Usage {
  windows: Array<{ name: string; limit: number; used: number; remaining: number }>;
}

/** A counter store for the gateway under test: its environment, and what to stop afterwards. */
interface Engine {
  name: string;
  start(): Promise<{ env: Record<string, string>; stop(): Promise<void> }>;
}
const engines: Engine[] = [
  { name: 'in-process', start: async () => ({ env: { REDIS_URL: '' }, stop: async () => undefined }) },
];
if (process.env.REDIS_URL)
  engines.push({ name: 'Redis', start: async () => ({ env: {}, stop: async () => undefined }) });
else if (hasRedisServer)
  engines.push({
    name: 'Redis (a server of its own)',
    start: async () => {
      const redis = await OwnRedisServer.start();
      return { env: { REDIS_URL: redis.url }, stop: () => redis.stop() };
    },
  });

/**
 * A monthly quota set mid-period counts the whole period (docs/billing.md, "A quota set mid-period"): the month's
 * count starts at what the period already used (its usage history), never at the moment the quota was set. Before,
 * a consumer with 17 requests behind it showed "This 24-hour window … Used 41" beside "This billing month … Used 24"
 * and got its whole quota again.
 */
describe.each(engines)('a monthly quota set mid-period, on the $name store', (engine) => {
  let pets: RunningPets;
  let gateway: GatewayUnderTest;
  let stopStore: () => Promise<void>;

  beforeAll(async () => {
    const store = await engine.start();
    stopStore = store.stop;
    pets = await startPetsService();
    gateway = await startGateway({ petsUrl: pets.url, env: { ...ENV, ...store.env } });
  });
  afterAll(async () => {
    await gateway?.close();
    await pets?.close();
    await stopStore?.();
  });

  const send = (key: string) => call(`${gateway.url}/v1/pets?limit=1`, as(key));
  const usageOf = async (name: string) =>
    ((await adminCall(gateway, 'GET', `/consumers/${name}/usage`)).body as Usage).windows;

  it('counts the requests made before the quota: the month used what the day used', async () => {
    const name = unique('mid');
    const key = await mintKey(gateway, 'free', name);
    for (let i = 0; i < 17; i += 1) expect((await send(key)).status).toBe(200);
    expect((await adminCall(gateway, 'PATCH', `/consumers/${name}/billing`, { perMonth: 1000 })).status).toBe(200);
    for (let i = 0; i < 24; i += 1) expect((await send(key)).status).toBe(200);
    const windows = await usageOf(name);
    expect(windows.find((w) => w.name === 'day')?.used).toBe(41);
    expect(windows.find((w) => w.name === 'month')).toMatchObject({ limit: 1000, used: 41, remaining: 959 });
  });

  it('holds the quota to the whole period: 17 used, a quota of 20 admits 3 more', async () => {
    const name = unique('held');
    const key = await mintKey(gateway, 'free', name);
    for (let i = 0; i < 17; i += 1) expect((await send(key)).status).toBe(200);
    expect((await adminCall(gateway, 'PATCH', `/consumers/${name}/billing`, { perMonth: 20 })).status).toBe(200);
    const statuses = [];
    for (let i = 0; i < 4; i += 1) statuses.push(await send(key));
    expect(statuses.map((r) => r.status)).toEqual([200, 200, 200, 429]);
    expectErrorBody(statuses[3], 429, 'RATE_LIMITED');
    expect(statuses[3].headers.get('ratelimit')).toMatch(/^"month";r=0;t=\d+$/);
    // A refusal is no use: raising the quota again counts the 20 admitted, not the 429.
    expect((await adminCall(gateway, 'PATCH', `/consumers/${name}/billing`, { perMonth: 30 })).status).toBe(200);
    expect((await usageOf(name)).find((w) => w.name === 'month')).toMatchObject({ limit: 30, used: 20 });
  });
});
