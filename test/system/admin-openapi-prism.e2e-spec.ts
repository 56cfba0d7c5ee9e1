import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateApiKey, hashApiKey } from '../../apps/gateway/src/consumers/api-key';
import { GatewayUnderTest, startGateway } from '../support/gateway';
import { seedFleetDelivery } from '../support/webhook-deliveries';
import { expectFromUpstream, prismInstalled, PrismProxy, responseViolations, send, startPrism } from '../support/prism';
import { runIf } from '../support/skip';

/**
 * The admin API's document tells client generators and validators the truth (issue #22, point 7): a validating
 * proxy (Prism, --errors) in front of the real admin API finds no difference between what the document says and
 * what every operation answers, consumers without limits of their own (`limits: null`) and `PATCH {"limits":
 * null}` included; a doctored document proves the check is real.
 */
const ifPrism = runIf(prismInstalled, 'Stoplight Prism (node_modules/.bin/prism, from npm ci)');
ifPrism.describe("the admin API's OpenAPI document, checked by Stoplight Prism", () => {
  let gateway: GatewayUnderTest;
  let strict: PrismProxy;
  let reporting: PrismProxy;
  let doctored: PrismProxy;

  beforeAll(async () => {
    // Webhook endpoints on loopback's discard port: nothing listens, the worker's attempts fail (and are recorded).
    gateway = await startGateway({
      petsUrl: 'http://127.0.0.1:1',
      env: { OUTBOUND_ALLOW_LIST: '127.0.0.1/32', WEBHOOK_POLL_MS: '50' },
    });
    const dir = mkdtempSync(join(tmpdir(), 'admin-prism-'));
    const document = (await (await fetch(`${gateway.adminUrl}/docs-json`)).json()) as {
      components: { schemas: { ConsumerResponse: { required: string[]; properties: Record<string, unknown> } } };
    };
    const served = join(dir, 'admin-openapi.json');
    writeFileSync(served, JSON.stringify(document));
    // The same document with a lie in it (every consumer has a colour): Prism must catch it, or this test proves nothing.
    document.components.schemas.ConsumerResponse.required.push('colour');
    document.components.schemas.ConsumerResponse.properties.colour = { type: 'string' };
    const lying = join(dir, 'lying.json');
    writeFileSync(lying, JSON.stringify(document));
    [strict, reporting, doctored] = await Promise.all([
      startPrism(served, gateway.adminUrl, true),
      startPrism(served, gateway.adminUrl, false),
      startPrism(lying, gateway.adminUrl, true),
    ]);
  }, 120_000);
  afterAll(async () => {
    for (const proxy of [strict, reporting, doctored]) proxy?.process.kill('SIGTERM');
    await gateway?.close();
  });

  const auth = () => ({ authorization: `Bearer ${gateway.adminToken}` });
  const json = () => ({ ...auth(), 'content-type': 'application/json' });
  const post = (proxy: PrismProxy, path: string, body?: unknown) =>
    send(
      `${proxy.url}${path}`,
      body === undefined
        ? { method: 'POST', headers: auth() }
        : { method: 'POST', headers: json(), body: JSON.stringify(body) },
    );

  it('catches a response that breaks the document (the check is real)', async () => {
    const answer = await post(doctored, '/consumers', { name: 'doctored', plan: 'free' });
    expect(JSON.stringify(answer.body)).toContain('stoplight.io/prism/errors#VIOLATIONS');
  });

  it('lets every successful answer through, consumers without limits of their own (null) included', async () => {
    const created = await post(strict, '/consumers', { name: 'prism-free', plan: 'free' });
    expectFromUpstream(created, 201);
    expect((created.body as { consumer: { limits: unknown } }).consumer.limits).toBeNull();
    expectFromUpstream(
      await post(strict, '/consumers', {
        name: 'prism-big',
        plan: 'enterprise',
        limits: { perMinute: 5, perDay: 50 },
        expiresAt: '2099-01-01T00:00:00Z',
      }),
      201,
    );
    expectFromUpstream(await send(`${strict.url}/consumers?limit=10`, { headers: auth() }), 200);
    expectFromUpstream(await send(`${strict.url}/consumers/prism-free`, { headers: auth() }), 200);

    const patched = await send(`${strict.url}/consumers/prism-free`, {
      method: 'PATCH',
      headers: json(),
      body: JSON.stringify({ plan: 'pro', limits: { perMinute: 7, perDay: 70 } }),
    });
    expectFromUpstream(patched, 200);
    // Back to the plan's limits: the request and the answer (limits: null) both pass.
    const cleared = await send(`${strict.url}/consumers/prism-free`, {
      method: 'PATCH',
      headers: json(),
      body: JSON.stringify({ limits: null }),
    });
    expectFromUpstream(cleared, 200);
    expect((cleared.body as { limits: unknown }).limits).toBeNull();

    expectFromUpstream(await post(strict, '/consumers/prism-free/disable'), 200);
    expectFromUpstream(await post(strict, '/consumers/prism-free/enable'), 200);
    // Issue and rotate with no body at all (it is optional), and with one.
    const issued = await post(strict, '/consumers/prism-free/keys');
    expectFromUpstream(issued, 201);
    expectFromUpstream(await post(strict, '/consumers/prism-free/keys', { expiresAt: '2099-01-01T00:00:00Z' }), 201);
    const keyId = (issued.body as { id: string }).id;
    const rotated = await post(strict, `/consumers/prism-free/keys/${keyId}/rotate`);
    expectFromUpstream(rotated, 201);
    const successor = (rotated.body as { key: { id: string } }).key.id;
    expectFromUpstream(
      await post(strict, `/consumers/prism-free/keys/${successor}/rotate`, { overlapSeconds: 0 }),
      201,
    );
    expectFromUpstream(await post(strict, `/consumers/prism-free/keys/${keyId}/revoke`), 200);
    expectFromUpstream(await send(`${strict.url}/consumers/prism-free/usage`, { headers: auth() }), 200);
    expectFromUpstream(await post(strict, '/consumers/prism-free/unban'), 200);
    expectFromUpstream(await post(strict, '/consumers/prism-free/revoke'), 200);

    const file = {
      consumers: [
        {
          name: 'prism-file',
          plan: 'business',
          keys: [{ keyHash: hashApiKey(generateApiKey()), keyHint: 'petk_Zz…' }],
        },
      ],
    };
    expectFromUpstream(await post(strict, '/import', file), 200);
    const exported = await send(`${strict.url}/export?limit=2`, { headers: auth() });
    expectFromUpstream(exported, 200);
    expect((exported.body as { next: string | null }).next).not.toBeNull();
    expectFromUpstream(
      await send(`${strict.url}/export?after=${(exported.body as { next: string }).next}`, { headers: auth() }),
      200,
    );
    // Usage history (issue #23): buckets with null percentiles (no answers), the ranking, the CSV.
    expectFromUpstream(
      await send(`${strict.url}/consumers/prism-free/usage/history?granularity=day`, { headers: auth() }),
      200,
    );
    expectFromUpstream(await send(`${strict.url}/usage/history`, { headers: auth() }), 200);
    expectFromUpstream(await send(`${strict.url}/usage/top?by=rateLimited&limit=5`, { headers: auth() }), 200);
    const csv = await fetch(`${strict.url}/usage/export`, { headers: auth() });
    expect([csv.status, csv.headers.get('content-type'), (await csv.text()).split('\r\n')[0]]).toEqual([
      200,
      'text/csv; charset=utf-8',
      'consumer,start,requests,ok,client_errors,server_errors,rate_limited',
    ]);
  });

  it('lets the webhook routes through: endpoints (secret in full, then masked), deliveries with attempts, redelivery, failing, removal', async () => {
    expectFromUpstream(await post(strict, '/consumers', { name: 'prism-hooks', plan: 'free' }), 201);
    const base = '/consumers/prism-hooks/webhook-endpoints';
    const created = await post(strict, base, { url: 'http://127.0.0.1:9/hook', eventTypes: ['credits.exhausted'] });
    expectFromUpstream(created, 201);
    const id = (created.body as { id: string }).id;
    expectFromUpstream(await send(`${strict.url}${base}`, { headers: auth() }), 200);
    expectFromUpstream(await send(`${strict.url}${base}/${id}`, { headers: auth() }), 200);
    expectFromUpstream(
      await send(`${strict.url}${base}/${id}`, {
        method: 'PATCH',
        headers: json(),
        body: JSON.stringify({ eventTypes: null, description: 'ops' }),
      }),
      200,
    );
    expectFromUpstream(await post(strict, `${base}/${id}/rotate-secret`), 200);
    const test = await post(strict, `${base}/${id}/test`);
    expectFromUpstream(test, 202);
    // Its first attempt fails (nothing listens): a delivery with an attempt of null status.
    const deadline = Date.now() + 10_000;
    let page = await send(`${strict.url}${base}/${id}/deliveries`, { headers: auth() });
    while (
      (page.body as { items: Array<{ attemptCount: number }> }).items[0]?.attemptCount !== 1 &&
      Date.now() < deadline
    )
      page = await send(`${strict.url}${base}/${id}/deliveries?limit=5`, { headers: auth() });
    expectFromUpstream(page, 200);
    expect(
      (page.body as { items: Array<{ attempts: Array<{ statusCode: null }> }> }).items[0].attempts[0].statusCode,
    ).toBeNull();
    expectFromUpstream(
      await post(strict, `${base}/${id}/deliveries/${(test.body as { id: string }).id}/redeliver`),
      202,
    );
    expectFromUpstream(await send(`${strict.url}/webhook-endpoints/failing`, { headers: auth() }), 200);
    const fleet = await post(strict, '/webhook-endpoints', { url: 'http://127.0.0.1:9/fleet' });
    expectFromUpstream(fleet, 201);
    expectFromUpstream(await send(`${strict.url}/webhook-endpoints`, { headers: auth() }), 200);
    const fleetId = (fleet.body as { id: string }).id;
    expectFromUpstream(await send(`${strict.url}/webhook-endpoints/${fleetId}/deliveries`, { headers: auth() }), 200);
    const fleetDelivery = await seedFleetDelivery(gateway, fleetId, 'prism-hooks');
    expectFromUpstream(await post(strict, `/webhook-endpoints/${fleetId}/deliveries/${fleetDelivery}/redeliver`), 202);
    // No body: Prism lets a 204 through as it is.
    for (const path of [`/webhook-endpoints/${fleetId}`, `${base}/${id}`])
      expect((await send(`${strict.url}${path}`, { method: 'DELETE', headers: auth() })).status).toBe(204);
  });

  it('lets the error answers of valid requests through: 409 (a taken name, a key rotated twice), 404', async () => {
    expectFromUpstream(await post(strict, '/consumers', { name: 'prism-free', plan: 'free' }), 409, 'CONSUMER_EXISTS');
    const created = await post(strict, '/consumers', { name: 'prism-twice', plan: 'free' });
    const keyId = (created.body as { key: { id: string } }).key.id;
    expectFromUpstream(await post(strict, `/consumers/prism-twice/keys/${keyId}/rotate`, { overlapSeconds: 0 }), 201);
    expectFromUpstream(
      await post(strict, `/consumers/prism-twice/keys/${keyId}/rotate`, {}),
      409,
      'KEY_ALREADY_ROTATED',
    );
    expectFromUpstream(await send(`${strict.url}/consumers/nobody`, { headers: auth() }), 404, 'NOT_FOUND');
    expectFromUpstream(
      await post(strict, '/consumers/prism-twice/keys/00000000-0000-4000-8000-000000000000/revoke'),
      404,
      'NOT_FOUND',
    );
    expectFromUpstream(await send(`${strict.url}/consumers/nobody/usage`, { headers: auth() }), 404, 'NOT_FOUND');
    expectFromUpstream(
      await send(`${strict.url}/consumers/nobody/usage/history`, { headers: auth() }),
      404,
      'NOT_FOUND',
    );
    expectFromUpstream(
      await send(`${strict.url}/usage/top?from=2026-11-01T00:30:00Z`, { headers: auth() }),
      400,
      'VALIDATION_FAILED',
    );
  });

  it('reports no response violation on deliberately bad requests: 400, 401, 413, 415', async () => {
    const answers = [
      await send(`${reporting.url}/consumers?limit=0`, { headers: auth() }),
      await send(`${reporting.url}/import`, { method: 'POST', headers: json(), body: '{}' }),
      await send(`${reporting.url}/consumers`, {
        method: 'POST',
        headers: json(),
        body: JSON.stringify({ plan: 'enterprise', limits: { perMinute: 5 } }),
      }),
      await send(`${reporting.url}/consumers`),
      await send(`${reporting.url}/consumers`, { headers: { authorization: 'Bearer wrong' } }),
      await send(`${reporting.url}/import`, {
        method: 'POST',
        headers: json(),
        body: JSON.stringify({ consumers: [], padding: 'x'.repeat(1024 * 1024) }),
      }),
      await send(`${reporting.url}/consumers`, {
        method: 'POST',
        headers: { ...auth(), 'content-type': 'text/plain' },
        body: 'free',
      }),
    ];
    expect(answers.map((a) => a.status)).toEqual([400, 400, 400, 401, 401, 413, 415]);
    expect(answers.slice(1, 3).map((a) => (a.body as { message: string }).message)).toEqual([
      'consumers is required',
      'limits.perDay is required',
    ]);
    for (const answer of answers) expect(responseViolations(answer)).toEqual([]);
  });
});
