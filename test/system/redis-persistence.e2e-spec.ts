import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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
import { hasRedisServer, OwnRedisServer } from '../support/redis-server';
import { runIf } from '../support/skip';

const ROOT = join(__dirname, '../..');

/**
 * The options docker-compose.yml gives the `redis` service's redis-server (its `command`, without the program):
 * the test runs a Redis exactly as compose runs it, so it measures what compose deploys.
 */
function composeRedisOptions(): string[] {
  const compose = readFileSync(join(ROOT, 'docker-compose.yml'), 'utf8');
  const service = /^ {2}redis:\n((?: {4}.*\n|\s*\n)+)/m.exec(compose);
  if (!service) throw new Error('docker-compose.yml has no redis service');
  const command = /^ {4}command: (\[.*\])$/m.exec(service[1]);
  if (!command) throw new Error('the redis service of docker-compose.yml has no one-line command: [...]');
  const [program, ...options] = JSON.parse(command[1]) as string[];
  expect(program).toBe('redis-server');
  // Where the data lives is the volume's business (/data); the test gives a folder of its own.
  expect(options).not.toContain('--dir');
  return options;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function until(condition: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await sleep(100);
  }
}

/**
 * Issue #21 (4): a Redis restart must not forget bans and quotas. A redis-server started with the options of
 * docker-compose.yml's `redis` service, in a folder of the test's own, holds a banned key and a key halfway through
 * its minute; it is killed with SIGKILL and started again on the same folder and port. A gateway started after
 * the restart (which remembers nothing itself) must still refuse the banned key for the rest of its ban and carry
 * the other key's count on; so must the gateway that was running throughout, once it is back on Redis.
 */
const ifRedisServer = runIf(hasRedisServer, 'redis-server on PATH (the test starts its own)');
ifRedisServer.describe('Redis as compose runs it, after kill -9 and a restart', () => {
  const dir = mkdtempSync(join(tmpdir(), 'petstore-redis-aof-'));
  const keyPrefix = `${process.env.REDIS_KEY_PREFIX ?? 'test:'}persist-${randomBytes(4).toString('hex')}:`;
  const env = { BAN_GRACE_MS: '0', BAN_THRESHOLD: '2', BAN_DURATION_SECONDS: '600' };
  let redis: OwnRedisServer;
  let pets: RunningPets;
  let database: GatewayTestDatabase;
  let before: GatewayUnderTest;
  let after: GatewayUnderTest | undefined;

  beforeAll(async () => {
    redis = await OwnRedisServer.start(() => [], [...composeRedisOptions(), '--dir', dir]);
    pets = await startPetsService();
    database = await createGatewayTestDatabase();
    before = await startGateway({ petsUrl: pets.url, database, keyPrefix, env: { ...env, REDIS_URL: redis.url } });
  });
  afterAll(async () => {
    await after?.close();
    await before?.close();
    await redis?.stop();
    await database?.drop();
    await pets?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const list = (gateway: GatewayUnderTest, key: string): Promise<Reply> =>
    call(`${gateway.url}/v1/pets?limit=1`, { headers: { authorization: `Bearer ${key}` } });

  it('keeps a ban for the rest of its length and a count where it was', async () => {
    // A key of 3 a minute sends on after its 429s: with BAN_GRACE_MS=0 and BAN_THRESHOLD=2 its third strike bans it.
    const banned = await mintKey(before, 'enterprise', 'persist-banned', { perMinute: 3, perDay: 1000 });
    const codes: string[] = [];
    for (let i = 0; i < 8; i += 1) {
      const reply = await list(before, banned);
      codes.push(reply.status === 200 ? '200' : (reply.body as { code: string }).code);
    }
    expect(codes).toEqual([
      '200',
      '200',
      '200',
      'RATE_LIMITED',
      'RATE_LIMITED',
      'RATE_LIMITED',
      'KEY_BANNED',
      'KEY_BANNED',
    ]);
    // A key of 10 a minute that has sent 4.
    const counted = await mintKey(before, 'enterprise', 'persist-counted', { perMinute: 10, perDay: 1000 });
    for (let i = 0; i < 4; i += 1) expect((await list(before, counted)).status).toBe(200);
    const bannedAt = Date.now();

    await redis.stop(); // SIGKILL
    await redis.start();

    // A gateway that starts now knows only what Redis kept.
    after = await startGateway({ petsUrl: pets.url, database, keyPrefix, env: { ...env, REDIS_URL: redis.url } });
    const stillBanned = await list(after, banned);
    const fifth = await list(after, counted);
    const retryAfter = Number(stillBanned.headers.get('retry-after'));
    const left = 600 - Math.floor((Date.now() - bannedAt) / 1000);
    // Figures for docs/rate-limits.md: what a client sees right after the restart.
    console.log(
      `after kill -9 and a restart: banned key ${stillBanned.status} ${(stillBanned.body as { code?: string } | undefined)?.code ?? ''} ` +
        `(Retry-After ${stillBanned.headers.get('retry-after')}, ${left} s of the ban left); ` +
        `key of 10 a minute after 4 requests: its 5th leaves ${fifth.headers.get('x-ratelimit-remaining')}`,
    );
    expectErrorBody(stillBanned, 429, 'KEY_BANNED');
    expect(retryAfter).toBeGreaterThanOrEqual(left - 2);
    // Retry-After counts from the current whole second (Reset = now + Retry-After): up to one second over the ban.
    expect(retryAfter).toBeLessThanOrEqual(601);
    expect(fifth.status).toBe(200);
    expect(fifth.headers.get('x-ratelimit-limit')).toBe('10');
    expect(fifth.headers.get('x-ratelimit-remaining')).toBe('5');

    // The gateway that ran throughout reconnects (ioredis, every ≤ 2 s) and reads the same state from Redis.
    await until(async () => (await call(`${before.url}/health/ready`)).status === 200, 15_000);
    expectErrorBody(await list(before, banned), 429, 'KEY_BANNED');
    const sixth = await list(before, counted);
    expect(sixth.status).toBe(200);
    expect(sixth.headers.get('x-ratelimit-remaining')).toBe('4');
  });
});
