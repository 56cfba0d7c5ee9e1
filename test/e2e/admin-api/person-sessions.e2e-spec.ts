import { adminCall, GatewayUnderTest, startGateway } from '../../support/gateway';
import { call, expectErrorBody } from '../../support/http';
import { DEMO_ROLES, PeopleIdentityProvider } from '../../support/identity-provider-people';

const AUDIENCE = 'petstore-console';

/**
 * POST /sessions/oidc (issue #51, docs/sso.md): a person's ID token, verified against ADMIN_OIDC_ISSUER, becomes a
 * short-lived admin token named for them; a foreign audience or issuer, a token too old, a replay and a person with
 * no mapped role are refused, and the audit names them. The ID tokens are signed with the provider's own key.
 */
describe('a person signs in with an ID token (POST /sessions/oidc)', () => {
  let idp: PeopleIdentityProvider;
  let stranger: PeopleIdentityProvider;
  let gateway: GatewayUnderTest;

  beforeAll(async () => {
    idp = await PeopleIdentityProvider.start();
    stranger = await PeopleIdentityProvider.start();
    gateway = await startGateway({
      petsUrl: 'http://127.0.0.1:1',
      env: {
        ADMIN_OIDC_ISSUER: idp.issuer,
        ADMIN_OIDC_AUDIENCE: AUDIENCE,
        ADMIN_OIDC_ROLES: JSON.stringify({ ...DEMO_ROLES, auditors: { scopes: ['audit:read'], plans: ['free'] } }),
        ADMIN_OIDC_SESSION_MINUTES: '15',
      },
    });
  }, 120_000);
  afterAll(async () => {
    await gateway?.close();
    await idp?.stop();
    await stranger?.stop();
  });

  const olivia = { sub: 'olivia', email: 'olivia.ops@example.com', groups: ['ops-admins'] };
  const exchange = (idToken: string) =>
    adminCall(gateway, 'POST', '/sessions/oidc', { idToken, address: '203.0.113.9' }, null);

  it('issues a token named for the person, whose calls and sign-in rows name them; their sign-out revokes it', async () => {
    const reply = await exchange(await idp.craftIdToken({ ...olivia, aud: AUDIENCE }));
    expect(reply.status).toBe(201);
    const session = reply.body as { token: string; name: string; person: string; scopes: string[]; expiresAt: string };
    expect(session.name).toBe('sso:olivia.ops@example.com');
    expect(session.person).toBe(`olivia.ops@example.com (olivia at ${idp.issuer})`);
    expect(session.scopes).toContain('tokens:admin');
    const minutes = (Date.parse(session.expiresAt) - Date.now()) / 60_000;
    expect(minutes).toBeGreaterThan(14);
    expect(minutes).toBeLessThanOrEqual(15);
    const created = await adminCall(gateway, 'POST', '/consumers', { name: 'by-olivia', plan: 'free' }, session.token);
    expect(created.status).toBe(201);
    const rows = await adminCall(gateway, 'GET', '/audit?target=by-olivia');
    const row = (rows.body as { items: Array<{ actorName: string; onBehalfOf: string }> }).items[0];
    expect(row).toMatchObject({ actorName: session.name, onBehalfOf: session.person });
    const signIn = await adminCall(gateway, 'GET', '/audit?action=user.sign-in&order=desc&limit=1');
    expect((signIn.body as { items: unknown[] }).items[0]).toMatchObject({
      actorName: session.name,
      onBehalfOf: session.person,
      endUserAddress: '203.0.113.9',
    });
    // A person's token names no one else: the channel of the web apps' tokens stays closed to it.
    const named = await call(`${gateway.adminUrl}/token`, {
      headers: { authorization: `Bearer ${session.token}`, 'x-on-behalf-of': 'account:someone-else' },
    });
    expectErrorBody(named, 403, 'FORBIDDEN');
    expect((await adminCall(gateway, 'DELETE', '/sessions/current', undefined, session.token)).status).toBe(204);
    const out = await adminCall(gateway, 'GET', '/audit?action=user.sign-out&order=desc&limit=1');
    expect((out.body as { items: unknown[] }).items[0]).toMatchObject({ onBehalfOf: session.person });
    expectErrorBody(await adminCall(gateway, 'GET', '/token', undefined, session.token), 401, 'UNAUTHORIZED');
  });

  it('takes an ID token once: a replay is 401 and audited', async () => {
    const idToken = await idp.craftIdToken({ ...olivia, aud: AUDIENCE });
    expect((await exchange(idToken)).status).toBe(201);
    expectErrorBody(await exchange(idToken), 401, 'UNAUTHORIZED');
    const failed = await adminCall(gateway, 'GET', '/audit?action=user.sign-in-failed&order=desc&limit=1');
    expect(JSON.stringify(failed.body)).toContain('ID_TOKEN_REPLAYED');
  });

  it('refuses an ID token for another audience, from another issuer, too old, or unsigned by the issuer', async () => {
    expectErrorBody(await exchange(await idp.craftIdToken({ ...olivia, aud: 'other-app' })), 401, 'UNAUTHORIZED');
    // Several audiences: the console must be the authorized party.
    const shared = await idp.craftIdToken({ ...olivia, aud: [AUDIENCE, 'other-app'], azp: 'other-app' });
    expectErrorBody(await exchange(shared), 401, 'UNAUTHORIZED');
    expectErrorBody(await exchange(await stranger.craftIdToken({ ...olivia, aud: AUDIENCE })), 401, 'UNAUTHORIZED');
    // The stranger's key, this issuer's name.
    const forged = await stranger.craftIdToken({ ...olivia, aud: AUDIENCE, iss: idp.issuer });
    expectErrorBody(await exchange(forged), 401, 'UNAUTHORIZED');
    const old = Math.floor(Date.now() / 1000) - 600;
    const stale = await idp.craftIdToken({ ...olivia, aud: AUDIENCE, iat: old, exp: old + 3600 });
    expectErrorBody(await exchange(stale), 401, 'UNAUTHORIZED');
    expectErrorBody(await exchange('not-a-jwt'), 400, 'VALIDATION_FAILED');
  });

  it('refuses a person with no mapped role (403, audited with their name); maps several roles without widening a restricted one', async () => {
    const nora = { sub: 'nora', email: 'nora.nobody@example.com', groups: ['marketing'], aud: AUDIENCE };
    expectErrorBody(await exchange(await idp.craftIdToken(nora)), 403, 'FORBIDDEN');
    const failed = await adminCall(gateway, 'GET', '/audit?action=user.sign-in-failed&order=desc&limit=1');
    expect(JSON.stringify(failed.body)).toContain('nora.nobody@example.com');
    expect(JSON.stringify(failed.body)).toContain('NO_MAPPED_ROLE');
    const both = { sub: 'sam', email: 'sam@example.com', groups: ['support', 'auditors'], aud: AUDIENCE };
    const reply = await exchange(await idp.craftIdToken(both));
    expect(reply.body).toMatchObject({ scopes: ['consumers:read', 'usage:read', 'audit:read'], plans: ['free'] });
    // Read-only: a change is refused by the policy.
    const token = (reply.body as { token: string }).token;
    expectErrorBody(await adminCall(gateway, 'POST', '/consumers', { plan: 'free' }, token), 403, 'FORBIDDEN');
  });
});
