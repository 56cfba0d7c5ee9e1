import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Client } from 'pg';
import type { AdminAuditEntry } from '@app/web';
import { hashApiKey } from '../../../apps/gateway/src/consumers/api-key';
import { ADMIN_SCOPES, AdminScope } from '../../../apps/gateway/src/access/admin-scopes';
import { hashAdminToken } from '../../../apps/gateway/src/access/admin-tokens.service';
import { AuditLog, DENIED_PER_MINUTE } from '../../../apps/gateway/src/access/audit-log';
import { adminCall, GatewayUnderTest } from '../../support/gateway';
import { call, expectErrorBody, Reply } from '../../support/http';
import { seedFleetDelivery } from '../../support/webhook-deliveries';
import { withStack } from '../../support/with-stack';

const run = promisify(execFile);
/** Webhook endpoints on loopback's discard port (nothing listens there); no cap on how many. */
const HOOKS_ENV = { OUTBOUND_ALLOW_LIST: '127.0.0.1/32', WEBHOOK_MAX_ENDPOINTS: '1000' };
const HOOK_URL = 'http://127.0.0.1:9/hook';
const KEYS_CLI = join(__dirname, '../../../scripts/keys.js');

const unique = (prefix: string) => `${prefix}-${randomBytes(4).toString('hex')}`;

/**
 * Scoped admin tokens and the audit log (issue #24), on the engine the run selects (embedded PGlite, or
 * DATABASE_URL's server): two gateway instances sharing one database, as in production.
 */
describe('admin tokens and the audit log', () => {
  let sql: Client;
  // Before withStack: afterAll hooks run in declaration order, and the client ends before its database goes.
  afterAll(async () => {
    await sql?.end();
  });
  // An issuer the client-binding routes accept (never asked: no access token is sent here).
  const ISSUER = 'https://idp.tokens-and-audit.example';
  const env = { ...HOOKS_ENV, OAUTH_ISSUERS: JSON.stringify([{ issuer: ISSUER, audience: 'https://api.example' }]) };
  const stack = withStack({
    pets: {},
    database: true,
    sharedKeyPrefix: 'tokens',
    gateways: { a: { env }, b: { env } },
  });

  /** Every API key and admin token a test saw: none may reach the audit log. */
  const secrets: string[] = [];

  const root = (method: string, path: string, body?: unknown) => adminCall(stack.a, method, path, body);
  const as = (token: string, method: string, path: string, body?: unknown, gateway: GatewayUnderTest = stack.a) =>
    adminCall(gateway, method, path, body, token);

  async function createToken(body: Record<string, unknown>): Promise<{ token: string; id: string }> {
    const reply = await root('POST', '/tokens', body);
    expect(reply.status).toBe(201);
    const { token, record } = reply.body as { token: string; record: { id: string } };
    secrets.push(token);
    return { token, id: record.id };
  }

  async function createConsumer(plan = 'free', name = unique('c')): Promise<{ name: string; keyId: string }> {
    const reply = await root('POST', '/consumers', { name, plan });
    expect(reply.status).toBe(201);
    const body = reply.body as { key: { key: string; id: string } };
    secrets.push(body.key.key);
    return { name, keyId: body.key.id };
  }

  /** A pending plan request of a new consumer: its id. */
  /** A consumer's webhook endpoint (its path), or a fleet-wide one's. */
  async function endpoint(fleet = false): Promise<string> {
    const base = fleet ? '/webhook-endpoints' : `/consumers/${(await createConsumer()).name}/webhook-endpoints`;
    const reply = await root('POST', base, { url: HOOK_URL });
    expect(reply.status).toBe(201);
    return `${base}/${(reply.body as { id: string }).id}`;
  }

  async function planRequest(): Promise<string> {
    const reply = await root('POST', '/plan-requests', {
      consumer: (await createConsumer()).name,
      requestedPlan: 'pro',
      expectedVolume: '10 a day',
    });
    expect(reply.status).toBe(201);
    return (reply.body as { id: string }).id;
  }

  async function auditRows(query: string): Promise<AdminAuditEntry[]> {
    const reply = await root('GET', `/audit?limit=1000&${query}`);
    expect(reply.status).toBe(200);
    return (reply.body as { items: AdminAuditEntry[] }).items;
  }

  /** Refusals are recorded without holding the answer back: wait (briefly) for their rows. */
  async function settledAdminAuditEntrys(query: string, count: number): Promise<AdminAuditEntry[]> {
    const deadline = Date.now() + 2000;
    let rows = await auditRows(query);
    while (rows.length < count && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      rows = await auditRows(query);
    }
    return rows;
  }

  beforeAll(async () => {
    sql = new Client({ connectionString: stack.database.url });
    await sql.connect();
  });

  it('records refused calls (401, 403): DENIED_PER_MINUTE rows per source, status, actor and minute, the rest counted on one', async () => {
    const reader = await createToken({ name: unique('reader'), scopes: ['consumers:read'] });
    const freeOnly = await createToken({ name: unique('free-only'), scopes: ['consumers:write'], plans: ['free'] });
    // With a request id: the guard's refusal (no scope) and the repository's (a plan outside the token's) carry it.
    const refused = (token: string, plan: string, requestId: string) =>
      call(`${stack.b.adminUrl}/consumers`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'x-request-id': requestId },
        body: JSON.stringify({ plan }),
      });
    expectErrorBody(await refused(reader.token, 'free', 'req-no-scope'), 403, 'FORBIDDEN');
    expectErrorBody(await refused(freeOnly.token, 'pro', 'req-not-pro'), 403, 'FORBIDDEN');
    const fromLoopback = expect.stringMatching(/127\.0\.0\.1/);
    expect(
      (await settledAdminAuditEntrys(`actor=${reader.id}`, 1)).map((r) => [
        r.action,
        r.changes?.route?.after,
        r.requestId,
        r.source,
      ]),
    ).toEqual([['auth.forbidden', 'POST /consumers', 'req-no-scope', fromLoopback]]);
    expect(
      (await settledAdminAuditEntrys(`actor=${freeOnly.id}`, 1)).map((r) => [
        r.action,
        r.changes?.reason?.after,
        r.requestId,
        r.source,
      ]),
    ).toEqual([['auth.forbidden', expect.stringContaining('not pro'), 'req-not-pro', fromLoopback]]);
    const before = (await auditRows('actor=anonymous')).length;
    for (let i = 0; i < DENIED_PER_MINUTE + 10; i += 1)
      expectErrorBody(await adminCall(stack.b, 'GET', '/consumers', undefined, 'adm_nope'), 401, 'UNAUTHORIZED');
    // The token's 403s spent no 401 budget: every 401 is counted, the ones beyond the budget on an aggregate row.
    const counted = (all: AdminAuditEntry[]) => all.reduce((sum, row) => sum + row.count, 0);
    let rows = await auditRows('actor=anonymous&action=auth.unauthorized');
    for (const deadline = Date.now() + 5000; counted(rows) < before + DENIED_PER_MINUTE + 10 && Date.now() < deadline;)
      rows = await auditRows('actor=anonymous&action=auth.unauthorized');
    await new Promise((resolve) => setTimeout(resolve, 200));
    rows = await auditRows('actor=anonymous&action=auth.unauthorized');
    expect(counted(rows) - before).toBe(DENIED_PER_MINUTE + 10);
    expect(rows[rows.length - 1].source).toMatch(/127\.0\.0\.1/);
  });

  describe('route × scope matrix', () => {
    type Route = {
      method: string;
      path: string;
      scope: AdminScope | 'any' | 'none';
      alsoNeeds?: AdminScope[];
      /** Only root and the web apps' tokens (created with actsForUsers) may call it, whatever their scopes. */
      actsForUsersOnly?: true;
      /** Only a signed-in person's session token (docs/sso.md): refused to these, whatever their scopes. */
      personOnly?: true;
      prepare: () => Promise<{ path: string; body?: unknown }>;
    };
    const routes: Route[] = [
      { method: 'GET', path: '/consumers', scope: 'consumers:read', prepare: async () => ({ path: '/consumers' }) },
      {
        method: 'POST',
        path: '/consumers',
        scope: 'consumers:write',
        prepare: async () => ({ path: '/consumers', body: { plan: 'free' } }),
      },
      {
        method: 'GET',
        path: '/consumers/{name}',
        scope: 'consumers:read',
        prepare: async () => ({ path: `/consumers/${(await createConsumer()).name}` }),
      },
      {
        method: 'PATCH',
        path: '/consumers/{name}',
        scope: 'consumers:write',
        prepare: async () => ({ path: `/consumers/${(await createConsumer()).name}`, body: { plan: 'pro' } }),
      },
      {
        method: 'POST',
        path: '/consumers/{name}/disable',
        scope: 'consumers:write',
        prepare: async () => ({ path: `/consumers/${(await createConsumer()).name}/disable` }),
      },
      {
        method: 'POST',
        path: '/consumers/{name}/enable',
        scope: 'consumers:write',
        prepare: async () => ({ path: `/consumers/${(await createConsumer()).name}/enable` }),
      },
      {
        method: 'POST',
        path: '/consumers/{name}/keys',
        scope: 'keys:write',
        prepare: async () => ({ path: `/consumers/${(await createConsumer()).name}/keys`, body: {} }),
      },
      {
        method: 'POST',
        path: '/consumers/{name}/revoke',
        scope: 'keys:write',
        prepare: async () => ({ path: `/consumers/${(await createConsumer()).name}/revoke` }),
      },
      {
        method: 'POST',
        path: '/consumers/{name}/keys/{keyId}/revoke',
        scope: 'keys:write',
        prepare: async () => {
          const c = await createConsumer();
          return { path: `/consumers/${c.name}/keys/${c.keyId}/revoke` };
        },
      },
      {
        method: 'POST',
        path: '/consumers/{name}/keys/{keyId}/rotate',
        scope: 'keys:write',
        prepare: async () => {
          const c = await createConsumer();
          return { path: `/consumers/${c.name}/keys/${c.keyId}/rotate`, body: {} };
        },
      },
      {
        method: 'GET',
        path: '/consumers/{name}/client-bindings',
        scope: 'consumers:read',
        prepare: async () => ({ path: `/consumers/${(await createConsumer()).name}/client-bindings` }),
      },
      {
        method: 'POST',
        path: '/consumers/{name}/client-bindings',
        scope: 'keys:write',
        prepare: async () => ({
          path: `/consumers/${(await createConsumer()).name}/client-bindings`,
          body: { issuer: ISSUER, clientId: unique('client') },
        }),
      },
      {
        method: 'DELETE',
        path: '/consumers/{name}/client-bindings/{bindingId}',
        scope: 'keys:write',
        prepare: async () => {
          const { name } = await createConsumer();
          const bound = await root('POST', `/consumers/${name}/client-bindings`, {
            issuer: ISSUER,
            clientId: unique('client'),
          });
          expect(bound.status).toBe(201);
          return { path: `/consumers/${name}/client-bindings/${(bound.body as { id: string }).id}` };
        },
      },
      {
        method: 'PATCH',
        path: '/consumers/{name}/client-bindings/{bindingId}',
        scope: 'keys:write',
        prepare: async () => {
          const { name } = await createConsumer();
          const bound = await root('POST', `/consumers/${name}/client-bindings`, {
            issuer: ISSUER,
            clientId: unique('client'),
          });
          expect(bound.status).toBe(201);
          return {
            path: `/consumers/${name}/client-bindings/${(bound.body as { id: string }).id}`,
            body: { allowedAddresses: ['10.1.0.0/16'] },
          };
        },
      },
      {
        method: 'PATCH',
        path: '/consumers/{name}/keys/{keyId}',
        scope: 'keys:write',
        prepare: async () => {
          const c = await createConsumer();
          return { path: `/consumers/${c.name}/keys/${c.keyId}`, body: { allowedAddresses: null } };
        },
      },
      {
        method: 'GET',
        path: '/consumers/{name}/usage',
        scope: 'usage:read',
        prepare: async () => ({ path: `/consumers/${(await createConsumer()).name}/usage` }),
      },
      {
        method: 'POST',
        path: '/consumers/{name}/unban',
        scope: 'consumers:write',
        prepare: async () => ({ path: `/consumers/${(await createConsumer()).name}/unban` }),
      },
      {
        method: 'GET',
        path: '/consumers/{name}/billing',
        scope: 'consumers:read',
        prepare: async () => ({ path: `/consumers/${(await createConsumer()).name}/billing` }),
      },
      {
        method: 'PATCH',
        path: '/consumers/{name}/billing',
        scope: 'consumers:write',
        prepare: async () => ({ path: `/consumers/${(await createConsumer()).name}/billing`, body: { perMonth: 10 } }),
      },
      {
        method: 'GET',
        path: '/consumers/{name}/credits/ledger',
        scope: 'consumers:read',
        prepare: async () => ({ path: `/consumers/${(await createConsumer()).name}/credits/ledger` }),
      },
      {
        method: 'POST',
        path: '/consumers/{name}/credits/top-ups',
        scope: 'consumers:write',
        prepare: async () => ({
          path: `/consumers/${(await createConsumer()).name}/credits/top-ups`,
          body: { amount: 5, reason: 'route matrix' },
        }),
      },
      {
        method: 'PUT',
        path: '/consumers/{name}/credits',
        scope: 'consumers:write',
        prepare: async () => ({
          path: `/consumers/${(await createConsumer()).name}/credits`,
          body: { balance: 10, reason: 'route matrix' },
        }),
      },
      {
        method: 'POST',
        path: '/audit/events',
        scope: 'any',
        actsForUsersOnly: true,
        prepare: async () => ({ path: '/audit/events', body: { kind: 'sign-in', subject: 'operator:matrix' } }),
      },
      {
        method: 'POST',
        path: '/sessions/oidc',
        // No admin token taken: whatever the caller's, this gateway trusts no identity provider (404).
        scope: 'none',
        prepare: async () => ({ path: '/sessions/oidc', body: { idToken: 'a.b.c' } }),
      },
      {
        method: 'DELETE',
        path: '/sessions/current',
        scope: 'any',
        personOnly: true,
        prepare: async () => ({ path: '/sessions/current' }),
      },
      {
        method: 'POST',
        path: '/import',
        scope: 'import',
        // It creates and changes consumers and adds keys: it needs those routes' scopes too (issue #36).
        alsoNeeds: ['consumers:write', 'keys:write'],
        prepare: async () => ({ path: '/import', body: { consumers: [] } }),
      },
      { method: 'GET', path: '/export', scope: 'export', prepare: async () => ({ path: '/export' }) },
      {
        method: 'POST',
        path: '/tokens',
        scope: 'tokens:admin',
        prepare: async () => ({ path: '/tokens', body: { name: unique('t'), scopes: ['tokens:admin'] } }),
      },
      { method: 'GET', path: '/tokens', scope: 'tokens:admin', prepare: async () => ({ path: '/tokens' }) },
      {
        method: 'POST',
        path: '/tokens/{id}/revoke',
        scope: 'tokens:admin',
        prepare: async () => ({
          // A token it could have created (issue #36: a token revokes no broader one).
          path: `/tokens/${(await createToken({ name: unique('t'), scopes: ['tokens:admin'] })).id}/revoke`,
        }),
      },
      { method: 'GET', path: '/audit', scope: 'audit:read', prepare: async () => ({ path: '/audit' }) },
      {
        method: 'GET',
        path: '/consumers/{name}/usage/history',
        scope: 'usage:read',
        prepare: async () => ({ path: `/consumers/${(await createConsumer()).name}/usage/history` }),
      },
      {
        method: 'GET',
        path: '/usage/history',
        scope: 'usage:read',
        prepare: async () => ({ path: '/usage/history?granularity=day' }),
      },
      { method: 'GET', path: '/usage/top', scope: 'usage:read', prepare: async () => ({ path: '/usage/top' }) },
      { method: 'GET', path: '/usage/export', scope: 'usage:read', prepare: async () => ({ path: '/usage/export' }) },
      {
        method: 'GET',
        path: '/plan-requests',
        scope: 'plan-requests:read',
        prepare: async () => ({ path: '/plan-requests' }),
      },
      {
        method: 'POST',
        path: '/plan-requests',
        scope: 'plan-requests:write',
        prepare: async () => ({
          path: '/plan-requests',
          body: { consumer: (await createConsumer()).name, requestedPlan: 'pro', expectedVolume: '10 a day' },
        }),
      },
      {
        method: 'POST',
        path: '/plan-requests/{id}/approve',
        scope: 'plan-requests:review',
        prepare: async () => ({ path: `/plan-requests/${await planRequest()}/approve` }),
      },
      {
        method: 'POST',
        path: '/plan-requests/{id}/decline',
        scope: 'plan-requests:review',
        prepare: async () => ({ path: `/plan-requests/${await planRequest()}/decline`, body: { note: 'no' } }),
      },
      ...(
        [
          [
            'GET',
            '/consumers/{name}/webhook-endpoints',
            'webhooks:read',
            async () => ({ path: `/consumers/${(await createConsumer()).name}/webhook-endpoints` }),
          ],
          [
            'POST',
            '/consumers/{name}/webhook-endpoints',
            'webhooks:write',
            async () => ({
              path: `/consumers/${(await createConsumer()).name}/webhook-endpoints`,
              body: { url: HOOK_URL },
            }),
          ],
          [
            'GET',
            '/consumers/{name}/webhook-endpoints/{id}',
            'webhooks:read',
            async () => ({ path: await endpoint() }),
          ],
          [
            'PATCH',
            '/consumers/{name}/webhook-endpoints/{id}',
            'webhooks:write',
            async () => ({ path: await endpoint(), body: { description: 'x' } }),
          ],
          [
            'DELETE',
            '/consumers/{name}/webhook-endpoints/{id}',
            'webhooks:write',
            async () => ({ path: await endpoint() }),
          ],
          [
            'POST',
            '/consumers/{name}/webhook-endpoints/{id}/rotate-secret',
            'webhooks:write',
            async () => ({ path: `${await endpoint()}/rotate-secret` }),
          ],
          [
            'POST',
            '/consumers/{name}/webhook-endpoints/{id}/test',
            'webhooks:write',
            async () => ({ path: `${await endpoint()}/test` }),
          ],
          [
            'GET',
            '/consumers/{name}/webhook-endpoints/{id}/deliveries',
            'webhooks:read',
            async () => ({ path: `${await endpoint()}/deliveries` }),
          ],
          [
            'POST',
            '/consumers/{name}/webhook-endpoints/{id}/deliveries/{deliveryId}/redeliver',
            'webhooks:write',
            async () => {
              const path = await endpoint();
              const delivery = ((await root('POST', `${path}/test`)).body as { id: string }).id;
              return { path: `${path}/deliveries/${delivery}/redeliver` };
            },
          ],
          ['GET', '/webhook-endpoints', 'webhooks:read', async () => ({ path: '/webhook-endpoints' })],
          [
            'POST',
            '/webhook-endpoints',
            'webhooks:write',
            async () => ({ path: '/webhook-endpoints', body: { url: HOOK_URL } }),
          ],
          ['GET', '/webhook-endpoints/failing', 'webhooks:read', async () => ({ path: '/webhook-endpoints/failing' })],
          ['GET', '/webhook-endpoints/{id}', 'webhooks:read', async () => ({ path: await endpoint(true) })],
          [
            'PATCH',
            '/webhook-endpoints/{id}',
            'webhooks:write',
            async () => ({ path: await endpoint(true), body: { description: 'x' } }),
          ],
          ['DELETE', '/webhook-endpoints/{id}', 'webhooks:write', async () => ({ path: await endpoint(true) })],
          [
            'POST',
            '/webhook-endpoints/{id}/rotate-secret',
            'webhooks:write',
            async () => ({ path: `${await endpoint(true)}/rotate-secret` }),
          ],
          [
            'GET',
            '/webhook-endpoints/{id}/deliveries',
            'webhooks:read',
            async () => ({ path: `${await endpoint(true)}/deliveries` }),
          ],
          [
            'POST',
            '/webhook-endpoints/{id}/test',
            'webhooks:write',
            async () => ({ path: `${await endpoint(true)}/test` }),
          ],
          [
            'GET',
            '/consumers/{name}/threshold-events',
            'webhooks:read',
            async () => ({ path: `/consumers/${(await createConsumer()).name}/threshold-events` }),
          ],
          [
            'POST',
            '/webhook-endpoints/{id}/deliveries/{deliveryId}/redeliver',
            'webhooks:write',
            async () => {
              const path = await endpoint(true);
              const delivery = await seedFleetDelivery(stack.a, path.slice('/webhook-endpoints/'.length));
              return { path: `${path}/deliveries/${delivery}/redeliver` };
            },
          ],
        ] as const
      ).map(([method, path, scope, prepare]): Route => ({ method, path, scope, prepare })),
      // The policy's `any`: every valid token, whatever its scopes (issue #26).
      { method: 'GET', path: '/token', scope: 'any', prepare: async () => ({ path: '/token' }) },
    ];

    it('covers every route of the admin API, each declaring its scope in the OpenAPI document', async () => {
      const doc = (await root('GET', '/docs-json')).body as {
        paths: Record<string, Record<string, { 'x-required-scope'?: string; description?: string }>>;
      };
      const documented = Object.entries(doc.paths).flatMap(([path, item]) =>
        Object.entries(item).map(([method, op]) => ({
          method: method.toUpperCase(),
          path,
          scope: op['x-required-scope'],
          description: op.description,
        })),
      );
      const key = (r: { method: string; path: string }) => `${r.method} ${r.path}`;
      expect(documented.map(key).sort()).toEqual(routes.map(key).sort());
      for (const op of documented) {
        const route = routes.find((r) => key(r) === key(op))!;
        expect(op.scope).toBe(route.scope);
        expect(op.description).toContain(
          route.scope === 'any'
            ? 'Any valid token'
            : route.scope === 'none'
              ? 'No admin token'
              : `Required scope: \`${route.scope}\``,
        );
      }
    });

    it.each(ADMIN_SCOPES.map((scope) => [scope]))(
      'a token holding only %s: 2xx on its routes, 403 FORBIDDEN on every other',
      async (scope) => {
        const { token } = await createToken({ name: unique(scope.replace(':', '-')), scopes: [scope] });
        for (const route of routes) {
          const { path, body } = await route.prepare();
          const bodiless = route.method === 'GET' || route.method === 'DELETE';
          const reply = await as(token, route.method, path, body ?? (bodiless ? undefined : {}));
          if (route.actsForUsersOnly || route.personOnly) {
            // None of these tokens acts for users, nor is a person's session: refused whatever its scope.
            expectErrorBody(reply, 403, 'FORBIDDEN');
          } else if (route.scope === 'none') {
            expectErrorBody(reply, 404, 'NOT_FOUND');
          } else if ((route.scope === scope && !route.alsoNeeds) || route.scope === 'any') {
            expect(
              reply.status >= 200 && reply.status < 300
                ? 'ok'
                : `${route.method} ${path}: ${reply.status} ${reply.text}`,
            ).toBe('ok');
            const created = reply.body as { key?: { key?: string }; token?: string };
            if (typeof created?.key?.key === 'string') secrets.push(created.key.key);
            if (typeof created?.token === 'string') secrets.push(created.token);
          } else {
            expectErrorBody(reply, 403, 'FORBIDDEN');
          }
        }
      },
    );
  });

  describe('the portal token: own consumers only, free plan only', () => {
    let portal: { token: string; id: string };
    beforeAll(async () => {
      portal = await createToken({
        name: unique('portal'),
        scopes: ['consumers:read', 'consumers:write', 'keys:write', 'usage:read'],
        ownConsumersOnly: true,
        plans: ['free'],
      });
    });

    it('creates Free consumers and manages their keys, never a Pro one', async () => {
      const mine = await as(portal.token, 'POST', '/consumers', { name: unique('mine'), plan: 'free' });
      expect(mine.status).toBe(201);
      const { consumer, key } = mine.body as { consumer: { name: string }; key: { key: string; id: string } };
      secrets.push(key.key);
      expect((await as(portal.token, 'POST', `/consumers/${consumer.name}/keys`, {})).status).toBe(201);
      expect((await as(portal.token, 'POST', `/consumers/${consumer.name}/keys/${key.id}/rotate`, {})).status).toBe(
        201,
      );
      expect((await as(portal.token, 'GET', `/consumers/${consumer.name}/usage`)).status).toBe(200);
      expect((await as(portal.token, 'GET', `/consumers/${consumer.name}/usage/history`)).status).toBe(200);
      // The fleet's figures are every consumer's: not for a token restricted to its own.
      for (const path of ['/usage/history', '/usage/top', '/usage/export'])
        expectErrorBody(await as(portal.token, 'GET', path), 403, 'FORBIDDEN');
      expectErrorBody(
        await as(portal.token, 'POST', '/consumers', { name: unique('pro'), plan: 'pro' }),
        403,
        'FORBIDDEN',
      );
      expectErrorBody(
        await as(portal.token, 'PATCH', `/consumers/${consumer.name}`, { plan: 'pro' }),
        403,
        'FORBIDDEN',
      );
      expect((await root('GET', `/consumers/${consumer.name}`)).body).toMatchObject({ plan: 'free' });
    });

    it('cannot see or touch a consumer it did not create', async () => {
      const other = await createConsumer('free');
      for (const [method, path, body] of [
        ['GET', `/consumers/${other.name}`],
        ['PATCH', `/consumers/${other.name}`, { plan: 'free' }],
        ['POST', `/consumers/${other.name}/disable`],
        ['POST', `/consumers/${other.name}/keys`, {}],
        ['POST', `/consumers/${other.name}/keys/${other.keyId}/revoke`],
        ['POST', `/consumers/${other.name}/keys/${other.keyId}/rotate`, {}],
        ['POST', `/consumers/${other.name}/revoke`],
        ['GET', `/consumers/${other.name}/usage`],
        ['GET', `/consumers/${other.name}/usage/history`],
        ['POST', `/consumers/${other.name}/unban`],
      ] as Array<[string, string, unknown?]>) {
        expectErrorBody(
          await as(portal.token, method, path, body ?? (method === 'GET' ? undefined : {})),
          403,
          'FORBIDDEN',
        );
      }
      const consumer = (await root('GET', `/consumers/${other.name}`)).body as {
        disabled?: boolean;
        keys: Array<{ revokedAt: string | null }>;
      };
      expect(consumer.keys).toHaveLength(1);
      expect(consumer.keys[0].revokedAt).toBeNull();
      const listed = (await as(portal.token, 'GET', '/consumers?limit=1000')).body as {
        items: Array<{ name: string }>;
      };
      expect(listed.items.length).toBeGreaterThan(0);
      expect(listed.items.map((c) => c.name)).not.toContain(other.name);
      const { rows } = await sql.query(
        `SELECT count(*)::int AS n FROM "${stack.a.config.consumers.schema}"."consumers" WHERE "created_by_token" = $1`,
        [portal.id],
      );
      expect(listed.items).toHaveLength(rows[0].n);
    });
  });

  describe('expiry and revocation across two instances', () => {
    const within = async (probe: () => Promise<Reply>, timeoutMs: number): Promise<number> => {
      const started = Date.now();
      while ((await probe()).status !== 401) {
        if (Date.now() - started > timeoutMs) throw new Error(`still accepted after ${timeoutMs} ms`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      return Date.now() - started;
    };

    it('a token revoked on one instance is refused by the other within the documented 1 s', async () => {
      const t = await createToken({ name: unique('oncall'), scopes: ['consumers:read'] });
      expect((await as(t.token, 'GET', '/consumers', undefined, stack.b)).status).toBe(200);
      expect((await root('POST', `/tokens/${t.id}/revoke`)).status).toBe(200);
      expect(await within(() => as(t.token, 'GET', '/consumers', undefined, stack.b), 1000)).toBeLessThanOrEqual(1000);
      expectErrorBody(await as(t.token, 'GET', '/consumers', undefined, stack.a), 401, 'UNAUTHORIZED');
    });

    it('an expired token is refused by every instance within the documented 1 s of its expiry', async () => {
      const expiresAt = new Date(Date.now() + 1500);
      const t = await createToken({
        name: unique('ci'),
        scopes: ['consumers:read'],
        expiresAt: expiresAt.toISOString(),
      });
      expect((await as(t.token, 'GET', '/consumers', undefined, stack.a)).status).toBe(200);
      expect((await as(t.token, 'GET', '/consumers', undefined, stack.b)).status).toBe(200);
      await new Promise((resolve) => setTimeout(resolve, expiresAt.getTime() - Date.now()));
      for (const gateway of [stack.a, stack.b])
        expect(await within(() => as(t.token, 'GET', '/consumers', undefined, gateway), 1000)).toBeLessThanOrEqual(
          1000,
        );
    });

    it('GET /token answers the calling token\'s own record; root is "root" with every scope; a revoked token gets 401', async () => {
      const expiresAt = new Date(Date.now() + 3_600_000).toISOString();
      const t = await createToken({
        name: unique('whoami'),
        scopes: ['consumers:read', 'usage:read'],
        plans: ['free'],
        expiresAt,
      });
      expect((await as(t.token, 'GET', '/token')).body).toEqual({
        id: t.id,
        name: expect.stringMatching(/^whoami/),
        scopes: ['consumers:read', 'usage:read'],
        ownConsumersOnly: false,
        plans: ['free'],
        expiresAt,
        actsForUsers: false,
      });
      expect((await root('GET', '/token')).body).toEqual({
        id: null,
        name: 'root',
        scopes: [...ADMIN_SCOPES],
        ownConsumersOnly: false,
        plans: null,
        expiresAt: null,
        actsForUsers: true,
      });
      expect((await root('POST', `/tokens/${t.id}/revoke`)).status).toBe(200);
      expect(await within(() => as(t.token, 'GET', '/token'), 1000)).toBeLessThanOrEqual(1000);
      expectErrorBody(await as(t.token, 'GET', '/token'), 401, 'UNAUTHORIZED');
      expectErrorBody(await as('adm_not-a-token', 'GET', '/token'), 401, 'UNAUTHORIZED');
    });

    it('a token grants only scopes it holds (no escalation)', async () => {
      const admin = await createToken({ name: unique('token-admin'), scopes: ['tokens:admin', 'consumers:read'] });
      const granted = await as(admin.token, 'POST', '/tokens', { name: unique('granted'), scopes: ['consumers:read'] });
      expect(granted.status).toBe(201);
      secrets.push((granted.body as { token: string }).token);
      expectErrorBody(
        await as(admin.token, 'POST', '/tokens', { name: unique('escalated'), scopes: ['consumers:write'] }),
        403,
        'FORBIDDEN',
      );
    });

    it('lists tokens without their secrets, with last use', async () => {
      const t = await createToken({ name: unique('console'), scopes: ['consumers:read'] });
      await as(t.token, 'GET', '/consumers');
      const listed = (await root('GET', '/tokens')).body as Array<Record<string, unknown>>;
      const record = listed.find((r) => r.id === t.id)!;
      expect(record.lastUsedAt).not.toBeNull();
      expect(JSON.stringify(listed)).not.toContain(t.token);
      expect(JSON.stringify(listed)).not.toContain(hashAdminToken(t.token));
    });
  });

  it('records a scripted session (create, rotate, revoke, plan change, import) as it happened', async () => {
    const session = await createToken({ name: unique('session'), scopes: ['consumers:write', 'keys:write', 'import'] });
    const name = unique('scripted');
    const requestId = `req-${randomBytes(4).toString('hex')}`;
    const created = await call(`${stack.a.adminUrl}/consumers`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${session.token}`,
        'content-type': 'application/json',
        'x-request-id': requestId,
      },
      body: JSON.stringify({ name, plan: 'free' }),
    });
    expect(created.status).toBe(201);
    const first = (created.body as { key: { key: string; id: string } }).key;
    secrets.push(first.key);
    const rotated = await as(session.token, 'POST', `/consumers/${name}/keys/${first.id}/rotate`, {
      overlapSeconds: 60,
    });
    const second = (rotated.body as { key: { key: string; id: string } }).key;
    secrets.push(second.key);
    expect((await as(session.token, 'POST', `/consumers/${name}/keys/${first.id}/revoke`)).status).toBe(200);
    expect((await as(session.token, 'PATCH', `/consumers/${name}`, { plan: 'pro' })).status).toBe(200);
    const imported = unique('imported');
    const importedKey = `petk_${randomBytes(32).toString('base64url')}`;
    secrets.push(importedKey);
    expect(
      (
        await as(session.token, 'POST', '/import', {
          consumers: [{ name: imported, plan: 'business', keyHash: hashApiKey(importedKey) }],
        })
      ).status,
    ).toBe(200);

    const rows = await auditRows(`actor=${session.id}`);
    expect(rows.map((r) => [r.action, r.targetConsumer, r.targetKey])).toEqual([
      ['consumer.create', name, first.id],
      ['key.rotate', name, first.id],
      ['key.revoke', name, first.id],
      ['consumer.update', name, null],
      ['import.create', imported, null],
    ]);
    expect(
      rows.every(
        (r) => r.actorName.startsWith('session-') && r.actorId === session.id && /127\.0\.0\.1/.test(r.source ?? ''),
      ),
    ).toBe(true);
    expect(rows[0].requestId).toBe(requestId);
    expect(rows[1].changes?.replacedBy).toEqual({ before: null, after: second.id });
    expect(rows[3].changes).toEqual({ plan: { before: 'free', after: 'pro' } });
    expect(rows[4].changes?.plan).toEqual({ before: null, after: 'business' });
    // Filters: by target and by action, and paging.
    expect((await auditRows(`target=${name}`)).map((r) => r.action)).toEqual([
      'consumer.create',
      'key.rotate',
      'key.revoke',
      'consumer.update',
    ]);
    expect((await auditRows(`actor=${session.id}&action=key.rotate`)).map((r) => r.targetKey)).toEqual([first.id]);
    const page1 = (await root('GET', `/audit?actor=${session.id}&limit=2`)).body as {
      items: AdminAuditEntry[];
      next: string;
    };
    const page2 = (await root('GET', `/audit?actor=${session.id}&limit=2&after=${page1.next}`)).body as {
      items: AdminAuditEntry[];
    };
    expect([...page1.items, ...page2.items].map((r) => r.action)).toEqual(rows.slice(0, 4).map((r) => r.action));
  });

  it('order=desc: the newest first, paged to older rows (after = after in that order); order=asc as before', async () => {
    const { name } = await createConsumer();
    for (const plan of ['pro', 'business', 'free', 'pro', 'business', 'free'])
      expect((await root('PATCH', `/consumers/${name}`, { plan })).status).toBe(200);
    const oldestFirst = await auditRows(`target=${name}`);
    expect(oldestFirst).toHaveLength(7);
    const pages: AdminAuditEntry[][] = [];
    let after: string | null = '';
    while (after !== null) {
      const reply = await root('GET', `/audit?target=${name}&order=desc&limit=3${after ? `&after=${after}` : ''}`);
      expect(reply.status).toBe(200);
      const page = reply.body as { items: AdminAuditEntry[]; next: string | null };
      pages.push(page.items);
      after = page.next;
    }
    expect(pages.map((p) => p.length)).toEqual([3, 3, 1]);
    expect(pages.flat().map((r) => r.id)).toEqual([...oldestFirst].reverse().map((r) => r.id));
    expect(pages[0][0].changes).toEqual({ plan: { before: 'business', after: 'free' } });
    // The same `after` in ascending order continues forward from that row.
    const forward = (await root('GET', `/audit?target=${name}&order=asc&after=${oldestFirst[3].id}`)).body as {
      items: AdminAuditEntry[];
    };
    expect(forward.items.map((r) => r.id)).toEqual(oldestFirst.slice(4).map((r) => r.id));
    expectErrorBody(await root('GET', '/audit?order=newest'), 400, 'VALIDATION_FAILED');
  });

  it('keeps the change and its audit row together: when the audit insert fails, neither exists', async () => {
    const schema = stack.a.config.consumers.schema;
    const doomed = unique('doomed');
    const victim = await createConsumer('free');
    await sql.query(
      `CREATE FUNCTION "${schema}".audit_fail() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN ` +
        `IF NEW.target_consumer IN ('${doomed}', '${victim.name}') THEN RAISE EXCEPTION 'audit insert refused (test)'; END IF; RETURN NEW; END $$`,
    );
    await sql.query(
      `CREATE TRIGGER audit_fail BEFORE INSERT ON "${schema}"."audit_log" FOR EACH ROW EXECUTE FUNCTION "${schema}".audit_fail()`,
    );
    try {
      expectErrorBody(await root('POST', '/consumers', { name: doomed, plan: 'free' }), 500, 'INTERNAL_ERROR');
      expectErrorBody(await root('PATCH', `/consumers/${victim.name}`, { plan: 'pro' }), 500, 'INTERNAL_ERROR');
      expectErrorBody(
        await root('POST', `/consumers/${victim.name}/keys/${victim.keyId}/revoke`),
        500,
        'INTERNAL_ERROR',
      );
    } finally {
      await sql.query(`DROP TRIGGER audit_fail ON "${schema}"."audit_log"`);
      await sql.query(`DROP FUNCTION "${schema}".audit_fail()`);
    }
    expect((await sql.query(`SELECT 1 FROM "${schema}"."consumers" WHERE name = $1`, [doomed])).rowCount).toBe(0);
    const consumer = (await root('GET', `/consumers/${victim.name}`)).body as {
      plan: string;
      keys: Array<{ revokedAt: string | null }>;
    };
    expect(consumer.plan).toBe('free');
    expect(consumer.keys[0].revokedAt).toBeNull();
    expect(
      (
        await sql.query(
          `SELECT 1 FROM "${schema}"."audit_log" WHERE target_consumer IN ($1, $2) AND action <> 'consumer.create'`,
          [doomed, victim.name],
        )
      ).rowCount,
    ).toBe(0);
  });

  it('CLI: token create --for portal, token list, token revoke, audit', async () => {
    const keys = async (token: string, ...args: string[]) =>
      (
        await run(process.execPath, [KEYS_CLI, ...args], {
          env: { ...process.env, ADMIN_URL: stack.a.adminUrl, ADMIN_TOKEN: token },
        })
      ).stdout
        .trim()
        .split('\n');
    const name = unique('portal-cli');
    const created = await keys(stack.a.adminToken, 'token', 'create', '--for', 'portal', '--name', name);
    const token = created[created.length - 1];
    secrets.push(token);
    expect(token).toMatch(/^adm_[A-Za-z0-9_-]{43}$/);
    expect(created[0]).toContain(
      'consumers:read, consumers:write, keys:write, usage:read, plan-requests:read, plan-requests:write, webhooks:read, webhooks:write, own consumers only, plans free, acts for users',
    );
    // The preset names the developer behind the portal's calls in the audit (issue #36 finding 6).
    expect(
      ((await adminCall(stack.a, 'GET', '/token', undefined, token)).body as { actsForUsers: boolean }).actsForUsers,
    ).toBe(true);
    const made = await keys(token, 'create', '--plan', 'free');
    secrets.push(made[made.length - 1]);
    await expect(keys(token, 'create', '--plan', 'pro')).rejects.toMatchObject({
      stderr: expect.stringContaining('plans free, not pro'),
    });
    const listed = (await keys(stack.a.adminToken, 'token', 'list')).find((line) => line.includes(`\t${name}\t`))!;
    expect(listed).toMatch(/\tactive\t/);
    expect(listed).not.toContain(token);
    const id = listed.split('\t')[0];
    const custom = await keys(
      stack.a.adminToken,
      'token',
      'create',
      '--name',
      unique('oncall'),
      '--scopes',
      'consumers:read,usage:read,audit:read',
      '--expires',
      new Date(Date.now() + 86_400_000).toISOString(),
    );
    secrets.push(custom[custom.length - 1]);
    expect((await keys(stack.a.adminToken, 'token', 'revoke', id))[0]).toContain('Revoked admin token');
    const audit = await keys(stack.a.adminToken, 'audit', '--actor', id);
    // The refused pro consumer is recorded too unless this source's refusals quota for the minute is spent (the matrix spends it).
    expect(audit.map((line) => line.split('\t')[2]).filter((action) => action !== 'auth.forbidden')).toEqual([
      'consumer.create',
    ]);
    // Newest first by default, as the console shows it; --order asc for the oldest first.
    expect((await keys(stack.a.adminToken, 'audit', '--target', id)).map((line) => line.split('\t')[2])).toEqual([
      'token.revoke',
      'token.create',
    ]);
    expect(
      (await keys(stack.a.adminToken, 'audit', '--target', id, '--order', 'asc')).map((line) => line.split('\t')[2]),
    ).toEqual(['token.create', 'token.revoke']);
  });

  it('CLI help: --help and -h overall and per verb exit 0; a mistake is one line and a hint, exit 2; every scope is listed', async () => {
    const cli = (...args: string[]) =>
      run(process.execPath, [KEYS_CLI, ...args], {
        env: { ...process.env, ADMIN_URL: stack.a.adminUrl, ADMIN_TOKEN: stack.a.adminToken },
      });
    for (const help of [['--help'], ['-h'], ['help'], []]) {
      const { stdout } = await cli(...help);
      for (const verb of ['create', 'rotate', 'usage', 'token create', 'audit', 'requests approve', 'requests decline'])
        expect([help, stdout.includes(`npm run -s keys -- ${verb}`)]).toEqual([help, true]);
      // The scopes the gateway accepts, all of them (read from the committed admin API document).
      for (const scope of ADMIN_SCOPES) expect(stdout).toContain(scope);
    }
    const rotate = (await cli('rotate', '--help')).stdout.trim().split('\n');
    expect(rotate.filter((line) => line.startsWith('  npm run -s keys --'))).toEqual([
      '  npm run -s keys -- rotate NAME [--key KEY-ID] [--overlap SECONDS]',
    ]);
    const mistake = await cli('create', '--bogus').then(
      () => undefined,
      (error: { code: number; stderr: string }) => error,
    );
    expect(mistake?.code).toBe(2);
    expect(mistake?.stderr.trim().split('\n')).toEqual([
      expect.stringMatching(/^keys: Unknown option '--bogus'/),
      'See: npm run -s keys -- create --help',
    ]);
    const order = await cli('audit', '--order', 'sideways').then(
      () => undefined,
      (error: { code: number; stderr: string }) => error,
    );
    expect(order?.stderr.trim().split('\n')).toEqual([
      'keys: --order must be desc (newest first) or asc',
      'See: npm run -s keys -- audit --help',
    ]);
  });

  it('retention: prune() deletes the rows older than AUDIT_RETENTION_DAYS and keeps the others', async () => {
    const schema = stack.a.config.consumers.schema;
    expect(stack.a.config.admin.auditRetentionDays).toBe(730);
    await sql.query(
      `INSERT INTO "${schema}"."audit_log" (at, actor_name, action) VALUES (now() - interval '731 days', 'root', 'old.row'), (now() - interval '729 days', 'root', 'kept.row')`,
    );
    expect(await stack.a.app.get(AuditLog).prune()).toBe(1);
    const { rows } = await sql.query(
      `SELECT action FROM "${schema}"."audit_log" WHERE action IN ('old.row', 'kept.row')`,
    );
    expect(rows.map((r: { action: string }) => r.action)).toEqual(['kept.row']);
  });

  it('holds no secret: no key, token or hash of one issued in this file appears in the audit log', async () => {
    expect(secrets.length).toBeGreaterThan(20);
    const { rows } = await sql.query(
      `SELECT string_agg(t::text, ' ') AS text FROM "${stack.a.config.consumers.schema}"."audit_log" t`,
    );
    const text: string = rows[0].text;
    expect(text.length).toBeGreaterThan(1000);
    for (const secret of secrets) {
      expect(text).not.toContain(secret);
      expect(text).not.toContain(hashApiKey(secret));
      expect(text).not.toContain(secret.slice(0, 12));
    }
  });
});
