import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { call, expectErrorBody, Reply } from '../../support/http';
import { withStack } from '../../support/with-stack';

const CONCURRENCY = 2;

/**
 * The bound on introspection (docs/oauth.md): an issuer whose introspection endpoint holds every request until the
 * test lets it answer. Five distinct opaque tokens at once against introspectionConcurrency 2: the issuer sees two
 * requests, the other three get 503 with Retry-After at once (not queued behind the two), and the two get 401 once
 * the issuer calls them inactive. A real issuer cannot be made to hold its answers, so this one is a stand-in
 * (oidc-provider's introspection is tested in access-tokens.e2e-spec.ts).
 */
describe('introspection is bounded per issuer', () => {
  let issuer: Server;
  const held: ServerResponse[] = [];
  let introspections = 0;
  const env: Record<string, string> = {};
  beforeAll(async () => {
    issuer = createServer((request: IncomingMessage, response: ServerResponse) => {
      const base = `http://127.0.0.1:${(issuer.address() as AddressInfo).port}`;
      const json = (body: unknown) => {
        response.setHeader('content-type', 'application/json');
        response.end(JSON.stringify(body));
      };
      if (request.url === '/.well-known/openid-configuration')
        return json({ issuer: base, jwks_uri: `${base}/jwks`, introspection_endpoint: `${base}/introspect` });
      if (request.url === '/jwks') return json({ keys: [] });
      if (request.url === '/introspect') {
        introspections += 1;
        request.resume();
        return void held.push(response);
      }
      response.statusCode = 404;
      response.end();
    });
    await new Promise<void>((resolve) => issuer.listen(0, '127.0.0.1', resolve));
    const base = `http://127.0.0.1:${(issuer.address() as AddressInfo).port}`;
    env.OAUTH_ISSUERS = JSON.stringify([
      {
        issuer: base,
        audience: 'https://api.petstore.test',
        introspection: { clientId: 'gateway', clientSecret: 'secret' },
        introspectionConcurrency: CONCURRENCY,
      },
    ]);
  });
  afterAll(async () => {
    for (const response of held) response.destroy();
    issuer.closeAllConnections();
    await new Promise((resolve) => issuer.close(resolve));
  });
  const stack = withStack({ petsUrl: 'http://127.0.0.1:1', gateway: { env } });

  it('beyond introspectionConcurrency, an unknown opaque token gets 503 Retry-After at once, the issuer sees no more', async () => {
    const settled: Reply[] = [];
    const replies = Array.from({ length: 5 }, (_, i) =>
      call(`${stack.gateway.url}/v1/pets`, { headers: { authorization: `Bearer opaque-junk-${i}` } }).then((reply) => {
        settled.push(reply);
        return reply;
      }),
    );
    // The three beyond the bound answer while the issuer still holds the other two.
    while (settled.length < 3 || held.length < CONCURRENCY) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(settled).toHaveLength(3);
    for (const reply of settled) {
      expectErrorBody(reply, 503, 'SERVICE_UNAVAILABLE');
      expect(reply.headers.get('retry-after')).toBe('1');
    }
    for (const response of held.splice(0)) {
      response.setHeader('content-type', 'application/json');
      response.end(JSON.stringify({ active: false }));
    }
    const statuses = (await Promise.all(replies)).map((reply) => reply.status).sort();
    expect(statuses).toEqual([401, 401, 503, 503, 503]);
    expect(introspections).toBe(CONCURRENCY);
    // The bound is on requests in flight, not a budget: with the two answered, a new token is asked about.
    const next = call(`${stack.gateway.url}/v1/pets`, { headers: { authorization: 'Bearer opaque-junk-next' } });
    while (held.length < 1) await new Promise((resolve) => setTimeout(resolve, 10));
    held.splice(0)[0].end(JSON.stringify({ active: false }));
    expectErrorBody(await next, 401, 'UNAUTHORIZED');
  });
});
