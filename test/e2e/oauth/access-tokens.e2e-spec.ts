import { createPublicKey, randomBytes } from 'node:crypto';
import { exportJWK, generateKeyPair, importJWK, SignJWT, type JWTPayload } from 'jose';
import { adminCall, GatewayUnderTest } from '../../support/gateway';
import { call, expectErrorBody, Reply } from '../../support/http';
import { API_AUDIENCE, IdentityProvider, IdentityProviderClient } from '../../support/identity-provider';
import { withStack } from '../../support/with-stack';

const shared = Boolean(process.env.REDIS_URL);
const INTROSPECTION_TTL_S = 1;
const unique = (prefix: string) => `${prefix}-${randomBytes(4).toString('hex')}`;

const get = (gateway: GatewayUnderTest, token: string): Promise<Reply> =>
  call(`${gateway.url}/v1/pets?limit=1`, { headers: { authorization: `Bearer ${token}` } });

const expectInvalidToken = (reply: Reply) => {
  expectErrorBody(reply, 401, 'UNAUTHORIZED');
  expect(reply.headers.get('www-authenticate')).toBe('Bearer realm="petstore", error="invalid_token"');
  expect((reply.body as { message: string }).message).toBe('Invalid or expired access token.');
};

/**
 * OAuth 2.0 access tokens on /v1 (issue #50), against a real oidc-provider in this process: a client-credentials
 * token is its bound consumer, on the one counter the consumer's keys draw on, across two instances; the issuer's
 * key rotation; every forged or misaddressed token refused with RFC 6750's invalid_token; introspection and
 * revocation; scopes; the issuer taken away. With REDIS_URL the instances share their counters (the exact count
 * goes through both); without it each instance counts on its own, so the count goes through one.
 */
describe("OAuth access tokens as a consumer's credentials", () => {
  let idp: IdentityProvider;
  const env: Record<string, string> = {};
  beforeAll(async () => {
    idp = await IdentityProvider.start();
    env.OAUTH_ISSUERS = JSON.stringify([
      {
        issuer: idp.issuer,
        audience: API_AUDIENCE,
        introspection: { clientId: idp.gatewayClient.clientId, clientSecret: idp.gatewayClient.clientSecret },
        introspectionCacheSeconds: INTROSPECTION_TTL_S,
        // Every unknown kid may refetch the JWKS at once: the rotation test needs no wait.
        jwksCooldownMs: 0,
        scopes: { 'pets:read': ['listPets', 'getPet'], 'pets:write': ['createPet'] },
        tokenUrl: `${idp.issuer}/token`,
      },
    ]);
  });
  afterAll(() => idp.stop());
  const stack = withStack({ pets: {}, database: true, sharedKeyPrefix: 'oauth', gateways: { a: { env }, b: { env } } });

  /** Bindings made, by client id: a client is bound to one consumer at a time. */
  const bindings = new Map<string, { consumer: string; id: string }>();

  /** A new consumer (and its key) with `client` bound to it, unbound from the consumer it had. */
  async function bindToNewConsumer(
    client: IdentityProviderClient,
    plan = 'pro',
  ): Promise<{ consumer: string; key: string }> {
    const earlier = bindings.get(client.clientId);
    if (earlier) {
      const unbound = await adminCall(
        stack.a,
        'DELETE',
        `/consumers/${earlier.consumer}/client-bindings/${earlier.id}`,
      );
      expect(unbound.status).toBe(200);
    }
    const consumer = unique('oauth');
    const created = await adminCall(stack.a, 'POST', '/consumers', { name: consumer, plan });
    expect(created.status).toBe(201);
    const bound = await adminCall(stack.a, 'POST', `/consumers/${consumer}/client-bindings`, {
      issuer: idp.issuer,
      clientId: client.clientId,
    });
    expect(bound.status).toBe(201);
    bindings.set(client.clientId, { consumer, id: (bound.body as { id: string }).id });
    return { consumer, key: (created.body as { key: { key: string } }).key.key };
  }

  /** A token signed with `key` (the issuer's own by default), claims over those of a good token. */
  async function forge(claims: JWTPayload = {}, header: Record<string, unknown> = {}, key = idp.signingKey) {
    const now = Math.floor(Date.now() / 1000);
    return new SignJWT({ client_id: idp.jwtClient.clientId, scope: 'pets:read pets:write', ...claims })
      .setProtectedHeader({ alg: 'ES256', typ: 'at+jwt', kid: key.kid, ...header })
      .setIssuer(typeof claims.iss === 'string' ? claims.iss : idp.issuer)
      .setAudience(claims.aud ?? API_AUDIENCE)
      .setIssuedAt(claims.iat ?? now)
      .setExpirationTime(claims.exp ?? now + 300)
      .sign(await importJWK(key.privateJwk, 'ES256'));
  }

  it('the served document declares the issuer as a client-credentials scheme beside the key, and its token works', async () => {
    const doc = (await call(`${stack.a.url}/docs-json`)).body as {
      components: { securitySchemes: Record<string, unknown> };
      paths: Record<string, Record<string, { security: unknown[] }>>;
    };
    expect(doc.components.securitySchemes.oauth2).toEqual({
      type: 'oauth2',
      description: expect.stringContaining(idp.issuer),
      flows: {
        clientCredentials: {
          tokenUrl: `${idp.issuer}/token`,
          scopes: { 'pets:read': 'Allows listPets, getPet', 'pets:write': 'Allows createPet' },
        },
      },
    });
    expect(doc.paths['/pets'].get.security).toEqual([{ bearer: [] }, { oauth2: [] }]);
    // What Swagger UI does with it: the client-credentials grant at tokenUrl, then the token as the bearer.
    await bindToNewConsumer(idp.jwtClient);
    const { clientId, clientSecret } = idp.jwtClient;
    const granted = await call(`${idp.issuer}/token`, {
      method: 'POST',
      // Swagger UI sends the client's credentials as Basic (client_secret_basic).
      headers: {
        authorization: `Basic ${Buffer.from(`${clientId}:${clientSecret}`).toString('base64')}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: new URLSearchParams({ grant_type: 'client_credentials', scope: 'pets:read' }).toString(),
    });
    expect(granted.status).toBe(200);
    expect((await get(stack.a, (granted.body as { access_token: string }).access_token)).status).toBe(200);
  });

  it("a token counts on its consumer's one counter with its key: 30 by key and 30 by token, the 61st refused", async () => {
    if (!shared) console.log('access-tokens: REDIS_URL is not set: the count goes through one instance');
    const { key } = await bindToNewConsumer(idp.jwtClient, 'free');
    const token = await idp.token();
    const [first, second] = shared ? [stack.a, stack.b] : [stack.a, stack.a];
    const statuses: number[] = [];
    for (const [gateway, credential] of [
      [first, key],
      [second, key],
      [first, token],
      [second, token],
    ] as const)
      for (let i = 0; i < 15; i += 1) statuses.push((await get(gateway, credential)).status);
    expect(statuses.filter((status) => status === 200)).toHaveLength(60);
    const over = await get(second, token);
    expectErrorBody(over, 429, 'RATE_LIMITED');
    expectErrorBody(await get(first, key), 429, 'RATE_LIMITED');
  });

  it("the usage history counts the token's requests and the key's on their one consumer", async () => {
    const { consumer, key } = await bindToNewConsumer(idp.jwtClient);
    const token = await idp.token();
    expect((await get(stack.a, token)).status).toBe(200);
    expect((await get(stack.a, token)).status).toBe(200);
    expect((await get(stack.a, key)).status).toBe(200);
    const { UsageService } = await import('../../../apps/gateway/src/usage/usage.service');
    await stack.a.app.get(UsageService).flush();
    const today = new Date().toISOString().slice(0, 10);
    const tomorrow = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);
    const history = await adminCall(
      stack.a,
      'GET',
      `/consumers/${consumer}/usage/history?granularity=day&from=${today}&to=${tomorrow}`,
    );
    expect(history.status).toBe(200);
    const total = (history.body as { buckets: Array<{ requests: number }> }).buckets.reduce(
      (s, b) => s + b.requests,
      0,
    );
    expect(total).toBe(3);
  });

  it('a deleted binding stops its tokens on every instance', async () => {
    const { consumer } = await bindToNewConsumer(idp.jwtClient);
    const token = await idp.token();
    expect((await get(stack.a, token)).status).toBe(200);
    expect((await get(stack.b, token)).status).toBe(200);
    const { id } = bindings.get(idp.jwtClient.clientId)!;
    expect((await adminCall(stack.a, 'DELETE', `/consumers/${consumer}/client-bindings/${id}`)).status).toBe(200);
    bindings.delete(idp.jwtClient.clientId);
    expectInvalidToken(await get(stack.a, token));
    // The other instance hears it on the change channel: within the publish deadline, not the cache TTL.
    let reply = await get(stack.b, token);
    for (let i = 0; i < 50 && reply.status === 200; i += 1) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      reply = await get(stack.b, token);
    }
    expectInvalidToken(reply);
  });

  it('a client binding restricted to other addresses: its tokens get 403 ADDRESS_NOT_ALLOWED on every instance, counted on the address, never the consumer', async () => {
    const { consumer } = await bindToNewConsumer(idp.jwtClient);
    const token = await idp.token();
    expect((await get(stack.a, token)).status).toBe(200);
    expect((await get(stack.b, token)).status).toBe(200);
    const { id } = bindings.get(idp.jwtClient.clientId)!;
    const fenced = await adminCall(stack.a, 'PATCH', `/consumers/${consumer}/client-bindings/${id}`, {
      allowedAddresses: ['10.1.0.0/16'],
    });
    expect(fenced.status).toBe(200);
    expect(fenced.body).toMatchObject({ id, allowedAddresses: ['10.1.0.0/16'] });
    const used = async () =>
      (
        (await adminCall(stack.a, 'GET', `/consumers/${consumer}/usage`)).body as {
          windows: Array<{ name: string; used: number }>;
        }
      ).windows.find((w) => w.name === 'minute')!.used;
    const before = await used();
    const refused = await get(stack.a, token);
    expectErrorBody(refused, 403, 'ADDRESS_NOT_ALLOWED');
    // On the address's anonymous window (ANON_RATE_LIMIT_PER_MINUTE's default), as an invalid token is.
    expect(refused.headers.get('x-ratelimit-limit')).toBe('30');
    // The other instance hears it on the change channel.
    let reply = await get(stack.b, token);
    for (let i = 0; i < 50 && reply.status === 200; i += 1) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      reply = await get(stack.b, token);
    }
    expectErrorBody(reply, 403, 'ADDRESS_NOT_ALLOWED');
    if (shared) expect(await used()).toBe(before);
    // Loopback allowed (the test's own address): answered again.
    expect(
      (
        await adminCall(stack.a, 'PATCH', `/consumers/${consumer}/client-bindings/${id}`, {
          allowedAddresses: ['127.0.0.0/8', '::1'],
        })
      ).status,
    ).toBe(200);
    expect((await get(stack.a, token)).status).toBe(200);
  });

  it("a disabled consumer's token is refused as its keys are", async () => {
    const { consumer } = await bindToNewConsumer(idp.jwtClient);
    const token = await idp.token();
    expect((await get(stack.a, token)).status).toBe(200);
    expect((await adminCall(stack.a, 'POST', `/consumers/${consumer}/disable`)).status).toBe(200);
    expectErrorBody(await get(stack.a, token), 401, 'CONSUMER_DISABLED');
  });

  it('the issuer rotates its key: new tokens are accepted, old ones still verify until they expire', async () => {
    await bindToNewConsumer(idp.jwtClient);
    const before = await idp.token();
    expect((await get(stack.a, before)).status).toBe(200);
    const old = await idp.token(); // signed with the old key, not seen by either instance yet
    const rotated = await idp.rotateKeys();
    const after = await idp.token();
    expect(JSON.parse(Buffer.from(after.split('.')[0], 'base64url').toString()).kid).toBe(rotated.kid);
    expect((await get(stack.a, after)).status).toBe(200);
    expect((await get(stack.b, after)).status).toBe(200);
    expect((await get(stack.a, old)).status).toBe(200);
    expect((await get(stack.b, old)).status).toBe(200);
  });

  it('the admin routes: list, a configured issuer only (400), one consumer per client (409), audited', async () => {
    const { consumer } = await bindToNewConsumer(idp.jwtClient);
    const listed = await adminCall(stack.b, 'GET', `/consumers/${consumer}/client-bindings`);
    expect(listed.status).toBe(200);
    expect(listed.body).toEqual([
      expect.objectContaining({
        id: bindings.get(idp.jwtClient.clientId)!.id,
        issuer: idp.issuer,
        clientId: 'machine-jwt',
      }),
    ]);
    const other = unique('other');
    expect((await adminCall(stack.a, 'POST', '/consumers', { name: other, plan: 'free' })).status).toBe(201);
    const taken = await adminCall(stack.a, 'POST', `/consumers/${other}/client-bindings`, {
      issuer: idp.issuer,
      clientId: idp.jwtClient.clientId,
    });
    expectErrorBody(taken, 409, 'CLIENT_ALREADY_BOUND');
    const unknownIssuer = await adminCall(stack.a, 'POST', `/consumers/${other}/client-bindings`, {
      issuer: 'https://not-configured.example',
      clientId: 'x',
    });
    expectErrorBody(unknownIssuer, 400, 'VALIDATION_FAILED');
    expectErrorBody(
      await adminCall(stack.a, 'POST', `/consumers/${other}/client-bindings`, { issuer: idp.issuer }),
      400,
      'VALIDATION_FAILED',
    );
    expectErrorBody(
      await adminCall(
        stack.a,
        'DELETE',
        `/consumers/${other}/client-bindings/${bindings.get(idp.jwtClient.clientId)!.id}`,
      ),
      404,
      'NOT_FOUND',
    );
    const audit = await adminCall(stack.a, 'GET', `/audit?target=${consumer}&action=client-binding.create`);
    expect(audit.status).toBe(200);
    expect((audit.body as { items: Array<{ changes: unknown }> }).items).toEqual([
      expect.objectContaining({
        changes: expect.objectContaining({ clientId: { before: null, after: 'machine-jwt' } }) as unknown,
      }),
    ]);
  });

  it('forged or misaddressed tokens get 401 invalid_token, whichever check fails', async () => {
    await bindToNewConsumer(idp.jwtClient);
    // The forger's own good token verifies: the refusals below are the checks', not the forging's.
    expect((await get(stack.a, await forge())).status).toBe(200);
    const now = Math.floor(Date.now() / 1000);
    const encode = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
    const claims = { iss: idp.issuer, aud: API_AUDIENCE, client_id: idp.jwtClient.clientId, exp: now + 300, iat: now };
    const unsigned = `${encode({ alg: 'none', typ: 'at+jwt' })}.${encode(claims)}.`;
    // HS256 keyed with the issuer's public key (PEM and JWK forms): what a confused verifier would accept.
    const publicPem = createPublicKey({ key: idp.signingKey.privateJwk as never, format: 'jwk' })
      .export({ type: 'spki', format: 'pem' })
      .toString();
    const hmacWith = (secret: string) =>
      new SignJWT(claims)
        .setProtectedHeader({ alg: 'HS256', typ: 'at+jwt', kid: idp.signingKey.kid })
        .sign(new TextEncoder().encode(secret));
    const { d: _private, ...publicJwk } = idp.signingKey.privateJwk;
    const forged = {
      'alg none': unsigned,
      'HS256 with the public key (PEM)': await hmacWith(publicPem),
      'HS256 with the public key (JWK)': await hmacWith(JSON.stringify(publicJwk)),
      'wrong iss': await forge({ iss: 'https://elsewhere.example' }),
      'wrong aud': await forge({ aud: 'https://another-api.example' }),
      expired: await forge({ iat: now - 900, exp: now - 600 }),
      'future nbf': await forge({ nbf: now + 600 }),
      'future iat': await forge({ iat: now + 600, exp: now + 900 }),
      'not an access token (typ JWT... id token)': await forge({}, { typ: 'JWT' }),
      'bad signature': `${(await forge()).slice(0, -4)}AAAA`,
      'unbound client': await forge({ client_id: 'nobody-bound-this' }),
      garbage: 'not-a-token',
    };
    for (const [name, token] of Object.entries(forged)) {
      const reply = await get(stack.a, token);
      try {
        expectInvalidToken(reply);
      } catch (error) {
        throw new Error(`${name}: ${reply.status} ${reply.text}`, { cause: error });
      }
    }
  });

  it("a token without the operation's scope gets 403 insufficient_scope; its scope's operations answer", async () => {
    await bindToNewConsumer(idp.jwtClient);
    const readOnly = await idp.token(idp.jwtClient, 'pets:read');
    expect((await get(stack.a, readOnly)).status).toBe(200);
    const refused = await call(`${stack.a.url}/v1/pets`, {
      method: 'POST',
      headers: { authorization: `Bearer ${readOnly}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Scoped', categoryId: 1, status: 'available' }),
    });
    expectErrorBody(refused, 403, 'INSUFFICIENT_SCOPE');
    expect(refused.headers.get('www-authenticate')).toBe(
      'Bearer realm="petstore", error="insufficient_scope", scope="pets:write"',
    );
  });

  it('an opaque token is introspected; revoked at the provider, it is refused within the cache TTL', async () => {
    await bindToNewConsumer(idp.opaqueClient);
    const token = await idp.token(idp.opaqueClient);
    expect(token.split('.')).toHaveLength(1);
    expect((await get(stack.a, token)).status).toBe(200);
    await idp.revoke(token);
    const deadline = Date.now() + INTROSPECTION_TTL_S * 1000 * 5;
    let reply = await get(stack.a, token);
    while (reply.status === 200 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      reply = await get(stack.a, token);
    }
    expectInvalidToken(reply);
  });

  it('with the provider stopped, tokens of known kids keep working and an unknown kid gets 503 Retry-After', async () => {
    await bindToNewConsumer(idp.jwtClient);
    const seen = await idp.token();
    expect((await get(stack.a, seen)).status).toBe(200);
    const unseen = await idp.token(); // a known kid, a token no instance verified yet
    await idp.stop();
    expect((await get(stack.a, unseen)).status).toBe(200);
    expect((await get(stack.a, seen)).status).toBe(200);
    const { privateKey } = await generateKeyPair('ES256', { extractable: true });
    const stranger = { kid: 'never-seen', alg: 'ES256' as const, privateJwk: await exportJWK(privateKey) };
    const unknownKid = await forge({}, {}, stranger);
    const reply = await get(stack.a, unknownKid);
    expectErrorBody(reply, 503, 'SERVICE_UNAVAILABLE');
    expect(Number(reply.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    // Counted nowhere: the address's anonymous window is as it was.
    const remaining = (r: Reply) => Number(r.headers.get('x-ratelimit-remaining'));
    const anonymous = () => call(`${stack.a.url}/v1/pets`);
    const before = remaining(await anonymous());
    await get(stack.a, unknownKid);
    expect(remaining(await anonymous())).toBe(before - 1);
  });
});
