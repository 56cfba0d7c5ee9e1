import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  createGatewayTestDatabase,
  GatewayTestDatabase,
  GatewayUnderTest,
  mintKey,
  startGateway,
} from '../../support/gateway';
import { call, expectErrorBody } from '../../support/http';
import { RunningPets, startPetsService } from '../../support/pets-service';

/**
 * The embedded default's in-process counters survive a restart (RATE_LIMIT_STATE_FILE, which npm start sets):
 * a restart hands no consumer a fresh minute or day, and lifts no ban. Always on the in-process store, whatever
 * the run's REDIS_URL (with Redis the counters live there and this file is not used).
 */
describe('in-process rate-limit counters across a restart', () => {
  let pets: RunningPets;
  let database: GatewayTestDatabase;
  let gateway: GatewayUnderTest | undefined;
  const stateFile = join(mkdtempSync(join(tmpdir(), 'petstore-counters-')), 'rate-limits.json');
  const start = () =>
    startGateway({
      petsUrl: pets.url,
      database,
      env: { RATE_LIMIT_STATE_FILE: stateFile, BAN_GRACE_MS: '0', BAN_THRESHOLD: '2' },
      adjust: (config) => (config.redis = undefined),
    });
  const get = (key: string) => call(`${gateway!.url}/v1/pets?limit=1`, { headers: { authorization: `Bearer ${key}` } });

  beforeAll(async () => {
    pets = await startPetsService();
    database = await createGatewayTestDatabase();
  });
  afterAll(async () => {
    await gateway?.close();
    await database?.drop();
    await pets?.close();
  });

  it('resumes the windows and the bans where they were', async () => {
    gateway = await start();
    const counted = await mintKey(gateway, 'free', 'restart-counted');
    const banned = await mintKey(gateway, 'free', 'restart-banned', { perMinute: 1, perDay: 1000 });
    for (let i = 0; i < 3; i += 1) expect((await get(counted)).status).toBe(200);
    // Over its limit of 1, then past the threshold of 2 strikes: banned.
    const replies = [];
    for (let i = 0; i < 5; i += 1) replies.push(await get(banned));
    expect(replies.at(-1)!.status).toBe(429);
    expectErrorBody(replies.at(-1)!, 429, 'KEY_BANNED');

    await gateway.close();
    gateway = await start();
    const next = await get(counted);
    expect(next.status).toBe(200);
    expect(next.headers.get('x-ratelimit-remaining')).toBe('56');
    expectErrorBody(await get(banned), 429, 'KEY_BANNED');
  });

  it('starts empty, with one warning, from a file it cannot read', async () => {
    await gateway?.close();
    writeFileSync(stateFile, '{"version": 1, "trackers": 42');
    gateway = await start();
    const key = await mintKey(gateway, 'free');
    expect((await get(key)).headers.get('x-ratelimit-remaining')).toBe('59');
  });
});
