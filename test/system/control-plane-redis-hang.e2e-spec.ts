import { randomBytes } from 'node:crypto';
import { hashApiKey } from '../../apps/gateway/src/consumers/api-key';
import { KeyCache } from '../../apps/gateway/src/keys/key-cache';
import {
  adminCall,
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

const withKey = (key: string) => ({ headers: { authorization: `Bearer ${key}` } });

/** How long Redis stays frozen: far beyond the admin API's bound, so that an answer waiting on Redis shows. */
const STOP_MS = 10_000;
/**
 * docs/control-plane.md: an admin change answers within the commit plus a publish deadline of 1 s (an unban, a
 * usage read: within REDIS_COMMAND_TIMEOUT_MS, 1 s here); 3 s leaves a margin for a loaded machine.
 */
const ANSWER_BOUND_MS = 3_000;
/** docs/control-plane.md: once Redis answers again, other instances hear of the change at once; 3 s of margin. */
const CATCH_UP_BOUND_MS = 3_000;

async function timed(request: () => Promise<Reply>): Promise<{ reply: Reply; ms: number }> {
  const started = Date.now();
  const reply = await request();
  return { reply, ms: Date.now() - started };
}

async function until(
  probe: () => Promise<Reply>,
  ok: (reply: Reply) => boolean,
  timeoutMs: number,
): Promise<{ reply: Reply; afterMs: number }> {
  const started = Date.now();
  let reply = await probe();
  while (!ok(reply) && Date.now() - started < timeoutMs) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    reply = await probe();
  }
  return { reply, afterMs: Date.now() - started };
}

/**
 * Issue #21: an admin change never waits on Redis. Two instances share a consumers database (the run's engine)
 * and a Redis of this test's own, which is frozen (SIGSTOP) while instance A revokes and issues keys.
 */
const ifRedisServer = runIf(hasRedisServer, 'redis-server on PATH (the test starts its own)');
ifRedisServer.describe('control plane while the change channel (Redis) hangs', () => {
  let pets: RunningPets;
  let redis: OwnRedisServer;
  let database: GatewayTestDatabase;
  let a: GatewayUnderTest;
  let b: GatewayUnderTest;

  beforeAll(async () => {
    pets = await startPetsService();
    redis = await OwnRedisServer.start();
    database = await createGatewayTestDatabase();
    const keyPrefix = `stop-${randomBytes(4).toString('hex')}:`;
    // The cache TTL (30 s, the default) is far longer than the test: B can only refuse in time by hearing of the change.
    // Replies of a live Redis are awaited 1 s at most (REDIS_COMMAND_TIMEOUT_MS): the unban and usage routes' bound.
    const env = { REDIS_URL: redis.url, REDIS_COMMAND_TIMEOUT_MS: '1000' };
    a = await startGateway({ petsUrl: pets.url, database, keyPrefix, env });
    b = await startGateway({ petsUrl: pets.url, database, keyPrefix, env });
  });
  afterAll(async () => {
    redis?.resume();
    await a?.close();
    await b?.close();
    await database?.drop();
    await redis?.stop();
    await pets?.close();
  });

  it('answers a revoke, an issue, an unban (503) and a usage read within the bound while Redis is stopped; B refuses the revoked key soon after Redis resumes', async () => {
    const revoked = await mintKey(a, 'business', 'frozen-revoke');
    await mintKey(a, 'business', 'frozen-issue');
    // B has the key cached (valid) before Redis freezes.
    expect((await call(`${b.url}/v1/pets?limit=1`, withKey(revoked))).status).toBe(200);

    redis.pause();
    // Resumed by a timer, whatever the admin API does meanwhile (an answer that waits on Redis comes after it).
    let resumedAt = 0;
    const resumed = new Promise<void>((resolve) =>
      setTimeout(() => {
        redis.resume();
        resumedAt = Date.now();
        resolve();
      }, STOP_MS),
    );
    try {
      const revoke = await timed(() => adminCall(a, 'POST', '/consumers/frozen-revoke/revoke'));
      expect(revoke.reply.status).toBe(200);
      expect(revoke.reply.body).toHaveLength(1);
      const issue = await timed(() => adminCall(a, 'POST', '/consumers/frozen-issue/keys', {}));
      expect(issue.reply.status).toBe(201);
      console.log(`Redis stopped: revoke answered in ${revoke.ms} ms, issue in ${issue.ms} ms`);
      expect(revoke.ms).toBeLessThan(ANSWER_BOUND_MS);
      expect(issue.ms).toBeLessThan(ANSWER_BOUND_MS);
      // The ban lives in Redis: an unban cannot be done now, and says so in time; usage answers from memory.
      const unban = await timed(() => adminCall(a, 'POST', '/consumers/frozen-issue/unban'));
      expectErrorBody(unban.reply, 503, 'SERVICE_UNAVAILABLE');
      expect(unban.reply.headers.get('retry-after')).toMatch(/^[1-9]/);
      const usage = await timed(() => adminCall(a, 'GET', '/consumers/frozen-issue/usage'));
      expect(usage.reply.status).toBe(200);
      console.log(`Redis stopped: unban answered 503 in ${unban.ms} ms, usage 200 in ${usage.ms} ms`);
      expect(unban.ms).toBeLessThan(ANSWER_BOUND_MS);
      expect(usage.ms).toBeLessThan(ANSWER_BOUND_MS);
      // Instance A applied its own change before answering, Redis or not (asked directly: a /v1 request would
      // wait on the frozen rate-limit store).
      expect(await a.app.get(KeyCache).authenticate(hashApiKey(revoked))).toEqual({
        outcome: 'invalid',
        reason: 'revoked',
      });
    } finally {
      await resumed;
    }

    // B still had the key cached as valid; it must refuse it soon after Redis answers again, long before its TTL.
    const { reply, afterMs } = await until(
      () => call(`${b.url}/v1/pets?limit=1`, withKey(revoked)),
      (r) => r.status === 401,
      15_000,
    );
    console.log(`B refused the revoked key ${Date.now() - resumedAt} ms after Redis resumed`);
    expectErrorBody(reply, 401, 'UNAUTHORIZED');
    expect(afterMs).toBeLessThan(CATCH_UP_BOUND_MS);
  }, 60_000);
});
