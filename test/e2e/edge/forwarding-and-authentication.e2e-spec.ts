import { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { GET_PET_DEPRECATION } from '@app/contract';
import { hashApiKey } from '../../../apps/gateway/src/consumers/api-key';
import { adminCall, FakeClock, mintKey, startGateway } from '../../support/gateway';
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

function expectRateHeaders(reply: Reply): void {
  for (const name of RATE_HEADERS) expect(reply.headers.get(name)).not.toBeNull();
}

/** The gateway in front of the real pets service. */
describe('gateway', () => {
  const clock = new FakeClock();
  const stack = withStack({ pets: {}, database: true, gateway: { clock } });

  let key: string;
  const auth = () => ({ authorization: `Bearer ${key}` });
  const url = (path: string) => `${stack.gateway.url}${path}`;

  beforeAll(async () => {
    key = await mintKey(stack.gateway, 'business', 'main-consumer');
  });

  describe('forwarding', () => {
    it('creates, lists and fetches pets through /v1 with the upstream status and body unchanged', async () => {
      const created = await postJson(url('/v1/pets'), { name: 'Gateway Rex', categoryId: 4, status: 'sold' }, auth());
      expect(created.status).toBe(201);
      const pet = created.body as { id: number };
      expect(created.body).toEqual({ id: pet.id, name: 'Gateway Rex', categoryId: 4, status: 'sold' });
      // The service's Location (/pets/{id}) under the public path: where a client reads the animal back.
      expect(created.headers.get('location')).toBe(`/v1/pets/${pet.id}`);

      const direct = await call(`${stack.pets.url}/pets?status=sold&limit=5`);
      const listed = await call(url('/v1/pets?status=sold&limit=5'), { headers: auth() });
      expect(listed.status).toBe(200);
      expect(listed.text).toBe(direct.text);
      expect(listed.headers.get('content-type')).toBe(direct.headers.get('content-type'));

      const fetched = await call(url(`/v1/pets/${pet.id}`), { headers: auth() });
      expect(fetched.body).toEqual(created.body);
    });

    it("passes the pets service's errors through unchanged", async () => {
      const invalid = await postJson(url('/v1/pets'), { name: 'Rex' }, auth());
      expectErrorBody(invalid, 400, 'VALIDATION_FAILED');
      expect((invalid.body as { message: string }).message).toBe('categoryId is required');
      expectErrorBody(await call(url('/v1/pets?limit=101'), { headers: auth() }), 400, 'VALIDATION_FAILED');
      expectErrorBody(await call(url('/v1/pets/9007199254740990'), { headers: auth() }), 404, 'NOT_FOUND');
      expectErrorBody(await postJson(url('/v1/pets'), '{"name":', auth()), 400, 'MALFORMED_JSON');
      const text = await call(url('/v1/pets'), {
        method: 'POST',
        headers: { ...auth(), 'content-type': 'text/plain' },
        body: 'Rex',
      });
      expectErrorBody(text, 415, 'UNSUPPORTED_MEDIA_TYPE');
    });

    it('refuses bodies over 16 KiB at the edge with 413', async () => {
      const reply = await postJson(url('/v1/pets'), { name: 'x', categoryId: 1, pad: 'y'.repeat(20_000) }, auth());
      expectErrorBody(reply, 413, 'PAYLOAD_TOO_LARGE');
    });

    it('sends the request id upstream and back, generating one when the client sends none', async () => {
      const mine = await call(url('/v1/pets?limit=1'), { headers: { ...auth(), 'x-request-id': 'trace-abc-123' } });
      expect(mine.headers.get('x-request-id')).toBe('trace-abc-123');
      const generated = await call(url('/v1/pets?limit=1'), { headers: auth() });
      expect(generated.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
      const unsafe = await call(url('/v1/pets?limit=1'), { headers: { ...auth(), 'x-request-id': 'a b<script>' } });
      expect(unsafe.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    });

    it('answers 404 with the Error body outside /v1, except health and docs', async () => {
      expectErrorBody(await call(url('/pets')), 404, 'NOT_FOUND');
      expectErrorBody(await call(url('/v2/pets')), 404, 'NOT_FOUND');
      expectErrorBody(await call(url('/v1/unknown'), { headers: auth() }), 404, 'NOT_FOUND');
      expect((await call(url('/health/live'))).status).toBe(200);
      expect((await call(url('/health/ready'))).status).toBe(200);
      expect((await call(url('/docs-json'))).status).toBe(200);
      expect((await call(url('/docs'))).status).toBe(200);
    });

    it('answers a wrong method with 405 and Allow', async () => {
      const reply = await call(url('/v1/pets'), { method: 'DELETE', headers: auth() });
      expectErrorBody(reply, 405, 'METHOD_NOT_ALLOWED');
      expect(reply.headers.get('allow')).toBe('GET, HEAD, POST');
    });

    it('drops hop-by-hop and client identity headers on the way up, and sets the consumer identity itself', async () => {
      let seen: Record<string, string | string[] | undefined> = {};
      const echo = await listen((req, res) => {
        seen = req.headers;
        res
          .writeHead(200, { 'content-type': 'application/json', connection: 'close', 'x-internal': 'secret' })
          .end('[]');
      });
      const edge = await startGateway({ petsUrl: echo.origin, database: stack.database });
      try {
        const reply = await call(`${edge.url}/v1/pets`, {
          headers: {
            ...auth(),
            'x-consumer-name': 'forged',
            'x-consumer-plan': 'enterprise',
            'x-request-id': 'to-the-upstream-1',
          },
        });
        expect(seen['x-request-id']).toBe('to-the-upstream-1');
        expect(reply.status).toBe(200);
        expect(reply.headers.get('x-internal')).toBeNull();
        expect(seen.authorization).toBeUndefined();
        expect(seen['x-consumer-name']).toBe('main-consumer');
        expect(seen['x-consumer-plan']).toBe('business');
      } finally {
        await edge.close();
        await echo.close();
      }
    });
  });

  describe('upstream failures', () => {
    it('answers 503 with the Error body when the pets service refuses connections', async () => {
      const closed = await listen(() => undefined);
      await closed.close();
      const edge = await startGateway({ petsUrl: closed.origin, database: stack.database });
      try {
        const reply = await call(`${edge.url}/v1/pets`, { headers: auth() });
        expectErrorBody(reply, 503, 'SERVICE_UNAVAILABLE');
        expectRateHeaders(reply);
        expect(reply.text).not.toMatch(/ECONNREFUSED|at .*\.js/);
      } finally {
        await edge.close();
      }
    });

    it('answers 504 within the configured timeout when the pets service hangs', async () => {
      const hanging = await listen(() => undefined);
      const edge = await startGateway({
        petsUrl: hanging.origin,
        database: stack.database,
        env: { UPSTREAM_TIMEOUT_MS: '300' },
      });
      try {
        const started = Date.now();
        const reply = await call(`${edge.url}/v1/pets`, { headers: auth() });
        expectErrorBody(reply, 504, 'GATEWAY_TIMEOUT');
        expect(Date.now() - started).toBeLessThan(5_000);
      } finally {
        await edge.close();
        await hanging.close();
      }
    });

    it('answers 502 when the pets service drops the connection', async () => {
      const dropping = await listen((req) => req.socket.destroy());
      const edge = await startGateway({ petsUrl: dropping.origin, database: stack.database });
      try {
        expectErrorBody(await call(`${edge.url}/v1/pets`, { headers: auth() }), 502, 'BAD_GATEWAY');
      } finally {
        await edge.close();
        await dropping.close();
      }
    });
  });

  describe('authentication', () => {
    it.each([
      ['no Authorization header', {}, 'Bearer realm="petstore"'],
      ['an empty bearer', { authorization: 'Bearer ' }, 'Bearer realm="petstore", error="invalid_request"'],
      [
        'another scheme',
        { authorization: `Basic ${Buffer.from('a:b').toString('base64')}` },
        'Bearer realm="petstore", error="invalid_request"',
      ],
      ['a malformed key', { authorization: 'Bearer not-a-key' }, 'Bearer realm="petstore", error="invalid_token"'],
      [
        'an unknown key',
        { authorization: 'Bearer petk_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' },
        'Bearer realm="petstore", error="invalid_token"',
      ],
    ])('answers 401 with WWW-Authenticate for %s', async (_case, headers, challenge) => {
      for (const [method, path] of [
        ['GET', '/v1/pets'],
        ['POST', '/v1/pets'],
        ['GET', '/v1/pets/1'],
      ]) {
        const reply = await call(url(path), {
          method,
          headers: { ...headers, 'content-type': 'application/json' },
          body: method === 'POST' ? '{}' : undefined,
        });
        expectErrorBody(reply, 401, 'UNAUTHORIZED');
        expect(reply.headers.get('www-authenticate')).toBe(challenge);
      }
    });

    it('never stores the key, only its hash', async () => {
      const exported = await adminCall(stack.gateway, 'GET', '/export');
      expect(exported.text).not.toContain(key);
      expect(exported.text).toContain('main-consumer');
      expect(exported.text).toContain(hashApiKey(key));
    });

    it('takes a new key and refuses a revoked one at once, without a restart', async () => {
      const fresh = await mintKey(stack.gateway, 'free', 'late-comer');
      expect((await call(url('/v1/pets?limit=1'), { headers: { authorization: `Bearer ${fresh}` } })).status).toBe(200);
      expect((await adminCall(stack.gateway, 'POST', '/consumers/late-comer/revoke')).status).toBe(200);
      expectErrorBody(
        await call(url('/v1/pets?limit=1'), { headers: { authorization: `Bearer ${fresh}` } }),
        401,
        'UNAUTHORIZED',
      );
    });
  });

  describe('deprecation of GET /pets/{petId}', () => {
    it('announces Deprecation, Sunset and the successor on every response of getPet, and only there', async () => {
      const reply = await call(url('/v1/pets/1'), { headers: auth() });
      expect(reply.headers.get('deprecation')).toBe(`@${GET_PET_DEPRECATION.deprecatedSince.getTime() / 1000}`);
      expect(reply.headers.get('sunset')).toBe('Thu, 05 Dec 2030 00:00:00 GMT');
      expect(reply.headers.get('link')).toBe('</v1/pets>; rel="successor-version"');
      const list = await call(url('/v1/pets'), { headers: auth() });
      expect(list.headers.get('deprecation')).toBeNull();
    });

    it('answers 410 GONE from the sunset on, and works until then', async () => {
      clock.set(GET_PET_DEPRECATION.sunset.getTime() - 1_000);
      expect((await call(url('/v1/pets/1'), { headers: auth() })).status).not.toBe(410);
      clock.set(GET_PET_DEPRECATION.sunset.getTime());
      const gone = await call(url('/v1/pets/1'), { headers: auth() });
      expectErrorBody(gone, 410, 'GONE');
      expect((gone.body as { message: string }).message).toContain('GET /pets with a status filter');
      expect(gone.headers.get('sunset')).toBe('Thu, 05 Dec 2030 00:00:00 GMT');
      expectRateHeaders(gone);
      // Authentication still comes first.
      expectErrorBody(await call(url('/v1/pets/1')), 401, 'UNAUTHORIZED');
      clock.reset();
    });
  });

  // Runs last: every /v1 response this file received, whatever its status, matches the served OpenAPI document.
  it('answered every /v1 request as the OpenAPI document says', async () => {
    const contract = await OpenApiContract.fetch(stack.gateway.url);
    expect(checkReceived(contract, received)).toBeGreaterThan(20);
  });
});

interface Listening {
  origin: string;
  close(): Promise<void>;
}

async function listen(handler: Parameters<typeof createServer>[1]): Promise<Listening> {
  const server: Server = createServer(handler!);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
