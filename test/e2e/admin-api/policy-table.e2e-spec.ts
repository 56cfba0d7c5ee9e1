import { randomBytes } from 'node:crypto';
import { ADMIN_SCOPES } from '../../../apps/gateway/src/access/admin-scopes';
import { ADMIN_POLICY, AdminOperationId, RoutePolicy } from '../../../apps/gateway/src/access/admin-policy';
import { adminCall, FakeClock } from '../../support/gateway';
import { expectErrorBody, Reply } from '../../support/http';
import { seedFleetDelivery } from '../../support/webhook-deliveries';
import { withStack } from '../../support/with-stack';

const unique = (prefix: string) => `${prefix}-${randomBytes(4).toString('hex')}`;
const DAY_MS = 24 * 60 * 60 * 1000;

/** The token kinds every route is called with (issue #36). */
const KINDS = ['root', 'unrestricted', 'own', 'plans', 'lacking', 'revoked', 'expired'] as const;
type Kind = (typeof KINDS)[number];
/** The object a call names: one the kind may reach ('own'), or one outside it ('other'). */
type Which = 'own' | 'other';
const OWN_PLANS = ['free'];
/** An issuer configured for the client bindings' routes (never fetched: no /v1 request is sent). */
const ISSUER = 'https://idp.policy.test';
const PLANS_PLANS = ['free', 'pro'];

/** What a cell must answer: a 2xx (or the status), and for a list whether the object shows in it. */
interface Expected {
  status: number | '2xx';
  listed?: boolean;
}

/**
 * The expected answer of every cell, derived from the policy table (access/admin-policy.ts) and the rules its
 * object kinds stand for. `other` is a consumer on a plan the kind does not hold (or one it did not create), a plan
 * request of such a consumer, a token broader than the caller or not its own.
 */
function expected(policy: RoutePolicy, kind: Kind, which: Which): Expected {
  // No admin token taken (a person's sign-in): whatever the caller's token, this stack configures no provider.
  if (policy.objects === 'sign-in') return { status: 404 };
  if (kind === 'revoked' || kind === 'expired') return { status: 401 };
  // A person's own sign-out: none of these tokens is a person's session (docs/sso.md; the console's tests sign in).
  if (policy.objects === 'session') return { status: 403 };
  // Naming a person: root and a token created with actsForUsers (here the 'own' kind, the portal's) only.
  if (policy.objects === 'end-user') return { status: kind === 'root' || kind === 'own' ? '2xx' : 403 };
  if (kind === 'lacking') return { status: policy.scopes === 'any' ? '2xx' : 403 };
  const restricted = kind === 'own' || kind === 'plans';
  if (!restricted) {
    // Root reaches everything; an unrestricted token (expiring in a day) creates and revokes no token outliving it.
    const outranked = kind === 'unrestricted' && which === 'other';
    if (policy.objects === 'token-create' || policy.objects === 'token') return { status: outranked ? 403 : '2xx' };
    return { status: '2xx', listed: true };
  }
  switch (policy.objects) {
    case 'self':
      return { status: '2xx' };
    case 'fleet':
    case 'token-create':
      return { status: 403 };
    case 'consumer':
      return { status: which === 'own' ? '2xx' : 403 };
    case 'consumers':
    case 'plan-requests':
    case 'audit':
      return { status: '2xx', listed: which === 'own' };
    case 'plan-request':
      return { status: kind === 'plans' && which === 'own' ? '2xx' : 403 };
    case 'tokens':
      return { status: '2xx', listed: which === 'own' ? undefined : false };
    case 'token':
      return { status: 404 };
  }
}

/**
 * The policy table as real requests (issue #36, Deliver 2): every admin route × token kind × own/other object,
 * its expected status asserted. One gateway for the file, on the engine the run selects.
 */
describe('the admin policy, every route × token kind × object', () => {
  const clock = new FakeClock();
  const stack = withStack({
    petsUrl: 'http://127.0.0.1:9',
    database: true,
    sharedKeyPrefix: 'policy',
    // Webhook endpoints on loopback's discard port (nothing listens: the worker's attempts fail); no cap on them.
    gateway: {
      clock,
      env: {
        OUTBOUND_ALLOW_LIST: '127.0.0.1/32',
        WEBHOOK_MAX_ENDPOINTS: '1000',
        OAUTH_ISSUERS: JSON.stringify([{ issuer: ISSUER, audience: 'https://api.policy.test' }]),
      },
    },
  });

  const tokens = {} as Record<Exclude<Kind, 'root' | 'lacking'>, { token: string; id: string }>;
  const lacking = new Map<string, string>();

  const root = (method: string, path: string, body?: unknown) => adminCall(stack.gateway, method, path, body);
  const as = (token: string, method: string, path: string, body?: unknown) =>
    adminCall(stack.gateway, method, path, body, token);

  async function createToken(body: Record<string, unknown>, by?: string): Promise<{ token: string; id: string }> {
    const reply = by ? await as(by, 'POST', '/tokens', body) : await root('POST', '/tokens', body);
    if (reply.status !== 201) throw new Error(`createToken: ${reply.status} ${reply.text}`);
    const { token, record } = reply.body as { token: string; record: { id: string } };
    return { token, id: record.id };
  }

  async function consumer(plan: string, by?: string): Promise<{ name: string; plan: string; keyId: string }> {
    const name = unique('c');
    const reply = by
      ? await as(by, 'POST', '/consumers', { name, plan })
      : await root('POST', '/consumers', { name, plan });
    if (reply.status !== 201) throw new Error(`consumer: ${reply.status} ${reply.text}`);
    return { name, plan, keyId: (reply.body as { key: { id: string } }).key.id };
  }

  /** A consumer the kind reaches (own) or not (other): an own-consumers token's own are those it created. */
  function consumerFor(kind: Kind, which: Which) {
    if (kind === 'own') return which === 'own' ? consumer('free', tokens.own.token) : consumer('free');
    return consumer(which === 'own' ? 'free' : 'business');
  }

  async function planRequestFor(kind: Kind, which: Which): Promise<{ id: string; consumer: string }> {
    const { name } = await consumerFor(kind, which);
    const reply = await root('POST', '/plan-requests', { consumer: name, requestedPlan: 'pro', expectedVolume: '1' });
    if (reply.status !== 201) throw new Error(`planRequest: ${reply.status} ${reply.text}`);
    return { id: (reply.body as { id: string }).id, consumer: name };
  }

  /** A token to revoke: the unrestricted token's own child, or a root-made token that outlives it. */
  async function tokenFor(kind: Kind, which: Which): Promise<string> {
    if (kind === 'unrestricted' && which === 'own')
      return (await createToken({ name: unique('child'), scopes: ['consumers:read'] }, tokens.unrestricted.token)).id;
    return (await createToken({ name: unique('t'), scopes: ['consumers:read'] })).id;
  }

  const HOOK_URL = 'http://127.0.0.1:9/hook';
  async function created(path: string): Promise<string> {
    const reply = await root('POST', path, { url: HOOK_URL });
    if (reply.status !== 201) throw new Error(`endpoint: ${reply.status} ${reply.text}`);
    return (reply.body as { id: string }).id;
  }
  /** A webhook endpoint of a consumer the kind reaches (own) or not (other). */
  async function endpointFor(kind: Kind, which: Which): Promise<string> {
    const { name } = await consumerFor(kind, which);
    return `/consumers/${name}/webhook-endpoints/${await created(`/consumers/${name}/webhook-endpoints`)}`;
  }
  const fleetEndpoint = async (): Promise<string> => `/webhook-endpoints/${await created('/webhook-endpoints')}`;

  type Call = { method: string; path: string; body?: unknown; shows?: string };
  /** Each route's request for a cell: typed by the policy's operationIds, so a new route cannot be left out. */
  const REQUESTS: Record<AdminOperationId, (kind: Kind, which: Which) => Promise<Call>> = {
    getCurrentToken: async () => ({ method: 'GET', path: '/token' }),
    listConsumers: async (k, w) => {
      const { name } = await consumerFor(k, w);
      return { method: 'GET', path: `/consumers?prefix=${name}`, shows: name };
    },
    getConsumer: async (k, w) => ({ method: 'GET', path: `/consumers/${(await consumerFor(k, w)).name}` }),
    createConsumer: async (_k, w) => ({
      method: 'POST',
      path: '/consumers',
      body: { name: unique('new'), plan: w === 'own' ? 'free' : 'business' },
    }),
    updateConsumer: async (k, w) => {
      const c = await consumerFor(k, w);
      return { method: 'PATCH', path: `/consumers/${c.name}`, body: { plan: c.plan } };
    },
    disableConsumer: async (k, w) => ({ method: 'POST', path: `/consumers/${(await consumerFor(k, w)).name}/disable` }),
    enableConsumer: async (k, w) => ({ method: 'POST', path: `/consumers/${(await consumerFor(k, w)).name}/enable` }),
    unbanConsumer: async (k, w) => ({ method: 'POST', path: `/consumers/${(await consumerFor(k, w)).name}/unban` }),
    issueKey: async (k, w) => ({ method: 'POST', path: `/consumers/${(await consumerFor(k, w)).name}/keys`, body: {} }),
    revokeConsumerKeys: async (k, w) => ({
      method: 'POST',
      path: `/consumers/${(await consumerFor(k, w)).name}/revoke`,
    }),
    revokeKey: async (k, w) => {
      const c = await consumerFor(k, w);
      return { method: 'POST', path: `/consumers/${c.name}/keys/${c.keyId}/revoke` };
    },
    rotateKey: async (k, w) => {
      const c = await consumerFor(k, w);
      return { method: 'POST', path: `/consumers/${c.name}/keys/${c.keyId}/rotate`, body: {} };
    },
    updateKey: async (k, w) => {
      const c = await consumerFor(k, w);
      return {
        method: 'PATCH',
        path: `/consumers/${c.name}/keys/${c.keyId}`,
        body: { allowedAddresses: ['10.1.0.0/16'] },
      };
    },
    updateClientBinding: async (k, w) => {
      const { name } = await consumerFor(k, w);
      const bound = await root('POST', `/consumers/${name}/client-bindings`, {
        issuer: ISSUER,
        clientId: unique('client'),
      });
      if (bound.status !== 201) throw new Error(`bind: ${bound.status} ${bound.text}`);
      return {
        method: 'PATCH',
        path: `/consumers/${name}/client-bindings/${(bound.body as { id: string }).id}`,
        body: { allowedAddresses: null },
      };
    },
    listClientBindings: async (k, w) => ({
      method: 'GET',
      path: `/consumers/${(await consumerFor(k, w)).name}/client-bindings`,
    }),
    createClientBinding: async (k, w) => ({
      method: 'POST',
      path: `/consumers/${(await consumerFor(k, w)).name}/client-bindings`,
      body: { issuer: ISSUER, clientId: unique('client') },
    }),
    deleteClientBinding: async (k, w) => {
      const { name } = await consumerFor(k, w);
      const bound = await root('POST', `/consumers/${name}/client-bindings`, {
        issuer: ISSUER,
        clientId: unique('client'),
      });
      if (bound.status !== 201) throw new Error(`bind: ${bound.status} ${bound.text}`);
      return { method: 'DELETE', path: `/consumers/${name}/client-bindings/${(bound.body as { id: string }).id}` };
    },
    getConsumerUsage: async (k, w) => ({ method: 'GET', path: `/consumers/${(await consumerFor(k, w)).name}/usage` }),
    getConsumerUsageHistory: async (k, w) => ({
      method: 'GET',
      path: `/consumers/${(await consumerFor(k, w)).name}/usage/history`,
    }),
    getConsumerBilling: async (k, w) => ({
      method: 'GET',
      path: `/consumers/${(await consumerFor(k, w)).name}/billing`,
    }),
    topUpConsumerCredits: async (k, w) => ({
      method: 'POST',
      path: `/consumers/${(await consumerFor(k, w)).name}/credits/top-ups`,
      body: { amount: 1, reason: 'policy test' },
    }),
    setConsumerCredits: async (k, w) => ({
      method: 'PUT',
      path: `/consumers/${(await consumerFor(k, w)).name}/credits`,
      body: { balance: 5, reason: 'policy test' },
    }),
    getConsumerCreditLedger: async (k, w) => ({
      method: 'GET',
      path: `/consumers/${(await consumerFor(k, w)).name}/credits/ledger`,
    }),
    updateConsumerBilling: async (k, w) => ({
      method: 'PATCH',
      path: `/consumers/${(await consumerFor(k, w)).name}/billing`,
      body: { perMonth: 1_000_000_000 },
    }),
    getFleetUsageHistory: async () => ({ method: 'GET', path: '/usage/history?granularity=day' }),
    getTopConsumers: async () => ({ method: 'GET', path: '/usage/top' }),
    exportUsage: async () => ({ method: 'GET', path: '/usage/export' }),
    importConsumers: async () => ({ method: 'POST', path: '/import', body: { consumers: [] } }),
    exportConsumers: async () => ({ method: 'GET', path: '/export' }),
    createAdminToken: async (_k, w) => ({
      method: 'POST',
      path: '/tokens',
      // other: a child that would outlive the unrestricted token (it expires in a day).
      body: {
        name: unique('new'),
        scopes: ['consumers:read'],
        ...(w === 'other' ? { expiresAt: new Date(Date.now() + 2 * DAY_MS).toISOString() } : {}),
      },
    }),
    listAdminTokens: async (_k, w) =>
      w === 'own'
        ? { method: 'GET', path: '/tokens' }
        : { method: 'GET', path: '/tokens', shows: tokens.unrestricted.id },
    revokeAdminToken: async (k, w) => ({ method: 'POST', path: `/tokens/${await tokenFor(k, w)}/revoke` }),
    listAuditEntries: async (k, w) => {
      const { name } = await consumerFor(k, w);
      return { method: 'GET', path: `/audit?target=${name}`, shows: name };
    },
    listPlanRequests: async (k, w) => {
      const { consumer: name } = await planRequestFor(k, w);
      return { method: 'GET', path: '/plan-requests?status=pending&limit=1000', shows: name };
    },
    createPlanRequest: async (k, w) => ({
      method: 'POST',
      path: '/plan-requests',
      body: { consumer: (await consumerFor(k, w)).name, requestedPlan: 'pro', expectedVolume: '1' },
    }),
    approvePlanRequest: async (k, w) => ({
      method: 'POST',
      path: `/plan-requests/${(await planRequestFor(k, w)).id}/approve`,
    }),
    declinePlanRequest: async (k, w) => ({
      method: 'POST',
      path: `/plan-requests/${(await planRequestFor(k, w)).id}/decline`,
      body: { note: 'no' },
    }),
    listWebhookEndpoints: async (k, w) => ({
      method: 'GET',
      path: `/consumers/${(await consumerFor(k, w)).name}/webhook-endpoints`,
    }),
    createWebhookEndpoint: async (k, w) => ({
      method: 'POST',
      path: `/consumers/${(await consumerFor(k, w)).name}/webhook-endpoints`,
      body: { url: HOOK_URL },
    }),
    getWebhookEndpoint: async (k, w) => ({ method: 'GET', path: await endpointFor(k, w) }),
    updateWebhookEndpoint: async (k, w) => ({
      method: 'PATCH',
      path: await endpointFor(k, w),
      body: { description: 'x' },
    }),
    deleteWebhookEndpoint: async (k, w) => ({ method: 'DELETE', path: await endpointFor(k, w) }),
    rotateWebhookEndpointSecret: async (k, w) => ({
      method: 'POST',
      path: `${await endpointFor(k, w)}/rotate-secret`,
    }),
    testWebhookEndpoint: async (k, w) => ({ method: 'POST', path: `${await endpointFor(k, w)}/test` }),
    listWebhookDeliveries: async (k, w) => ({ method: 'GET', path: `${await endpointFor(k, w)}/deliveries` }),
    redeliverWebhookDelivery: async (k, w) => {
      const endpoint = await endpointFor(k, w);
      const delivery = await root('POST', `${endpoint}/test`);
      return { method: 'POST', path: `${endpoint}/deliveries/${(delivery.body as { id: string }).id}/redeliver` };
    },
    listFleetWebhookEndpoints: async () => ({ method: 'GET', path: '/webhook-endpoints' }),
    createFleetWebhookEndpoint: async () => ({ method: 'POST', path: '/webhook-endpoints', body: { url: HOOK_URL } }),
    getFleetWebhookEndpoint: async () => ({ method: 'GET', path: await fleetEndpoint() }),
    updateFleetWebhookEndpoint: async () => ({
      method: 'PATCH',
      path: await fleetEndpoint(),
      body: { description: 'x' },
    }),
    deleteFleetWebhookEndpoint: async () => ({ method: 'DELETE', path: await fleetEndpoint() }),
    rotateFleetWebhookEndpointSecret: async () => ({ method: 'POST', path: `${await fleetEndpoint()}/rotate-secret` }),
    listFleetWebhookDeliveries: async () => ({ method: 'GET', path: `${await fleetEndpoint()}/deliveries` }),
    redeliverFleetWebhookDelivery: async () => {
      const endpoint = await fleetEndpoint();
      const delivery = await seedFleetDelivery(stack.gateway, endpoint.slice('/webhook-endpoints/'.length));
      return { method: 'POST', path: `${endpoint}/deliveries/${delivery}/redeliver` };
    },
    listFailingWebhookEndpoints: async () => ({ method: 'GET', path: '/webhook-endpoints/failing' }),
    testFleetWebhookEndpoint: async () => ({ method: 'POST', path: `${await fleetEndpoint()}/test` }),
    listThresholdEvents: async (k, w) => ({
      method: 'GET',
      path: `/consumers/${(await consumerFor(k, w)).name}/threshold-events`,
    }),
    recordAuditEvent: async (_k, w) => ({
      method: 'POST',
      path: '/audit/events',
      body: {
        kind: w === 'own' ? 'sign-in' : 'sign-in-failed',
        subject: unique('account:dev'),
        address: '203.0.113.7',
      },
    }),
    createPersonSession: async () => ({
      method: 'POST',
      path: '/sessions/oidc',
      body: { idToken: 'eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln' },
    }),
    endPersonSession: async () => ({ method: 'DELETE', path: '/sessions/current' }),
  };

  /** The token a kind calls with; `lacking` holds every scope but the route's. */
  async function tokenOf(kind: Kind, policy: RoutePolicy): Promise<string> {
    if (kind === 'root') return stack.gateway.adminToken;
    if (kind !== 'lacking') return tokens[kind].token;
    const scopes = ADMIN_SCOPES.filter((s) => typeof policy.scopes === 'string' || !policy.scopes.includes(s));
    const key = scopes.join(',');
    if (!lacking.has(key)) lacking.set(key, (await createToken({ name: unique('lacking'), scopes })).token);
    return lacking.get(key)!;
  }

  beforeAll(async () => {
    // No /v1 request here: the pets service is never called.
    const all = [...ADMIN_SCOPES];
    tokens.unrestricted = await createToken({
      name: unique('operator'),
      scopes: all,
      expiresAt: new Date(Date.now() + DAY_MS).toISOString(),
    });
    tokens.own = await createToken({
      name: unique('portal'),
      scopes: all,
      ownConsumersOnly: true,
      plans: OWN_PLANS,
      actsForUsers: true,
    });
    tokens.plans = await createToken({ name: unique('plans'), scopes: all, plans: PLANS_PLANS });
    tokens.revoked = await createToken({ name: unique('revoked'), scopes: all });
    expect((await root('POST', `/tokens/${tokens.revoked.id}/revoke`)).status).toBe(200);
    tokens.expired = await createToken({
      name: unique('expired'),
      scopes: all,
      expiresAt: new Date(clock.now() + 1500).toISOString(),
    });
    // Past the expiry and the token cache's 0.5 s, on the gateway's clock.
    clock.advance(2200);
  });

  it('has an entry for every admin route of the OpenAPI document, and a route for every entry', async () => {
    const doc = (await root('GET', '/docs-json')).body as {
      paths: Record<string, Record<string, { operationId: string; 'x-object-restriction'?: { rule: string } }>>;
    };
    const operations = Object.values(doc.paths).flatMap((item) => Object.values(item));
    expect(operations.map((op) => op.operationId).sort()).toEqual(Object.keys(ADMIN_POLICY).sort());
    for (const op of operations)
      expect(op['x-object-restriction']?.rule).toBe(ADMIN_POLICY[op.operationId as AdminOperationId].objects);
  });

  // The findings of issue #36 (2, 3, 4), each as an attacker made it.
  it('a restricted token sets no limits of its own (create, update, approval), whatever its plan', async () => {
    const huge = { perMinute: 1e9, perDay: 1e9 };
    for (const kind of ['own', 'plans'] as const) {
      const { token } = tokens[kind];
      expectErrorBody(await as(token, 'POST', '/consumers', { plan: 'free', limits: huge }), 403, 'FORBIDDEN');
      const mine = await consumerFor(kind, 'own');
      expectErrorBody(await as(token, 'PATCH', `/consumers/${mine.name}`, { limits: huge }), 403, 'FORBIDDEN');
      expect((await root('GET', `/consumers/${mine.name}`)).body).toMatchObject({ limits: null });
    }
    const { id } = await planRequestFor('plans', 'own');
    const approved = await as(tokens.plans.token, 'POST', `/plan-requests/${id}/approve`, {
      perMinute: 1e9,
      perDay: 1e9,
    });
    expectErrorBody(approved, 403, 'FORBIDDEN');
  });

  it('an own-consumers token with audit:read reads only the rows about its own consumers', async () => {
    await consumer('free');
    await consumerFor('own', 'own');
    const own = (await as(tokens.own.token, 'GET', '/consumers?limit=1000')).body as { items: Array<{ name: string }> };
    const mine = new Set(own.items.map((c) => c.name));
    const rows = (await as(tokens.own.token, 'GET', '/audit?limit=1000&order=desc')).body as {
      items: Array<{ targetConsumer: string | null }>;
    };
    expect(rows.items.length).toBeGreaterThan(0);
    expect(rows.items.filter((r) => r.targetConsumer === null || !mine.has(r.targetConsumer))).toEqual([]);
  });

  it('import needs consumers:write and keys:write besides import: an import-only token moves no consumer', async () => {
    const victim = await consumer('free');
    const file = { consumers: [{ name: victim.name, plan: 'enterprise', limits: { perMinute: 1e9, perDay: 1e9 } }] };
    const importOnly = await createToken({ name: unique('import'), scopes: ['import'] });
    expectErrorBody(await as(importOnly.token, 'POST', '/import', file), 403, 'FORBIDDEN');
    expect((await root('GET', `/consumers/${victim.name}`)).body).toMatchObject({ plan: 'free' });
    const importer = await createToken({
      name: unique('importer'),
      scopes: ['import', 'consumers:write', 'keys:write'],
    });
    expect((await as(importer.token, 'POST', '/import', file)).status).toBe(200);
  });

  it('a child token never outlives nor outranks its creator, and dies with it', async () => {
    const expiresAt = new Date(Date.now() + 60 * 60 * 1000).toISOString();
    const parent = await createToken({ name: unique('parent'), scopes: ['tokens:admin', 'consumers:read'], expiresAt });
    const forever = await as(parent.token, 'POST', '/tokens', { name: unique('child'), scopes: ['consumers:read'] });
    expect(forever.status).toBe(201);
    // Without an expiry of its own, a child expires with its creator.
    expect(Date.parse((forever.body as { record: { expiresAt: string } }).record.expiresAt)).toBe(
      Date.parse(expiresAt),
    );
    const later = new Date(Date.parse(expiresAt) + 1000).toISOString();
    expectErrorBody(
      await as(parent.token, 'POST', '/tokens', { name: unique('c'), scopes: ['consumers:read'], expiresAt: later }),
      403,
      'FORBIDDEN',
    );
    expectErrorBody(
      await as(parent.token, 'POST', '/tokens', { name: unique('c'), scopes: ['audit:read'] }),
      403,
      'FORBIDDEN',
    );
    const child = await createToken(
      { name: unique('child'), scopes: ['tokens:admin', 'consumers:read'] },
      parent.token,
    );
    const grandchild = await createToken({ name: unique('grandchild'), scopes: ['consumers:read'] }, child.token);
    expect((await as(grandchild.token, 'GET', '/consumers?limit=1')).status).toBe(200);
    expect((await root('POST', `/tokens/${parent.id}/revoke`)).status).toBe(200);
    // Every instance trusts what it read of a token for 0.5 s: within 3 s (a loaded machine), both are refused.
    const deadline = Date.now() + 3000;
    let statuses: number[];
    do {
      statuses = [
        (await as(child.token, 'GET', '/token')).status,
        (await as(grandchild.token, 'GET', '/token')).status,
      ];
      if (statuses.every((s) => s === 401)) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    } while (Date.now() < deadline);
    expect(statuses).toEqual([401, 401]);
  });

  it("a narrow tokens:admin token revokes no broader token, nor the portal's", async () => {
    const narrow = await createToken({ name: unique('narrow'), scopes: ['tokens:admin'] });
    for (const target of [tokens.unrestricted.id, tokens.own.id, tokens.plans.id])
      expectErrorBody(await as(narrow.token, 'POST', `/tokens/${target}/revoke`), 403, 'FORBIDDEN');
    expect((await as(tokens.own.token, 'GET', '/token')).status).toBe(200);
  });

  const cells = (Object.keys(ADMIN_POLICY) as AdminOperationId[]).flatMap((id) =>
    KINDS.map((kind) => [id, kind] as const),
  );
  it.each(cells)('%s as a %s token: own and other object', async (id, kind) => {
    const policy: RoutePolicy = ADMIN_POLICY[id];
    const token = await tokenOf(kind, policy);
    for (const which of ['own', 'other'] as const) {
      const { method, path, body, shows } = await REQUESTS[id](kind, which);
      const reply: Reply = await as(token, method, path, body ?? (method === 'GET' ? undefined : {}));
      const want = expected(policy, kind, which);
      const where = `${id} ${kind}/${which}: ${method} ${path} → ${reply.status} ${reply.text.slice(0, 200)}`;
      if (want.status === '2xx') expect(reply.status >= 200 && reply.status < 300 ? 'ok' : where).toBe('ok');
      else {
        expect(reply.status === want.status ? 'ok' : where).toBe('ok');
        expectErrorBody(reply, want.status);
      }
      if (want.listed !== undefined && shows !== undefined)
        expect([where, reply.text.includes(shows)]).toEqual([where, want.listed]);
    }
  });
});
