import { randomBytes } from 'node:crypto';
import { createGatewayTestDatabase, GatewayTestDatabase, GatewayUnderTest, mintKey, startGateway } from './support/gateway';
import { call, expectErrorBody, Reply } from './support/http';
import { RunningPets, startPetsService } from './support/pets-service';

/**
 * Several gateway instances behind a round-robin balancer must hold a key to its plan exactly. Needs a real
 * Redis: CI runs this file with REDIS_URL set (the run without it has no shared counters to test).
 */
(process.env.REDIS_URL ? describe : describe.skip)('rate limits across two gateway instances sharing Redis', () => {
  let pets: RunningPets;
  const gateways: GatewayUnderTest[] = [];
  let freeKey: string;
  let database: GatewayTestDatabase;

  beforeAll(async () => {
    pets = await startPetsService();
    database = await createGatewayTestDatabase();
    const keyPrefix = `${process.env.REDIS_KEY_PREFIX ?? 'test:'}cluster-${randomBytes(4).toString('hex')}:`;
    for (let i = 0; i < 2; i += 1) gateways.push(await startGateway({ petsUrl: pets.url, database, keyPrefix }));
    freeKey = await mintKey(gateways[0], 'free', 'burst');
  });
  afterAll(async () => {
    for (const gateway of gateways) await gateway.close();
    await database?.drop();
    await pets?.close();
  });

  it('admits exactly 60 of a burst of 200 concurrent requests for a Free key, with consistent headers', async () => {
    const replies = await Promise.all(
      Array.from({ length: 200 }, (_, i) =>
        call(`${gateways[i % 2].url}/v1/pets?limit=1`, { headers: { authorization: `Bearer ${freeKey}` } }),
      ),
    );
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

  it('shares bans across instances', async () => {
    // The burst above sent 140 requests after the 429, far past BAN_THRESHOLD (20): the key is banned everywhere.
    for (const gateway of gateways) {
      const reply = await call(`${gateway.url}/v1/pets?limit=1`, { headers: { authorization: `Bearer ${freeKey}` } });
      expectErrorBody(reply, 429, 'KEY_BANNED');
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
    gateway = await startGateway({ petsUrl: pets.url, env: { REDIS_URL: 'redis://127.0.0.1:1', REDIS_COMMAND_TIMEOUT_MS: '100' } });
    key = await mintKey(gateway, 'enterprise', 'degraded', { perMinute: 3, perDay: 100 });
  });
  afterAll(async () => {
    await gateway?.close();
    await pets?.close();
  });

  it('keeps serving promptly on in-process counters, still enforcing the limits, and says so in readiness', async () => {
    const started = Date.now();
    const statuses: number[] = [];
    for (let i = 0; i < 4; i += 1) statuses.push((await call(`${gateway.url}/v1/pets?limit=1`, { headers: { authorization: `Bearer ${key}` } })).status);
    expect(statuses).toEqual([200, 200, 200, 429]);
    expect(Date.now() - started).toBeLessThan(5_000);
    const ready = await call(`${gateway.url}/health/ready`);
    expect(ready.status).toBe(503);
  });
});
