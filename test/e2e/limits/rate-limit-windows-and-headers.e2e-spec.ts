import { GET_PET_DEPRECATION } from '@app/contract';
import { FakeClock, mintKey } from '../../support/gateway';
import { call, expectErrorBody, postJson, received, Reply } from '../../support/http';
import { checkReceived, OpenApiContract } from '../../support/openapi-contract';
import { withStack } from '../../support/with-stack';

const MINUTE_MS = 3_000; // the "minute" window, shortened so that a test can watch it reset
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const remaining = (reply: Reply) => Number(reply.headers.get('x-ratelimit-remaining'));

/**
 * Plan limits at the edge, on in-process counters or, with REDIS_URL set, on Redis. Consumers get small
 * custom limits so that the windows can be spent quickly; the window lengths are shortened likewise.
 */
describe('rate limits', () => {
  const clock = new FakeClock();
  const stack = withStack({
    pets: {},
    gateway: {
      clock,
      env: { ANON_RATE_LIMIT_PER_MINUTE: '4', BAN_THRESHOLD: '3', BAN_GRACE_MS: '0' },
      adjust: (config) => {
        config.rateLimit.windowMs = { minute: MINUTE_MS, day: 3_600_000 };
        config.rateLimit.banDurationMs = 1_500;
      },
    },
  });

  const url = (path: string) => `${stack.gateway.url}${path}`;
  const as = (key: string) => ({ headers: { authorization: `Bearer ${key}` } });

  // Keys are minted before the gateway starts: a key minted later works only after the next reload, and
  // requests made before that would count as anonymous.
  const keys: Record<string, string> = {};
  const limits = (perMinute: number, perDay: number) => ({ perMinute, perDay });

  beforeAll(async () => {
    keys.exact = await mintKey(stack.gateway, 'enterprise', 'exact', limits(5, 100));
    keys.free = await mintKey(stack.gateway, 'free', 'free');
    keys.a = await mintKey(stack.gateway, 'enterprise', 'a', limits(3, 100));
    keys.b = await mintKey(stack.gateway, 'enterprise', 'b', limits(3, 100));
    keys.reset = await mintKey(stack.gateway, 'enterprise', 'reset', limits(2, 100));
    keys.day = await mintKey(stack.gateway, 'enterprise', 'day', limits(2, 3));
    keys.ban = await mintKey(stack.gateway, 'enterprise', 'ban', limits(1, 100));
    keys.statuses = await mintKey(stack.gateway, 'enterprise', 'statuses', limits(50, 1000));
  });

  it('admits exactly the per-minute limit, then answers 429 with the Error body, Retry-After and Remaining 0', async () => {
    const key = keys.exact;
    const admitted: Reply[] = [];
    for (let i = 0; i < 5; i += 1) admitted.push(await call(url('/v1/pets?limit=1'), as(key)));
    expect(admitted.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
    expect(admitted.map(remaining)).toEqual([4, 3, 2, 1, 0]);
    for (const reply of admitted) expect(reply.headers.get('x-ratelimit-limit')).toBe('5');

    const refused = await call(url('/v1/pets?limit=1'), as(key));
    expectErrorBody(refused, 429, 'RATE_LIMITED');
    expect((refused.body as { message: string }).message).toContain('minute window');
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    // A delay in whole seconds, rounded up: at most the window.
    expect(retryAfter).toBeLessThanOrEqual(MINUTE_MS / 1000);
    expect(refused.headers.get('x-ratelimit-remaining')).toBe('0');
    expect(refused.headers.get('x-ratelimit-limit')).toBe('5');
    // Every field tells the same story: the minute window has nothing left until Retry-After.
    // RateLimit reports the policy nearest exhaustion: on a refusal, the violated one.
    expect(refused.headers.get('ratelimit')).toBe(`"minute";r=0;t=${retryAfter}`);
    const resetIn = Number(refused.headers.get('x-ratelimit-reset')) - Date.now() / 1000;
    expect(resetIn).toBeGreaterThan(retryAfter - 1.5);
    expect(resetIn).toBeLessThanOrEqual(retryAfter + 1);
  });

  it('sends X-RateLimit-Reset as a Unix timestamp in seconds within the window', async () => {
    const key = keys.free;
    const reply = await call(url('/v1/pets?limit=1'), as(key));
    const reset = Number(reply.headers.get('x-ratelimit-reset'));
    const nowSeconds = Date.now() / 1000;
    expect(reset).toBeGreaterThan(nowSeconds);
    expect(reset).toBeLessThanOrEqual(Math.ceil(nowSeconds + 3_600) + 1);
    expect(reply.headers.get('ratelimit-policy')).toBe(`"minute";q=60;w=${MINUTE_MS / 1000}, "day";q=1000;w=3600`);
    expect(reply.headers.get('ratelimit')).toMatch(/^"minute";r=59;t=\d+$/);
    // Only our headers: none of the throttler's per-throttler ones.
    const names = [...reply.headers.keys()];
    expect(names.filter((n) => /ratelimit/i.test(n)).sort()).toEqual([
      'ratelimit',
      'ratelimit-policy',
      'x-ratelimit-limit',
      'x-ratelimit-remaining',
      'x-ratelimit-reset',
    ]);
  });

  it('counts one consumer once across all operations, and never two keys together', async () => {
    const { a, b } = keys;
    expect((await call(url('/v1/pets?limit=1'), as(a))).status).toBe(200);
    expect((await postJson(url('/v1/pets'), { name: 'Counted', categoryId: 1 }, as(a).headers)).status).toBe(201);
    expect((await call(url('/v1/pets/1'), as(a))).status).toBe(200);
    expectErrorBody(await call(url('/v1/pets/1'), as(a)), 429, 'RATE_LIMITED');
    const other = await call(url('/v1/pets?limit=1'), as(b));
    expect(other.status).toBe(200);
    expect(remaining(other)).toBe(2);
  });

  it('opens the window again when it ends, with the whole quota: refused requests did not count', async () => {
    const key = keys.reset;
    await call(url('/v1/pets?limit=1'), as(key));
    await call(url('/v1/pets?limit=1'), as(key));
    const refused = await call(url('/v1/pets?limit=1'), as(key));
    expect(refused.status).toBe(429);
    await sleep(Number(refused.headers.get('retry-after')) * 1000 + 100);
    const first = await call(url('/v1/pets?limit=1'), as(key));
    expect(first.status).toBe(200);
    expect(remaining(first)).toBe(1);
  });

  it('enforces the day window too, and says so', async () => {
    const key = keys.day;
    await call(url('/v1/pets?limit=1'), as(key));
    await call(url('/v1/pets?limit=1'), as(key));
    const byMinute = await call(url('/v1/pets?limit=1'), as(key));
    expect((byMinute.body as { message: string }).message).toContain('minute window');
    await sleep(Number(byMinute.headers.get('retry-after')) * 1000 + 100);
    const last = await call(url('/v1/pets?limit=1'), as(key));
    expect(last.status).toBe(200);
    expect(last.headers.get('x-ratelimit-limit')).toBe('3');
    expect(remaining(last)).toBe(0);
    const byDay = await call(url('/v1/pets?limit=1'), as(key));
    expectErrorBody(byDay, 429, 'RATE_LIMITED');
    expect((byDay.body as { message: string }).message).toContain('day window');
    expect(byDay.headers.get('x-ratelimit-limit')).toBe('3');
    expect(Number(byDay.headers.get('retry-after'))).toBeGreaterThan(MINUTE_MS / 1000);
  });

  it('bans a key that keeps sending after its 429, answers KEY_BANNED with Retry-After, and lifts the ban', async () => {
    const key = keys.ban;
    expect((await call(url('/v1/pets?limit=1'), as(key))).status).toBe(200);
    const codes: string[] = [];
    for (let i = 0; i < 6; i += 1)
      codes.push(((await call(url('/v1/pets?limit=1'), as(key))).body as { code: string }).code);
    // BAN_GRACE_MS=0, BAN_THRESHOLD=3: the first 429 is no strike, strikes 1 to 3 are tolerated, strike 4 bans.
    expect(codes).toEqual(['RATE_LIMITED', 'RATE_LIMITED', 'RATE_LIMITED', 'RATE_LIMITED', 'KEY_BANNED', 'KEY_BANNED']);
    const banned = await call(url('/v1/pets?limit=1'), as(key));
    expectErrorBody(banned, 429, 'KEY_BANNED');
    // The ban (1.5 s) ends before the spent minute window (3 s): Retry-After is when a request can pass again, and
    // X-RateLimit-Reset that instant; RateLimit names the policy with r=0 and no t (the ban, not the policy, decides).
    const retryAfter = Number(banned.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(MINUTE_MS / 1000 + 1);
    expect(banned.headers.get('x-ratelimit-remaining')).toBe('0');
    expect(banned.headers.get('ratelimit')).toBe('"minute";r=0');
    const resetIn = Number(banned.headers.get('x-ratelimit-reset')) - Date.now() / 1000;
    expect(resetIn).toBeGreaterThan(retryAfter - 1.5);
    expect(resetIn).toBeLessThanOrEqual(retryAfter + 1);

    await sleep(retryAfter * 1000 + 100);
    const after = await call(url('/v1/pets?limit=1'), as(key));
    expect(after.status).toBe(200);
  });

  it('throttles requests without a valid key per client address, with headers on the 401s', async () => {
    const replies: Reply[] = [];
    for (let i = 0; i < 5; i += 1)
      replies.push(await call(url('/v1/pets'), { headers: { 'x-forwarded-for': `203.0.113.${i}` } }));
    expect(replies.slice(0, 4).map((r) => r.status)).toEqual([401, 401, 401, 401]);
    expect(replies.slice(0, 4).map(remaining)).toEqual([3, 2, 1, 0]);
    // X-Forwarded-For is ignored: the proxy is not configured as trusted, so all five came from one address.
    expectErrorBody(replies[4], 429, 'RATE_LIMITED');
    expect(replies[4].headers.get('retry-after')).not.toBeNull();
  });

  it('puts the headers on every status a /v1 operation can answer', async () => {
    const key = keys.statuses;
    const statuses = new Map<number, Reply>();
    const record = (reply: Reply) => statuses.set(reply.status, reply);
    record(await call(url('/v1/pets'), as(key)));
    record(await postJson(url('/v1/pets'), { name: 'Headers', categoryId: 1 }, as(key).headers));
    record(await postJson(url('/v1/pets'), { name: 'Headers' }, as(key).headers));
    record(await call(url('/v1/pets/9007199254740990'), as(key)));
    clock.set(GET_PET_DEPRECATION.sunset.getTime());
    record(await call(url('/v1/pets/1'), as(key)));
    clock.reset();
    expect([...statuses.keys()].sort()).toEqual([200, 201, 400, 404, 410]);
    for (const reply of statuses.values()) {
      for (const name of [
        'x-ratelimit-limit',
        'x-ratelimit-remaining',
        'x-ratelimit-reset',
        'ratelimit',
        'ratelimit-policy',
      ]) {
        expect([reply.status, name, reply.headers.get(name) !== null]).toEqual([reply.status, name, true]);
      }
    }
  });

  it('does not limit health and docs', async () => {
    for (let i = 0; i < 8; i += 1) {
      const reply = await call(url('/health/live'));
      expect(reply.status).toBe(200);
      expect(reply.headers.get('x-ratelimit-limit')).toBeNull();
    }
    expect((await call(url('/docs-json'))).headers.get('x-ratelimit-limit')).toBeNull();
  });

  // Runs last: every /v1 response this file received, whatever its status, matches the served OpenAPI document.
  it('answered every /v1 request as the OpenAPI document says', async () => {
    const contract = await OpenApiContract.fetch(stack.gateway.url);
    expect(checkReceived(contract, received)).toBeGreaterThan(20);
  });
});
