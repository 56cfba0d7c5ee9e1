import { API_CACHE_CONTROL } from '../../../apps/gateway/src/routing/api-cache-control';
import { call, expectErrorBody } from '../../support/http';
import { PipelineUnderTest, startPipeline } from '../../support/pipeline-under-test';

const MINUTE_MS = 60_000;

/**
 * The /v1 pipeline as a component (test/support/pipeline-under-test.ts): its real route table, authenticator and
 * PlanThrottlerGuard over the in-process counters, on the injected clock, with fakes for the key cache, the
 * upstream and the usage history. Every form of request takes the one sequence (route, authenticate, decide once,
 * answer, record), whatever it ends in.
 */
describe('the /v1 pipeline', () => {
  let pipeline: PipelineUnderTest;
  let key: string;

  beforeAll(async () => {
    pipeline = await startPipeline({ CORS_ORIGINS: 'https://example.com' });
  });
  afterAll(() => pipeline.close());

  beforeEach(() => {
    // A fresh consumer per test: its own counters.
    key = pipeline.keyFor(`consumer-${expect.getState().currentTestName?.length}-${Date.now()}`, {
      perMinute: 3,
      perDay: 100,
    });
  });

  const get = (path: string, headers: Record<string, string> = {}) =>
    call(`${pipeline.url}${path}`, { headers: { authorization: `Bearer ${key}`, ...headers } });

  /** What the pipeline recorded for requests sent from here on. */
  const watch = () => {
    const start = {
      forwarded: pipeline.forwarded.length,
      tracked: pipeline.tracked.length,
      decisions: pipeline.decisions(),
    };
    return {
      forwarded: () => pipeline.forwarded.slice(start.forwarded),
      tracked: () => pipeline.tracked.slice(start.tracked),
      decisions: () => pipeline.decisions() - start.decisions,
    };
  };

  it('forwards a request with a valid key once, with its rate-limit headers, and records it once', async () => {
    const seen = watch();
    const reply = await get('/v1/pets?limit=2');
    expect(reply.status).toBe(200);
    expect(reply.headers.get('ratelimit-policy')).toContain('"minute";q=3;w=60');
    expect(reply.headers.get('ratelimit')).toMatch(/^"minute";r=2;t=\d+/);
    expect(reply.headers.get('x-ratelimit-limit')).toBe('3');
    expect(reply.headers.get('x-ratelimit-remaining')).toBe('2');
    expect(reply.headers.get('cache-control')).toBe(API_CACHE_CONTROL);
    expect(seen.forwarded()).toEqual([{ method: 'GET', path: '/pets?limit=2', consumer: expect.any(String) }]);
    expect(seen.decisions()).toBe(1);
    await new Promise((resolve) => setImmediate(resolve));
    expect(seen.tracked()).toEqual([{ consumer: seen.forwarded()[0].consumer, status: 200 }]);
  });

  it('refuses a missing or unknown key with 401 and the Error body, forwards nothing, counts it by address', async () => {
    const seen = watch();
    const missing = await call(`${pipeline.url}/v1/pets`);
    expect(missing.status).toBe(401);
    expect(missing.headers.get('www-authenticate')).toMatch(/^Bearer realm="petstore"/);
    expectErrorBody(missing, 401);
    const unknown = await get('/v1/pets', { authorization: 'Bearer petk_0000000000000000000000000000000000000000' });
    expect(unknown.status).toBe(401);
    expect(seen.forwarded()).toEqual([]);
    // Counted against the anonymous window of the address: guessing keys is throttled.
    expect(seen.decisions()).toBe(2);
    expect(unknown.headers.get('ratelimit-policy')).toMatch(/"minute"/);
  });

  it("answers 503 for a key that cannot be checked, counting nothing against the address: an outage does not ban a NAT's clients", async () => {
    const uncheckable = pipeline.uncheckableKey();
    const seen = watch();
    // Twice the anonymous minute window (ANON_RATE_LIMIT_PER_MINUTE, 30 by default) from one address.
    for (let i = 0; i < 60; i += 1) {
      const reply = await get('/v1/pets', { authorization: `Bearer ${uncheckable}` });
      expectErrorBody(reply, 503, 'SERVICE_UNAVAILABLE');
      expect(reply.headers.get('retry-after')).toBe('5');
      expect(reply.headers.get('ratelimit-policy')).toBeNull();
    }
    expect(seen.decisions()).toBe(0);
    expect(seen.forwarded()).toEqual([]);
    // The address's window is untouched: an unknown key is still a 401 (counted), not a 429 or a ban.
    const unknown = await get('/v1/pets', { authorization: 'Bearer petk_0000000000000000000000000000000000000001' });
    expect(unknown.status).toBe(401);
    expect(seen.decisions()).toBe(1);
    expect(unknown.headers.get('x-ratelimit-remaining')).not.toBeNull();
    expect((await get('/v1/pets')).status).toBe(200);
  });

  it('answers 429 with Retry-After once the minute window is spent, and admits again when it resets', async () => {
    for (let i = 0; i < 3; i += 1) expect((await get('/v1/pets')).status).toBe(200);
    const seen = watch();
    const refused = await get('/v1/pets');
    expect(refused.status).toBe(429);
    expectErrorBody(refused, 429, 'RATE_LIMITED');
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(refused.headers.get('x-ratelimit-remaining')).toBe('0');
    expect(seen.forwarded()).toEqual([]);

    pipeline.clock.advance(retryAfter * 1000);
    const after = await get('/v1/pets');
    expect(after.status).toBe(200);
    expect(after.headers.get('x-ratelimit-remaining')).toBe('2');
  });

  it('a window that has not reset yet still refuses, a millisecond before its reset', async () => {
    for (let i = 0; i < 3; i += 1) expect((await get('/v1/pets')).status).toBe(200);
    const refused = await get('/v1/pets');
    expect(refused.status).toBe(429);
    const retryAfterMs = Number(refused.headers.get('retry-after')) * 1000;
    // Retry-After is rounded up to whole seconds: a second less is still inside the window.
    pipeline.clock.advance(Math.max(0, retryAfterMs - 1000 - 50));
    expect((await get('/v1/pets')).status).toBe(429);
    pipeline.clock.advance(MINUTE_MS);
    expect((await get('/v1/pets')).status).toBe(200);
  });

  it('spends prepaid credits one per request and answers 402 at zero, forwarding nothing, with windows to spare', async () => {
    const name = `credits-${Date.now()}`;
    const paying = pipeline.keyFor(name, { perMinute: 10, perDay: 100 }, 2);
    const send = () => call(`${pipeline.url}/v1/pets`, { headers: { authorization: `Bearer ${paying}` } });
    expect((await send()).status).toBe(200);
    expect((await send()).status).toBe(200);
    const seen = watch();
    const refused = await send();
    expectErrorBody(refused, 402, 'CREDITS_EXHAUSTED');
    expect(seen.forwarded()).toEqual([]);
    // The balance refused it: the headers name the credits policy, at zero.
    expect(refused.headers.get('ratelimit')).toBe('"credits";r=0');
  });

  it('answers a path no route takes with 404 and a wrong method with 405 and Allow, counted once, never forwarded', async () => {
    const seen = watch();
    const notFound = await get('/v1/cats');
    expect(notFound.status).toBe(404);
    expectErrorBody(notFound, 404);
    const wrongMethod = await call(`${pipeline.url}/v1/pets`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${key}` },
    });
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.headers.get('allow')).toContain('GET');
    expect(seen.forwarded()).toEqual([]);
    expect(seen.decisions()).toBe(2);
  });

  it('answers a CORS preflight before authentication, and counts nothing for it', async () => {
    const seen = watch();
    const preflight = await call(`${pipeline.url}/v1/pets`, {
      method: 'OPTIONS',
      headers: { origin: 'https://example.com', 'access-control-request-method': 'GET' },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe('https://example.com');
    expect(seen.decisions()).toBe(0);
    expect(seen.forwarded()).toEqual([]);
  });

  it('takes every spelling of /v1 (case, trailing slash, HEAD) through the same counted sequence', async () => {
    const seen = watch();
    // Express's router rules, which the route table keeps: case-insensitive, a trailing slash allowed.
    expect((await get('/V1/PETS')).status).toBe(200);
    expect((await get('/v1/pets/')).status).toBe(200);
    expect(
      (await call(`${pipeline.url}/v1/pets`, { method: 'HEAD', headers: { authorization: `Bearer ${key}` } })).status,
    ).toBe(200);
    expect(seen.decisions()).toBe(3);
    expect(seen.forwarded().map((entry) => entry.method)).toEqual(['GET', 'GET', 'HEAD']);
  });
});
