import { randomBytes } from 'node:crypto';
import { UsageService } from '../../../apps/gateway/src/usage/usage.service';
import { adminCall, GatewayUnderTest, mintKey } from '../../support/gateway';
import { call, expectErrorBody } from '../../support/http';
import { rawRequest } from '../../support/raw-http';
import { runIf } from '../../support/skip';
import { withStack } from '../../support/with-stack';

const ALLOWED_ORIGIN = 'https://app.example';
const OTHER_ORIGIN = 'https://elsewhere.example';
const CORS_ENV = { CORS_ORIGINS: ALLOWED_ORIGIN };

/** One request shape: how it is sent, what it is answered, and how far it moves its consumer's counters (0 or 1). */
interface Shape {
  name: string;
  status: number;
  counted: 0 | 1;
  send(url: string, key: string): Promise<{ status: number; headers: (name: string) => string | null | undefined }>;
}

const viaFetch = (path: string, init: (key: string) => RequestInit) => async (url: string, key: string) => {
  const reply = await call(`${url}${path}`, init(key));
  return { status: reply.status, headers: (name: string) => reply.headers.get(name) };
};
const viaSocket = (lines: (host: string, key: string) => string) => async (url: string, key: string) => {
  const reply = await rawRequest(url, lines(new URL(url).host, key));
  return { status: reply.status, headers: (name: string) => reply.headers[name] };
};
const bearer = (key: string) => ({ authorization: `Bearer ${key}` });
const json = (key: string, body: string, extra: Record<string, string> = {}) => ({
  method: 'POST',
  headers: { ...bearer(key), 'content-type': 'application/json', ...extra },
  body,
});
const NEW_PET = JSON.stringify({ name: 'Once', categoryId: 1, status: 'available' });

/**
 * Every request shape a client (a browser above all) can send under /v1. `counted` is the documented rule
 * (docs/rate-limits.md, "What is counted"): every answer to a request with a valid key counts one in the
 * consumer's windows and one row in its usage history, whatever the answer; a CORS preflight carries no
 * credentials and is answered before authentication: it counts nothing, for nobody.
 */
const SHAPES: Shape[] = [
  { name: 'plain GET', status: 200, counted: 1, send: viaFetch('/v1/pets?limit=1', (k) => ({ headers: bearer(k) })) },
  {
    name: 'GET with an allowed Origin',
    status: 200,
    counted: 1,
    send: viaFetch('/v1/pets?limit=1', (k) => ({ headers: { ...bearer(k), origin: ALLOWED_ORIGIN } })),
  },
  {
    name: 'GET with an Origin not allowed',
    status: 200,
    counted: 1,
    send: viaFetch('/v1/pets?limit=1', (k) => ({ headers: { ...bearer(k), origin: OTHER_ORIGIN } })),
  },
  {
    name: 'CORS preflight (allowed origin)',
    status: 204,
    counted: 0,
    send: viaFetch('/v1/pets', () => ({
      method: 'OPTIONS',
      headers: {
        origin: ALLOWED_ORIGIN,
        'access-control-request-method': 'GET',
        'access-control-request-headers': 'authorization',
      },
    })),
  },
  {
    name: 'CORS preflight (origin not allowed)',
    status: 204,
    counted: 0,
    send: viaFetch('/v1/pets', () => ({
      method: 'OPTIONS',
      headers: { origin: OTHER_ORIGIN, 'access-control-request-method': 'GET' },
    })),
  },
  {
    name: 'OPTIONS that is no preflight (405)',
    status: 405,
    counted: 1,
    send: viaFetch('/v1/pets', (k) => ({ method: 'OPTIONS', headers: bearer(k) })),
  },
  {
    name: 'trailing slash',
    status: 200,
    counted: 1,
    send: viaFetch('/v1/pets/?limit=1', (k) => ({ headers: bearer(k) })),
  },
  {
    name: 'trailing slash with Origin',
    status: 200,
    counted: 1,
    send: viaFetch('/v1/pets/?limit=1', (k) => ({ headers: { ...bearer(k), origin: ALLOWED_ORIGIN } })),
  },
  { name: 'other case', status: 200, counted: 1, send: viaFetch('/v1/PETS?limit=1', (k) => ({ headers: bearer(k) })) },
  {
    name: 'HEAD',
    status: 200,
    counted: 1,
    send: viaFetch('/v1/pets?limit=1', (k) => ({ method: 'HEAD', headers: bearer(k) })),
  },
  {
    name: 'HEAD with Origin',
    status: 200,
    counted: 1,
    send: viaFetch('/v1/pets?limit=1', (k) => ({ method: 'HEAD', headers: { ...bearer(k), origin: ALLOWED_ORIGIN } })),
  },
  {
    name: 'query variant',
    status: 200,
    counted: 1,
    send: viaFetch('/v1/pets?status=available&limit=2', (k) => ({ headers: bearer(k) })),
  },
  {
    name: "invalid query (the pets service's 400)",
    status: 400,
    counted: 1,
    send: viaFetch('/v1/pets?limit=abc', (k) => ({ headers: bearer(k) })),
  },
  {
    name: 'one animal (deprecated route)',
    status: 404,
    counted: 1,
    send: viaFetch('/v1/pets/999999999', (k) => ({ headers: bearer(k) })),
  },
  {
    name: 'one animal with Origin',
    status: 404,
    counted: 1,
    send: viaFetch('/v1/pets/999999999', (k) => ({ headers: { ...bearer(k), origin: ALLOWED_ORIGIN } })),
  },
  {
    name: 'percent-encoded id',
    status: 404,
    counted: 1,
    send: viaFetch('/v1/pets/%39%39', (k) => ({ headers: bearer(k) })),
  },
  {
    name: 'unknown path under /v1',
    status: 404,
    counted: 1,
    send: viaFetch('/v1/nothing-here', (k) => ({ headers: bearer(k) })),
  },
  {
    name: 'unknown path with Origin',
    status: 404,
    counted: 1,
    send: viaFetch('/v1/nothing-here', (k) => ({ headers: { ...bearer(k), origin: ALLOWED_ORIGIN } })),
  },
  {
    name: 'unsupported method',
    status: 405,
    counted: 1,
    send: viaFetch('/v1/pets', (k) => ({ method: 'DELETE', headers: bearer(k) })),
  },
  {
    name: 'unsupported method with Origin',
    status: 405,
    counted: 1,
    send: viaFetch('/v1/pets', (k) => ({ method: 'PUT', headers: { ...bearer(k), origin: ALLOWED_ORIGIN } })),
  },
  { name: 'POST with a body', status: 201, counted: 1, send: viaFetch('/v1/pets', (k) => json(k, NEW_PET)) },
  {
    name: 'POST with a body and Origin',
    status: 201,
    counted: 1,
    send: viaFetch('/v1/pets', (k) => json(k, NEW_PET, { origin: ALLOWED_ORIGIN })),
  },
  {
    name: 'POST without a body',
    status: 400,
    counted: 1,
    send: viaFetch('/v1/pets', (k) => ({ method: 'POST', headers: bearer(k) })),
  },
  { name: 'POST to a trailing slash', status: 201, counted: 1, send: viaFetch('/v1/pets/', (k) => json(k, NEW_PET)) },
  {
    name: 'keep-alive (HTTP/1.1)',
    status: 200,
    counted: 1,
    send: viaSocket(
      (host, k) => `GET /v1/pets?limit=1 HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${k}\r\n\r\n`,
    ),
  },
  {
    name: 'Connection: close',
    status: 200,
    counted: 1,
    send: viaSocket(
      (host, k) =>
        `GET /v1/pets?limit=1 HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${k}\r\nConnection: close\r\n\r\n`,
    ),
  },
  {
    name: 'HTTP/1.0',
    status: 200,
    counted: 1,
    send: viaSocket(
      (host, k) => `GET /v1/pets?limit=1 HTTP/1.0\r\nHost: ${host}\r\nAuthorization: Bearer ${k}\r\n\r\n`,
    ),
  },
  {
    name: 'HTTP/1.0 with Origin',
    status: 200,
    counted: 1,
    send: viaSocket(
      (host, k) =>
        `GET /v1/pets/?limit=1 HTTP/1.0\r\nHost: ${host}\r\nAuthorization: Bearer ${k}\r\nOrigin: ${ALLOWED_ORIGIN}\r\n\r\n`,
    ),
  },
  {
    name: 'absolute-form target',
    status: 200,
    counted: 1,
    send: viaSocket(
      (host, k) =>
        `GET http://${host}/v1/pets?limit=1 HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${k}\r\nConnection: close\r\n\r\n`,
    ),
  },
];

/** The consumer's minute-window count, as the admin API reads it from the rate-limit store (counting nothing). */
async function used(gateway: GatewayUnderTest, consumer: string): Promise<number> {
  const reply = await adminCall(gateway, 'GET', `/consumers/${consumer}/usage`);
  expect(reply.status).toBe(200);
  return (reply.body as { windows: Array<{ name: string; used: number }> }).windows.find((w) => w.name === 'minute')!
    .used;
}

/** The consumer's requests in today's usage history, once every given instance has written what it holds. */
async function recorded(gateways: GatewayUnderTest[], consumer: string): Promise<number> {
  for (const gateway of gateways) await gateway.app.get(UsageService).flush();
  const today = new Date().toISOString().slice(0, 10);
  const tomorrow = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);
  const reply = await adminCall(
    gateways[0],
    'GET',
    `/consumers/${consumer}/usage/history?granularity=day&from=${today}&to=${tomorrow}`,
  );
  expect(reply.status).toBe(200);
  return (reply.body as { buckets: Array<{ requests: number }> }).buckets.reduce(
    (sum, bucket) => sum + bucket.requests,
    0,
  );
}

describe('every /v1 request counted exactly once (one pipeline, whatever way it enters)', () => {
  const stack = withStack({ pets: {}, gateway: { env: CORS_ENV } });

  it.each(SHAPES.map((shape) => [shape.name, shape] as const))('%s', async (_name, shape) => {
    const consumer = `once-${randomBytes(4).toString('hex')}`;
    const key = await mintKey(stack.gateway, 'free', consumer);
    const before = { window: await used(stack.gateway, consumer), history: await recorded([stack.gateway], consumer) };
    const reply = await shape.send(stack.gateway.url, key);
    expect(reply.status).toBe(shape.status);
    const after = { window: await used(stack.gateway, consumer), history: await recorded([stack.gateway], consumer) };
    expect({ window: after.window - before.window, history: after.history - before.history }).toEqual({
      window: shape.counted,
      history: shape.counted,
    });
    if (shape.counted === 1) {
      // The headers tell the client the same: one unit of its 60 gone.
      expect(reply.headers('x-ratelimit-remaining')).toBe(String(60 - after.window));
    }
  });

  it('a preflight is answered with the CORS headers for an allowed origin, and none for another', async () => {
    const preflight = (origin: string) =>
      call(`${stack.gateway.url}/v1/pets`, {
        method: 'OPTIONS',
        headers: {
          origin,
          'access-control-request-method': 'POST',
          'access-control-request-headers': 'authorization,content-type',
        },
      });
    const allowed = await preflight(ALLOWED_ORIGIN);
    expect(allowed.status).toBe(204);
    expect(allowed.headers.get('access-control-allow-origin')).toBe(ALLOWED_ORIGIN);
    expect(allowed.headers.get('access-control-allow-methods')).toMatch(/POST/);
    expect(allowed.headers.get('access-control-max-age')).toBe('600');
    const other = await preflight(OTHER_ORIGIN);
    expect(other.status).toBe(204);
    expect(other.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('a preflight does not count against the address either (no key: the anonymous limit)', async () => {
    const anonymous = () => call(`${stack.gateway.url}/v1/pets`, { headers: { origin: ALLOWED_ORIGIN } });
    const before = Number((await anonymous()).headers.get('x-ratelimit-remaining'));
    for (let i = 0; i < 5; i += 1) {
      const reply = await call(`${stack.gateway.url}/v1/pets`, {
        method: 'OPTIONS',
        headers: { origin: ALLOWED_ORIGIN, 'access-control-request-method': 'GET' },
      });
      expect(reply.status).toBe(204);
      expect(reply.headers.get('x-ratelimit-remaining')).toBeNull();
    }
    expect(Number((await anonymous()).headers.get('x-ratelimit-remaining'))).toBe(before - 1);
  });

  it('a browser-shaped answer exposes the rate-limit headers to the allowed origin, also on refusals', async () => {
    const key = await mintKey(stack.gateway, 'free');
    const ok = await call(`${stack.gateway.url}/v1/pets?limit=1`, {
      headers: { ...bearer(key), origin: ALLOWED_ORIGIN },
    });
    expect(ok.headers.get('access-control-allow-origin')).toBe(ALLOWED_ORIGIN);
    expect(ok.headers.get('access-control-expose-headers')).toMatch(/X-RateLimit-Remaining/);
    const refused = await call(`${stack.gateway.url}/v1/pets?limit=1`, {
      headers: { authorization: 'Bearer nope', origin: ALLOWED_ORIGIN },
    });
    expectErrorBody(refused, 401, 'UNAUTHORIZED');
    expect(refused.headers.get('access-control-allow-origin')).toBe(ALLOWED_ORIGIN);
  });

  it('a Free key sending Origin gets exactly 60 of 80, one after another', async () => {
    const key = await mintKey(stack.gateway, 'free');
    const statuses: number[] = [];
    for (let i = 0; i < 80; i += 1) {
      statuses.push(
        (await call(`${stack.gateway.url}/v1/pets?limit=1`, { headers: { ...bearer(key), origin: ALLOWED_ORIGIN } }))
          .status,
      );
    }
    expect(statuses.filter((s) => s === 200)).toHaveLength(60);
    expect(statuses.filter((s) => s === 429)).toHaveLength(20);
  });
});

/**
 * Through two instances the windows are shared only when the counters are (REDIS_URL): the in-process counters
 * are each instance's own by design (docs/rate-limits.md), so the run without Redis has nothing to test here.
 */
const ifRedis = runIf(process.env.REDIS_URL, 'REDIS_URL (a Redis server)');
ifRedis.describe('counted once through two instances sharing Redis', () => {
  const stack = withStack({
    pets: {},
    database: true,
    sharedKeyPrefix: 'counted-once',
    gateways: { a: { env: CORS_ENV }, b: { env: CORS_ENV } },
  });

  it('a burst of 200 concurrent requests carrying Origin, straight at two instances, admits exactly 60', async () => {
    const consumer = `burst-${randomBytes(4).toString('hex')}`;
    const key = await mintKey(stack.a, 'free', consumer);
    const gateways = [stack.a, stack.b];
    const replies = await Promise.all(
      Array.from({ length: 200 }, (_, i) =>
        call(`${gateways[i % 2].url}/v1/pets?limit=1`, { headers: { ...bearer(key), origin: ALLOWED_ORIGIN } }),
      ),
    );
    expect(replies.filter((r) => r.status === 200)).toHaveLength(60);
    // Refusals are 429 RATE_LIMITED, or KEY_BANNED once the ban threshold's refusals have passed.
    for (const reply of replies.filter((r) => r.status !== 200)) expectErrorBody(reply, 429);
    expect(await used(stack.a, consumer)).toBe(60);
    expect(await recorded(gateways, consumer)).toBe(200);
  });

  it.each(SHAPES.filter((shape) => shape.counted === 1).map((shape) => [shape.name, shape] as const))(
    '%s, alternating instances',
    async (_name, shape) => {
      const consumer = `pair-${randomBytes(4).toString('hex')}`;
      const key = await mintKey(stack.a, 'free', consumer);
      const first = await shape.send(stack.a.url, key);
      const second = await shape.send(stack.b.url, key);
      expect([first.status, second.status]).toEqual([shape.status, shape.status]);
      expect(await used(stack.b, consumer)).toBe(2);
      expect(await recorded([stack.a, stack.b], consumer)).toBe(2);
      expect(second.headers('x-ratelimit-remaining')).toBe('58');
    },
  );
});
