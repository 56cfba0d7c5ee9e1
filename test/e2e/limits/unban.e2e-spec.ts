import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { adminCall, GatewayUnderTest, mintKey } from '../../support/gateway';
import { metric } from '../../support/gateway-metrics';
import { call, expectErrorBody } from '../../support/http';
import { withStack } from '../../support/with-stack';

const THRESHOLD = 3;

/**
 * Issue #22: `POST /consumers/{name}/unban` lifts a ban and forgets the strikes on every instance, and
 * rate_limit_bans_total counts bans, not the requests a ban refuses. On the engine the run selects: shared
 * counters in Redis (REDIS_URL), or each instance's in-process counters (told through the change channel).
 */
describe('unban', () => {
  // No grace before strikes: refusals past the limit strike at once; the THRESHOLD + 1st strike bans.
  const env = { BAN_THRESHOLD: String(THRESHOLD), BAN_GRACE_MS: '0', BAN_DURATION_SECONDS: '600' };
  const stack = withStack({ pets: {}, database: true, sharedKeyPrefix: 'unban', gateways: { a: { env }, b: { env } } });

  /** Sends requests to `gateway` until one is answered KEY_BANNED; returns how many were refused before it. */
  async function refusalsUntilBanned(gateway: GatewayUnderTest, key: string): Promise<number> {
    let refused = 0;
    for (let i = 0; i < 50; i += 1) {
      const reply = await call(`${gateway.url}/v1/pets?limit=1`, { headers: { authorization: `Bearer ${key}` } });
      if (reply.status === 200) continue;
      expect(reply.status).toBe(429);
      if ((reply.body as { code: string }).code === 'KEY_BANNED') return refused;
      refused += 1;
    }
    throw new Error('never banned');
  }

  it('lifts the ban and the strikes on every instance; the metric counts one ban per ban', async () => {
    const key = await mintKey(stack.a, 'enterprise', 'unbanned', { perMinute: 2, perDay: 1000 });
    const bansBefore = await metric(stack.b, 'rate_limit_bans_total', 'plan="enterprise"');
    // Banned on instance B (its own counters, or the shared ones).
    const refusedFirst = await refusalsUntilBanned(stack.b, key);
    expect(refusedFirst).toBe(THRESHOLD + 1);
    for (let i = 0; i < 10; i += 1)
      expectErrorBody(
        await call(`${stack.b.url}/v1/pets?limit=1`, { headers: { authorization: `Bearer ${key}` } }),
        429,
        'KEY_BANNED',
      );
    // One ban, eleven KEY_BANNED answers: the metric says one.
    expect((await metric(stack.b, 'rate_limit_bans_total', 'plan="enterprise"')) - bansBefore).toBe(1);
    const usageBefore = (await adminCall(stack.b, 'GET', '/consumers/unbanned/usage')).body as { banned: boolean };
    expect(usageBefore.banned).toBe(true);

    // Lifted through instance A's admin API.
    const unban = await adminCall(stack.a, 'POST', '/consumers/unbanned/unban');
    expect(unban.status).toBe(200);
    expect(unban.body).toMatchObject({ consumer: 'unbanned', banned: false, banSecondsLeft: null });

    // On B: no longer banned (the window is still spent: 429 RATE_LIMITED), and the strikes are forgotten: it
    // takes as many refusals as the first time to be banned again.
    let reply = await call(`${stack.b.url}/v1/pets?limit=1`, { headers: { authorization: `Bearer ${key}` } });
    for (let waited = 0; (reply.body as { code?: string })?.code === 'KEY_BANNED' && waited < 2_000; waited += 50) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      reply = await call(`${stack.b.url}/v1/pets?limit=1`, { headers: { authorization: `Bearer ${key}` } });
    }
    expectErrorBody(reply, 429, 'RATE_LIMITED');
    expect(((await adminCall(stack.b, 'GET', '/consumers/unbanned/usage')).body as { banned: boolean }).banned).toBe(
      false,
    );
    // Banned again only after as many refusals as the first time (the one above was the window's first).
    expect((await refusalsUntilBanned(stack.b, key)) + 1).toBe(THRESHOLD + 1);
    expect((await metric(stack.b, 'rate_limit_bans_total', 'plan="enterprise"')) - bansBefore).toBe(2);
  });

  it('forgets the strikes of a consumer not (yet) banned', async () => {
    const key = await mintKey(stack.a, 'enterprise', 'striking', { perMinute: 1, perDay: 1000 });
    expect((await call(`${stack.b.url}/v1/pets?limit=1`, { headers: { authorization: `Bearer ${key}` } })).status).toBe(
      200,
    );
    // The window's first refusal, then THRESHOLD strikes: one more would ban.
    for (let i = 0; i < THRESHOLD + 1; i += 1) {
      expectErrorBody(
        await call(`${stack.b.url}/v1/pets?limit=1`, { headers: { authorization: `Bearer ${key}` } }),
        429,
        'RATE_LIMITED',
      );
    }
    expect((await adminCall(stack.b, 'POST', '/consumers/striking/unban')).status).toBe(200);
    expect(await refusalsUntilBanned(stack.b, key)).toBe(THRESHOLD + 1);
  });

  it('answers 404 for an unknown consumer and 200 for one that is not banned; the keys CLI says it', async () => {
    expectErrorBody(await adminCall(stack.a, 'POST', '/consumers/nobody/unban'), 404, 'NOT_FOUND');
    await mintKey(stack.a, 'free', 'never-banned');
    const reply = await adminCall(stack.a, 'POST', '/consumers/never-banned/unban');
    expect(reply.status).toBe(200);
    expect(reply.body).toMatchObject({ banned: false });
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [join(__dirname, '../../../scripts/keys.js'), 'unban', 'never-banned'],
      {
        env: { ...process.env, ADMIN_URL: stack.a.adminUrl, ADMIN_TOKEN: stack.a.adminToken },
      },
    );
    expect(stdout).toContain('Unbanned "never-banned"');
  });
});
