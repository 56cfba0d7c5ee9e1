import { mintKey } from '../../support/gateway';
import { call, expectErrorBody, postJson, received, Reply } from '../../support/http';
import { checkReceived, OpenApiContract } from '../../support/openapi-contract';
import { withStack } from '../../support/with-stack';

const RATE_HEADERS = [
  'x-ratelimit-limit',
  'x-ratelimit-remaining',
  'x-ratelimit-reset',
  'ratelimit',
  'ratelimit-policy',
];

const remainingOf = (reply: Reply) => Number(reply.headers.get('x-ratelimit-remaining'));

/**
 * Admission (authenticate, then count) runs for every request under /v1 before the router: answers no route
 * takes (404, 405), answers of the body checks (413, 415), upstream failures (5xx) and the router's own 400
 * for a path it cannot decode all carry the rate-limit headers and are counted exactly once.
 */
describe('edge admission: every /v1 answer is authenticated first, counted once and carries the headers', () => {
  const stack = withStack({ pets: {}, gateway: {} });

  let key: string;
  const auth = () => ({ authorization: `Bearer ${key}` });
  const url = (path: string) => `${stack.gateway.url}${path}`;

  beforeAll(async () => {
    // The minute window runs out first, so X-RateLimit-* report it and Remaining drops by one per request.
    key = await mintKey(stack.gateway, 'business', 'edge-admission', { perMinute: 1_000, perDay: 100_000 });
  });

  /** Asserts the consumer's headers and that this answer took exactly one unit of the minute quota. */
  function expectCountedOnce(reply: Reply, before: number): number {
    for (const name of RATE_HEADERS) expect([name, reply.headers.get(name)]).toEqual([name, expect.any(String)]);
    expect(reply.headers.get('x-ratelimit-limit')).toBe('1000');
    expect(reply.headers.get('ratelimit-policy')).toBe('"minute";q=1000;w=60, "day";q=100000;w=86400');
    expect(remainingOf(reply)).toBe(before - 1);
    return remainingOf(reply);
  }

  describe('with a valid key', () => {
    let remaining: number;

    beforeAll(async () => {
      const first = await call(url('/v1/pets'), { headers: auth() });
      expect(first.status).toBe(200);
      remaining = remainingOf(first);
    });

    it('counts an unknown path (404) and gives it the headers', async () => {
      const reply = await call(url('/v1/unknown'), { headers: auth() });
      expectErrorBody(reply, 404, 'NOT_FOUND');
      remaining = expectCountedOnce(reply, remaining);
    });

    it('counts a wrong method (405, with Allow) and gives it the headers', async () => {
      const reply = await call(url('/v1/pets'), { method: 'DELETE', headers: auth() });
      expectErrorBody(reply, 405, 'METHOD_NOT_ALLOWED');
      expect(reply.headers.get('allow')).toBe('GET, HEAD, POST');
      remaining = expectCountedOnce(reply, remaining);
    });

    it('counts a path the router cannot decode (400) and gives it the headers', async () => {
      const reply = await call(url('/v1/pets/%FF'), { headers: auth() });
      expect(reply.status).toBe(400);
      expectErrorBody(reply, 400);
      remaining = expectCountedOnce(reply, remaining);
    });

    it('counts a body over the limit (413) and an unsupported media type (415)', async () => {
      const large = await postJson(url('/v1/pets'), { name: 'x', categoryId: 1, pad: 'y'.repeat(20_000) }, auth());
      expectErrorBody(large, 413, 'PAYLOAD_TOO_LARGE');
      remaining = expectCountedOnce(large, remaining);
      const text = await call(url('/v1/pets'), {
        method: 'POST',
        headers: { ...auth(), 'content-type': 'text/plain' },
        body: 'Rex',
      });
      expectErrorBody(text, 415, 'UNSUPPORTED_MEDIA_TYPE');
      remaining = expectCountedOnce(text, remaining);
    });

    it('counts an answered request exactly once (one decision per request)', async () => {
      const reply = await call(url('/v1/pets?limit=1'), { headers: auth() });
      expect(reply.status).toBe(200);
      remaining = expectCountedOnce(reply, remaining);
    });

    it('every /v1 reply so far matches the OpenAPI document', async () => {
      const contract = await OpenApiContract.fetch(stack.gateway.url);
      expect(checkReceived(contract, received)).toBeGreaterThanOrEqual(7);
    });

    it('counts a 5xx when the pets service is down and gives it the headers', async () => {
      // Stopped here for good: the stack closes a part once, so its afterAll leaves this one be.
      await stack.pets.close();
      const reply = await call(url('/v1/pets'), { headers: auth() });
      expect(reply.status).toBeGreaterThanOrEqual(500);
      expectErrorBody(reply, reply.status);
      remaining = expectCountedOnce(reply, remaining);
      const contract = await OpenApiContract.fetch(stack.gateway.url);
      contract.check('GET', '/v1/pets', reply);
    });
  });

  describe('without a valid key: authentication comes first', () => {
    const anonymousLimit = () => String(stack.gateway.config.rateLimit.anonymousPerMinute);

    it.each([
      ['GET', '/v1/pets/%FF'],
      ['GET', '/v1/unknown'],
      ['DELETE', '/v1/pets'],
    ])("%s %s is 401 with the anonymous limit's headers, counted", async (method, path) => {
      const before = await call(url('/v1/pets'));
      expectErrorBody(before, 401, 'UNAUTHORIZED');
      const reply = await call(url(path), { method });
      expectErrorBody(reply, 401, 'UNAUTHORIZED');
      expect(reply.headers.get('www-authenticate')).toMatch(/^Bearer realm="petstore"/);
      expect(reply.headers.get('x-ratelimit-limit')).toBe(anonymousLimit());
      expect(reply.headers.get('ratelimit-policy')).toBe(`"minute";q=${anonymousLimit()};w=60`);
      expect(remainingOf(reply)).toBe(remainingOf(before) - 1);
    });

    it('leaves /health/* and /docs alone: neither authenticated nor counted', async () => {
      const before = await call(url('/v1/pets'));
      for (const path of ['/health/live', '/health/ready', '/docs', '/docs-json']) {
        const reply = await call(url(path));
        expect([path, reply.status]).not.toEqual([path, 401]);
        for (const name of RATE_HEADERS) expect([path, name, reply.headers.get(name)]).toEqual([path, name, null]);
      }
      const after = await call(url('/v1/pets'));
      expect(remainingOf(after)).toBe(remainingOf(before) - 1);
    });
  });
});
