import { randomBytes } from 'node:crypto';
import { adminCall } from '../../support/gateway';
import { expectErrorBody } from '../../support/http';
import { withStack } from '../../support/with-stack';

const unique = (prefix: string) => `${prefix}-${randomBytes(4).toString('hex')}`;
const HOOK_URL = 'http://127.0.0.1:9/hook';

/**
 * The webhook endpoints' admin routes (docs/webhooks.md): bad input gets a 400 naming the rule and saves nothing, a
 * target the outbound policy refuses is refused when saved, the secret is shown in full once (create, rotate) and
 * masked everywhere else (and never in the audit), and the portal's kind of token (own consumers only) reaches
 * neither another consumer's endpoints nor the fleet-wide ones.
 */
describe('webhook endpoints through the admin API', () => {
  const stack = withStack({
    petsUrl: 'http://127.0.0.1:9',
    database: true,
    gateway: { env: { OUTBOUND_ALLOW_LIST: '127.0.0.1/32', WEBHOOKS_ENABLED: 'false', WEBHOOK_MAX_ENDPOINTS: '2' } },
  });
  const admin = (method: string, path: string, body?: unknown, token?: string) =>
    adminCall(stack.gateway, method, path, body, token);
  const consumer = async (token?: string): Promise<string> => {
    const name = unique('c');
    expect((await admin('POST', '/consumers', { name, plan: 'free' }, token)).status).toBe(201);
    return name;
  };

  it('refuses bad input with a 400 naming the rule, and keeps nothing', async () => {
    const name = await consumer();
    const base = `/consumers/${name}/webhook-endpoints`;
    const cases: Array<[unknown, string]> = [
      [{}, 'url is required'],
      [{ url: 'ftp://files.example' }, 'url must be an absolute http: or https: URL'],
      [{ url: 42 }, 'url must be an absolute http: or https: URL'],
      [{ url: HOOK_URL, eventTypes: [] }, 'eventTypes must name at least one type (null: every type)'],
      [
        { url: HOOK_URL, eventTypes: ['pet.created'] },
        'each event type must be one of quota.threshold_crossed, credits.low_balance, credits.exhausted',
      ],
      [{ url: HOOK_URL, eventTypes: 'quota.threshold_crossed' }, 'eventTypes must be an array or null'],
      [{ url: HOOK_URL, description: 'x'.repeat(201) }, 'description must be at most 200 characters'],
    ];
    for (const [body, message] of cases) {
      const reply = await admin('POST', base, body);
      expectErrorBody(reply, 400, 'VALIDATION_FAILED');
      expect([body, (reply.body as { message: string }).message]).toEqual([body, message]);
    }
    expect((await admin('GET', base)).body).toEqual({ items: [] });
    expectErrorBody(await admin('PATCH', `${base}/not-a-uuid`, {}), 400, 'VALIDATION_FAILED');
    expectErrorBody(await admin('GET', `${base}/00000000-0000-4000-8000-000000000000`), 404, 'NOT_FOUND');
  });

  it('shows the secret in full only when created and rotated, never in a list, a read or the audit', async () => {
    const name = await consumer();
    const base = `/consumers/${name}/webhook-endpoints`;
    const created = (await admin('POST', base, { url: HOOK_URL, eventTypes: ['credits.exhausted'] })).body as {
      id: string;
      secret: string;
      eventTypes: string[];
    };
    expect(created.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(created.eventTypes).toEqual(['credits.exhausted']);
    const masked = `whsec_…${created.secret.slice(-4)}`;
    expect((await admin('GET', `${base}/${created.id}`)).body).toMatchObject({ secret: masked });
    expect((await admin('GET', base)).body).toMatchObject({ items: [{ id: created.id, secret: masked }] });
    const rotated = (await admin('POST', `${base}/${created.id}/rotate-secret`)).body as { secret: string };
    expect(rotated.secret).toMatch(/^whsec_/);
    expect(rotated.secret).not.toBe(created.secret);
    expect((await admin('GET', `${base}/${created.id}`)).body).toMatchObject({
      secret: `whsec_…${rotated.secret.slice(-4)}`,
    });
    const audit = await admin('GET', `/audit?target=${name}&limit=100`);
    expect(audit.text).toContain('webhook-endpoint.rotate-secret');
    expect(audit.text).not.toContain(created.secret.slice(6));
    expect(audit.text).not.toContain(rotated.secret.slice(6));
    // Changed, disabled, enabled again, removed.
    expect((await admin('PATCH', `${base}/${created.id}`, { eventTypes: null, enabled: false })).body).toMatchObject({
      eventTypes: null,
      enabled: false,
      disabledReason: 'disabled by root',
    });
    expect((await admin('PATCH', `${base}/${created.id}`, { enabled: true })).body).toMatchObject({
      enabled: true,
      disabledAt: null,
    });
    expect((await admin('DELETE', `${base}/${created.id}`)).status).toBe(204);
    expectErrorBody(await admin('GET', `${base}/${created.id}`), 404, 'NOT_FOUND');
  });

  it('refuses a target the outbound policy refuses with WEBHOOK_TARGET_REFUSED, its class in the message and details', async () => {
    const name = await consumer();
    const base = `/consumers/${name}/webhook-endpoints`;
    const refused = 'url is not a target webhooks may be sent to';
    const cases: Array<[string, string, string]> = [
      ['http://169.254.169.254/', 'metadata', `${refused} (metadata): 169.254.169.254: metadata address, refused`],
      ['http://10.1.2.3/', 'private', `${refused} (private): 10.1.2.3: private address, refused`],
      ['http://[::1]:9/', 'loopback', `${refused} (loopback): ::1: loopback address, refused`],
      [
        'http://user:pw@127.0.0.1:9/',
        'invalid_url',
        `${refused} (invalid_url): credentials in the URL are not sent anywhere: remove them`,
      ],
      ['https://no-such-host.invalid/', 'unresolvable', expect.stringMatching(`^${refused} \\(unresolvable\\): `)],
    ];
    for (const [url, reason, message] of cases) {
      for (const reply of [await admin('POST', base, { url }), await admin('POST', '/webhook-endpoints', { url })]) {
        expectErrorBody(reply, 400, 'WEBHOOK_TARGET_REFUSED');
        expect([url, reply.body]).toEqual([
          url,
          { code: 'WEBHOOK_TARGET_REFUSED', message, status: 400, details: { reason } },
        ]);
      }
    }
    // A change of URL is checked the same way, and changes nothing.
    const created = (await admin('POST', base, { url: HOOK_URL })).body as { id: string };
    const patched = await admin('PATCH', `${base}/${created.id}`, { url: 'http://10.1.2.3/' });
    expectErrorBody(patched, 400, 'WEBHOOK_TARGET_REFUSED');
    expect((patched.body as { details: unknown }).details).toEqual({ reason: 'private' });
    expect((await admin('GET', base)).body).toEqual({ items: [expect.objectContaining({ url: HOOK_URL })] });
  });

  it('lists a disabled endpoint among the failing ones, with no last attempt before any was made', async () => {
    const base = `/consumers/${await consumer()}/webhook-endpoints`;
    const { id } = (await admin('POST', base, { url: HOOK_URL })).body as { id: string };
    expect((await admin('PATCH', `${base}/${id}`, { enabled: false })).status).toBe(200);
    const { items } = (await admin('GET', '/webhook-endpoints/failing')).body as { items: Array<{ id: string }> };
    expect(items.find((e) => e.id === id)).toMatchObject({
      enabled: false,
      lastError: null,
      lastStatus: null,
      lastAttemptAt: null,
    });
  });

  it('holds a consumer to WEBHOOK_MAX_ENDPOINTS', async () => {
    const base = `/consumers/${await consumer()}/webhook-endpoints`;
    for (let i = 0; i < 2; i += 1) expect((await admin('POST', base, { url: HOOK_URL })).status).toBe(201);
    expectErrorBody(await admin('POST', base, { url: HOOK_URL }), 409, 'WEBHOOK_ENDPOINT_LIMIT');
  });

  it("the portal's kind of token reaches its own consumers' endpoints only, never the fleet-wide ones", async () => {
    const portal = (
      (
        await admin('POST', '/tokens', {
          name: unique('portal'),
          scopes: ['consumers:read', 'consumers:write', 'webhooks:read', 'webhooks:write'],
          ownConsumersOnly: true,
          plans: ['free'],
        })
      ).body as { token: string }
    ).token;
    const mine = await consumer(portal);
    const theirs = await consumer();
    const theirEndpoint = (
      (await admin('POST', `/consumers/${theirs}/webhook-endpoints`, { url: HOOK_URL })).body as { id: string }
    ).id;
    const delivery = (
      (await admin('POST', `/consumers/${theirs}/webhook-endpoints/${theirEndpoint}/test`)).body as { id: string }
    ).id;
    const own = await admin('POST', `/consumers/${mine}/webhook-endpoints`, { url: HOOK_URL }, portal);
    expect(own.status).toBe(201);
    expect((await admin('GET', `/consumers/${mine}/webhook-endpoints`, undefined, portal)).status).toBe(200);
    for (const [method, path] of [
      ['GET', `/consumers/${theirs}/webhook-endpoints`],
      ['GET', `/consumers/${theirs}/webhook-endpoints/${theirEndpoint}`],
      ['GET', `/consumers/${theirs}/webhook-endpoints/${theirEndpoint}/deliveries`],
      ['POST', `/consumers/${theirs}/webhook-endpoints/${theirEndpoint}/rotate-secret`],
      ['POST', `/consumers/${theirs}/webhook-endpoints/${theirEndpoint}/deliveries/${delivery}/redeliver`],
      ['POST', `/webhook-endpoints/${theirEndpoint}/deliveries/${delivery}/redeliver`],
      ['GET', '/webhook-endpoints'],
      ['GET', '/webhook-endpoints/failing'],
      ['POST', '/webhook-endpoints'],
    ])
      expectErrorBody(
        await admin(
          method,
          path,
          method === 'POST' && path.endsWith('/webhook-endpoints') ? { url: HOOK_URL } : undefined,
          portal,
        ),
        403,
        'FORBIDDEN',
      );
    // Its own endpoint is not reachable under another consumer's name either.
    const ownId = (own.body as { id: string }).id;
    expectErrorBody(await admin('GET', `/consumers/${theirs}/webhook-endpoints/${ownId}`), 404, 'NOT_FOUND');
  });

  it('redelivers only a delivery to the endpoint the path names, of the consumer it names: any other is 404', async () => {
    // The portal's kind of token reaches every consumer it made: the path, not the token, keeps them apart.
    const portal = (
      (
        await admin('POST', '/tokens', {
          name: unique('portal'),
          scopes: ['consumers:read', 'consumers:write', 'webhooks:read', 'webhooks:write'],
          ownConsumersOnly: true,
          plans: ['free'],
        })
      ).body as { token: string }
    ).token;
    const [a, b] = [await consumer(portal), await consumer(portal)];
    const endpointOf = async (name: string) =>
      ((await admin('POST', `/consumers/${name}/webhook-endpoints`, { url: HOOK_URL }, portal)).body as { id: string })
        .id;
    const [endpointA, endpointB] = [await endpointOf(a), await endpointOf(b)];
    const sent = await admin('POST', `/consumers/${b}/webhook-endpoints/${endpointB}/test`, undefined, portal);
    expect(sent.status).toBe(202);
    const { id: deliveryB, webhookId } = sent.body as { id: string; webhookId: string };
    const deliveriesOfB = async () =>
      (
        (await admin('GET', `/consumers/${b}/webhook-endpoints/${endpointB}/deliveries`)).body as {
          items: Array<{ id: string; webhookId: string }>;
        }
      ).items;

    for (const path of [
      // B's delivery under A's name and A's endpoint,
      `/consumers/${a}/webhook-endpoints/${endpointA}/deliveries/${deliveryB}/redeliver`,
      // under A's name and B's endpoint,
      `/consumers/${a}/webhook-endpoints/${endpointB}/deliveries/${deliveryB}/redeliver`,
      // under B's name but A's endpoint.
      `/consumers/${b}/webhook-endpoints/${endpointA}/deliveries/${deliveryB}/redeliver`,
    ])
      expectErrorBody(await admin('POST', path, undefined, portal), 404, 'NOT_FOUND');
    // Nor under a fleet-wide endpoint's path, for a token of the whole fleet.
    const fleet = (await admin('POST', '/webhook-endpoints', { url: HOOK_URL })).body as { id: string };
    expectErrorBody(
      await admin('POST', `/webhook-endpoints/${fleet.id}/deliveries/${deliveryB}/redeliver`),
      404,
      'NOT_FOUND',
    );
    expect((await deliveriesOfB()).map((d) => d.id)).toEqual([deliveryB]);

    const again = await admin(
      'POST',
      `/consumers/${b}/webhook-endpoints/${endpointB}/deliveries/${deliveryB}/redeliver`,
      undefined,
      portal,
    );
    expect(again.status).toBe(202);
    expect(again.body).toMatchObject({ endpointId: endpointB, webhookId, state: 'pending' });
    expect((await deliveriesOfB()).map((d) => d.webhookId)).toEqual([webhookId, webhookId]);
  });
});
