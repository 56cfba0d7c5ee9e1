import { request as httpRequest } from 'node:http';
import { PAGE_CURSOR } from '@app/contract';
import { DataSource } from 'typeorm';
import { mintKey } from '../../support/gateway';
import { call, expectErrorBody, received, Reply } from '../../support/http';
import { checkReceived, OpenApiContract } from '../../support/openapi-contract';
import { rawRequest } from '../../support/raw-http';
import { withStack } from '../../support/with-stack';

const SEEDED = 40;

/** The target of `Link: <...>; rel="next"`, or undefined when the page has none. */
function nextLink(link: string | null): string | undefined {
  if (link === null) return undefined;
  const match = /^<([^>]+)>; rel="next"$/.exec(link);
  expect(match).not.toBeNull();
  return match![1];
}

/** A GET with headers fetch() will not send as given (Host), straight to the gateway's socket. */
function rawGet(
  origin: string,
  path: string,
  headers: Record<string, string>,
): Promise<{ status: number; link: string | null }> {
  const { hostname, port } = new URL(origin);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: hostname, port, path, headers }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode!, link: (res.headers.link as string | undefined) ?? null }));
    });
    req.on('error', reject);
    req.end();
  });
}

/**
 * Paging through the gateway: the link the client gets is public (/v1, under the configured PUBLIC_ORIGIN or
 * relative without one, never the request's Host or X-Forwarded-Host), and following it works.
 */
describe('gateway: paging GET /v1/pets', () => {
  const ORIGIN = 'https://api.petstore.example.com';
  // evil.example is an allowed host here: the Host that reaches the app must still never make a link.
  const hosts = { ALLOWED_HOSTS: 'evil.example' };
  const stack = withStack({
    pets: {},
    database: true,
    gateways: {
      direct: { env: hosts },
      behindBalancer: { env: { ...hosts, TRUST_PROXY: 'loopback' } },
      withOrigin: { env: { ...hosts, TRUST_PROXY: 'loopback', PUBLIC_ORIGIN: ORIGIN } },
    },
  });

  let key: string;
  const auth = () => ({ authorization: `Bearer ${key}` });

  beforeAll(async () => {
    await stack.pets.app.get(DataSource).query(
      `INSERT INTO pets (name, category_id, status)
       SELECT 'Pet ' || i, 1, (ARRAY['available','pending','sold'])[1 + i % 3]::pet_status FROM generate_series(1, ${SEEDED}) AS i`,
    );
    key = await mintKey(stack.direct, 'business', 'paging');
  });

  it('links the next page relatively under /v1 by default, and reads every animal by following it', async () => {
    const ids: number[] = [];
    let next: string | undefined = `${stack.direct.url}/v1/pets?limit=7&status=sold`;
    let pages = 0;
    let last: Reply | undefined;
    while (next) {
      last = await call(next, { headers: auth() });
      expect(last.status).toBe(200);
      ids.push(...(last.body as Array<{ id: number; status: string }>).map((pet) => pet.id));
      const link = nextLink(last.headers.get('link'));
      if (link !== undefined) expect(link).toMatch(/^\/v1\/pets\?limit=7&status=sold&after=[A-Za-z0-9_-]+$/);
      // RFC 8288: a relative target is resolved against the URL of the request (RFC 3986, section 5).
      next = link === undefined ? undefined : new URL(link, next).toString();
      pages += 1;
    }
    const sold = (await call(`${stack.pets.url}/pets?status=sold&limit=100`)).body as Array<{ id: number }>;
    expect(ids).toEqual(sold.map((pet) => pet.id));
    expect(pages).toBe(Math.ceil(sold.length / 7));
    expect(last!.headers.get('link')).toBeNull();
  });

  it('never builds the link from Host or X-Forwarded-Host, even from a trusted balancer', async () => {
    const forged = { host: 'evil.example', 'x-forwarded-host': 'evil.example', 'x-forwarded-proto': 'https' };
    for (const gateway of [stack.direct, stack.behindBalancer]) {
      const reply = await rawGet(gateway.url, '/v1/pets?limit=5', { ...auth(), ...forged });
      expect(reply.status).toBe(200);
      expect(nextLink(reply.link)).toMatch(/^\/v1\/pets\?limit=5&after=[A-Za-z0-9_-]+$/);
    }
  });

  it('links under PUBLIC_ORIGIN when it is configured, whatever Host and X-Forwarded-* say', async () => {
    const forged: Array<Record<string, string>> = [
      {},
      { host: 'evil.example:8443', 'x-forwarded-host': 'evil.example', 'x-forwarded-proto': 'http' },
    ];
    for (const headers of forged) {
      const reply = await rawGet(stack.withOrigin.url, '/v1/pets?limit=5&status=sold', { ...auth(), ...headers });
      expect(reply.status).toBe(200);
      expect(nextLink(reply.link)).toMatch(
        /^https:\/\/api\.petstore\.example\.com\/v1\/pets\?limit=5&status=sold&after=[A-Za-z0-9_-]+$/,
      );
    }
  });

  it('keeps the link of a request line in absolute form (GET http://host/v1/pets HTTP/1.1)', async () => {
    for (const [gateway, expected] of [
      [stack.direct, /^\/v1\/pets\?limit=5&after=[A-Za-z0-9_-]+$/],
      [stack.withOrigin, /^https:\/\/api\.petstore\.example\.com\/v1\/pets\?limit=5&after=[A-Za-z0-9_-]+$/],
    ] as const) {
      const reply = await rawRequest(
        gateway.url,
        `GET http://evil.example/v1/pets?limit=5 HTTP/1.1\r\nHost: evil.example\r\nAuthorization: Bearer ${key}\r\nConnection: close\r\n\r\n`,
      );
      expect(reply.status).toBe(200);
      expect(nextLink(reply.headers.link ?? null)).toMatch(expected);
    }
  });

  it("passes the pets service's 400 for a bad cursor through, with the Error body", async () => {
    const first = await call(`${stack.direct.url}/v1/pets?limit=2&status=pending`, { headers: auth() });
    const after = new URL(nextLink(first.headers.get('link'))!, stack.direct.url).searchParams.get('after')!;
    const foreign = await call(`${stack.direct.url}/v1/pets?limit=2&status=sold&after=${after}`, { headers: auth() });
    expectErrorBody(foreign, 400, 'VALIDATION_FAILED');
    const truncated = await call(`${stack.direct.url}/v1/pets?limit=2&status=pending&after=${after.slice(0, -1)}`, {
      headers: auth(),
    });
    expectErrorBody(truncated, 400, 'VALIDATION_FAILED');
    expectErrorBody(await call(`${stack.direct.url}/v1/pets?after=`, { headers: auth() }), 400, 'VALIDATION_FAILED');
  });

  it("leaves the deprecated getPet's successor link as it is", async () => {
    const reply = await call(`${stack.direct.url}/v1/pets/1`, { headers: auth() });
    expect(reply.status).toBe(200);
    expect(reply.headers.get('link')).toBe('</v1/pets>; rel="successor-version"');
  });

  it('documents after (its shape from the contract) and the optional Link of listPets', async () => {
    type Op = {
      description: string;
      parameters: Array<{ name: string }>;
      responses: Record<string, { headers: Record<string, unknown> }>;
    };
    const doc = (await (await fetch(`${stack.direct.url}/docs-json`)).json()) as {
      paths: Record<string, Record<string, Op>>;
    };
    const list = doc.paths['/pets'].get;
    expect(list.parameters.find((p) => p.name === 'after')).toMatchObject({
      in: 'query',
      required: false,
      schema: { type: 'string', pattern: PAGE_CURSOR.pattern, maxLength: PAGE_CURSOR.maxLength },
    });
    expect(list.responses['200'].headers.Link).toMatchObject({ required: false, schema: { type: 'string' } });
    expect(list.description).toContain('rel="next"');
  });

  it('answered every /v1 request as the OpenAPI document says (Link included)', async () => {
    const contract = await OpenApiContract.fetch(stack.direct.url);
    expect(checkReceived(contract, received)).toBeGreaterThan(5);
  });
});
