import { generateApiKey, hashApiKey, keyHint } from '../../../apps/gateway/src/consumers/api-key';
import { adminCall, GatewayUnderTest, mintKey } from '../../support/gateway';
import { call, expectErrorBody } from '../../support/http';
import { withStack } from '../../support/with-stack';

const pass = (gateway: GatewayUnderTest, key: string) =>
  call(`${gateway.url}/v1/pets?limit=1`, { headers: { authorization: `Bearer ${key}` } }).then((r) => r.status);

interface ConsumerView {
  name: string;
  plan: string;
  limits: unknown;
  createdAt: string;
  disabledAt: string | null;
  keys: Array<{ hint: string; state: string; createdAt: string; expiresAt: string | null; revokedAt: string | null }>;
}

/**
 * Issue #22: the import accepts the file a person would write (name, plan, optional limits and keys, each key
 * by its hash alone), keeps accepting the full form that export writes, and export round-trips every consumer,
 * disabled or keyless ones included. Two gateways, each with a consumers database of its own.
 */
describe('consumers file (import / export)', () => {
  const stack = withStack({
    pets: {},
    gateways: { source: { env: { DEMO_KEY: 'false' } }, target: { env: { DEMO_KEY: 'false' } } },
  });

  const get = async (gateway: GatewayUnderTest, name: string) =>
    (await adminCall(gateway, 'GET', `/consumers/${name}`)).body as ConsumerView;

  it('imports the minimal form: name, plan and a key hash', async () => {
    const key = generateApiKey();
    const file = { consumers: [{ name: 'minimal', plan: 'pro', keyHash: hashApiKey(key) }] };
    const reply = await adminCall(stack.source, 'POST', '/import', file);
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({ created: 1, updated: 0, unchanged: 0 });
    expect(await pass(stack.source, key)).toBe(200);
    const consumer = await get(stack.source, 'minimal');
    expect(consumer.keys).toHaveLength(1);
    // Without a hint (only the hash is known), one is made of the hash; created: now.
    expect(consumer.keys[0].hint).toBe(`sha256:${hashApiKey(key).slice(0, 8)}`);
    expect(Math.abs(Date.parse(consumer.keys[0].createdAt) - Date.now())).toBeLessThan(60_000);
    expect((await adminCall(stack.source, 'POST', '/import', file)).body).toEqual({
      created: 0,
      updated: 0,
      unchanged: 1,
    });
  });

  it('imports keys as a list without the top-level key fields, and a consumer without any key', async () => {
    const [first, second] = [generateApiKey(), generateApiKey()];
    const file = {
      consumers: [
        {
          name: 'listed',
          plan: 'enterprise',
          limits: { perMinute: 100, perDay: 1000 },
          keys: [
            { keyHash: hashApiKey(first) },
            {
              keyHash: hashApiKey(second),
              keyHint: keyHint(second),
              createdAt: '2026-01-01T00:00:00.000Z',
              expiresAt: '2099-01-01T00:00:00.000Z',
            },
          ],
        },
        { name: 'keyless', plan: 'free' },
      ],
    };
    expect((await adminCall(stack.source, 'POST', '/import', file)).body).toEqual({
      created: 2,
      updated: 0,
      unchanged: 0,
    });
    expect(await pass(stack.source, first)).toBe(200);
    expect(await pass(stack.source, second)).toBe(200);
    const listed = await get(stack.source, 'listed');
    expect(listed.keys.map((k) => k.hint).sort()).toEqual(
      [keyHint(second), `sha256:${hashApiKey(first).slice(0, 8)}`].sort(),
    );
    expect(listed.keys.find((k) => k.hint === keyHint(second))).toMatchObject({
      createdAt: '2026-01-01T00:00:00.000Z',
      expiresAt: '2099-01-01T00:00:00.000Z',
    });
    expect((await get(stack.source, 'keyless')).keys).toEqual([]);
    expect((await adminCall(stack.source, 'POST', '/import', file)).body).toEqual({
      created: 0,
      updated: 0,
      unchanged: 2,
    });
  });

  it('still imports the full form (top-level key fields, with or without a keys list)', async () => {
    const [one, two] = [generateApiKey(), generateApiKey()];
    const file = {
      consumers: [
        {
          name: 'full-single',
          plan: 'business',
          keyHash: hashApiKey(one),
          keyHint: keyHint(one),
          createdAt: '2026-01-01T00:00:00.000Z',
        },
        {
          name: 'full-both',
          plan: 'free',
          keyHash: hashApiKey(two),
          keyHint: keyHint(two),
          createdAt: '2026-01-02T00:00:00.000Z',
          keys: [{ keyHash: hashApiKey(two), keyHint: keyHint(two), createdAt: '2026-01-02T00:00:00.000Z' }],
        },
      ],
    };
    expect((await adminCall(stack.source, 'POST', '/import', file)).body).toEqual({
      created: 2,
      updated: 0,
      unchanged: 0,
    });
    expect(await pass(stack.source, one)).toBe(200);
    expect(await pass(stack.source, two)).toBe(200);
    expect((await get(stack.source, 'full-single')).createdAt).toBe('2026-01-01T00:00:00.000Z');
  });

  it('takes the same new file imported five times at once: every import answers 200, each consumer is made once', async () => {
    const file = {
      consumers: Array.from({ length: 3 }, (_, i) => ({
        name: `together-${i}`,
        plan: 'free',
        createdAt: '2026-01-01T00:00:00.000Z',
        keyHash: hashApiKey(generateApiKey()),
        keyHint: `petk_t${i}`,
      })),
    };
    const replies = await Promise.all(
      Array.from({ length: 5 }, () => adminCall(stack.source, 'POST', '/import', file)),
    );
    expect(replies.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
    expect(replies.reduce((sum, r) => sum + (r.body as { created: number }).created, 0)).toBe(3);
    for (let i = 0; i < 3; i += 1) expect((await get(stack.source, `together-${i}`)).keys).toHaveLength(1);
  });

  it.each([
    ['a key without its hash', { name: 'bad', plan: 'free', keys: [{ keyHint: 'petk_abcd…' }] }, 'keyHash'],
    ['a top-level hint without a hash', { name: 'bad', plan: 'free', keyHint: 'petk_abcd…' }, 'keyHash'],
    ['a consumer without a plan', { name: 'bad' }, 'plan'],
    ['a consumer without a name', { plan: 'free' }, 'name'],
  ])('refuses %s with 400', async (_case, consumer, field) => {
    const reply = await adminCall(stack.source, 'POST', '/import', { consumers: [consumer] });
    expectErrorBody(reply, 400, 'VALIDATION_FAILED');
    expect((reply.body as { message: string }).message).toContain(field);
  });

  it("carries a consumer's own alert thresholds both ways: exported, imported, cleared by null, checked like the billing route's", async () => {
    const alerts = { thresholdsPercent: [50, 90, 100], creditsLowBalance: 500 };
    await mintKey(stack.source, 'pro', 'with-alerts');
    expect((await adminCall(stack.source, 'PATCH', '/consumers/with-alerts/billing', { alerts })).status).toBe(200);
    const exported = (await adminCall(stack.source, 'GET', '/export?limit=1000')).body as {
      consumers: Array<Record<string, unknown>>;
    };
    const exportedFile = exported.consumers.find((c) => c.name === 'with-alerts')!;
    expect(exportedFile.alerts).toEqual(alerts);
    // Imported under another name, without the keys (their hashes are the original's): into the same database, so
    // that the round trip below still finds the target empty (and carries these thresholds across too).
    const file = { ...exportedFile, name: 'alerts-copy', keys: [] };
    // A consumer with none of its own writes no field (its plan's apply).
    await mintKey(stack.source, 'pro', 'without-alerts');
    const plain = ((await adminCall(stack.source, 'GET', '/export?limit=1000')).body as typeof exported).consumers.find(
      (c) => c.name === 'without-alerts',
    )!;
    expect(plain).not.toHaveProperty('alerts');

    const billingOf = async (name: string) =>
      ((await adminCall(stack.source, 'GET', `/consumers/${name}/billing`)).body as { alerts: unknown }).alerts;
    expect((await adminCall(stack.source, 'POST', '/import', { consumers: [file] })).body).toEqual({
      created: 1,
      updated: 0,
      unchanged: 0,
    });
    expect(await billingOf('alerts-copy')).toEqual(alerts);
    // The same file again changes nothing (the stored form compares equal, whatever the file's key order).
    const reordered = { ...file, alerts: { creditsLowBalance: 500, thresholdsPercent: [50, 90, 100] } };
    expect((await adminCall(stack.source, 'POST', '/import', { consumers: [reordered] })).body).toEqual({
      created: 0,
      updated: 0,
      unchanged: 1,
    });
    // One side replaces both (as the billing route does); absent leaves them; null clears them; each change audited.
    const oneSide = { ...file, alerts: { thresholdsPercent: [75] } };
    expect((await adminCall(stack.source, 'POST', '/import', { consumers: [oneSide] })).body).toMatchObject({
      updated: 1,
    });
    expect(await billingOf('alerts-copy')).toEqual({ thresholdsPercent: [75] });
    const { alerts: _left, ...absent } = file as Record<string, unknown>;
    expect((await adminCall(stack.source, 'POST', '/import', { consumers: [absent] })).body).toMatchObject({
      unchanged: 1,
    });
    expect(await billingOf('alerts-copy')).toEqual({ thresholdsPercent: [75] });
    expect(
      (await adminCall(stack.source, 'POST', '/import', { consumers: [{ ...file, alerts: null }] })).body,
    ).toMatchObject({ updated: 1 });
    expect(await billingOf('alerts-copy')).toBeNull();
    const audit = (await adminCall(stack.source, 'GET', '/audit?target=alerts-copy&action=import.update&order=desc'))
      .body as { items: Array<{ changes: Record<string, { before: unknown; after: unknown }> }> };
    expect(audit.items[0].changes.alerts).toEqual({ before: { thresholdsPercent: [75] }, after: null });

    // Validated like the billing route's, the whole batch refused: nothing of it is kept.
    const refusals: Array<[unknown, string]> = [
      [{ thresholdsPercent: [90, 50] }, 'alerts.thresholdsPercent must be in ascending order without repeats'],
      [{ thresholdsPercent: [0] }, 'alerts.thresholdsPercent must hold percents from 1 to 100'],
      [{ thresholdsPercent: [10, 20, 30, 40, 50, 60] }, 'alerts.thresholdsPercent takes at most 5 thresholds'],
      [{ creditsLowBalance: -1 }, 'alerts.creditsLowBalance must be at least 0'],
      ['high', 'alerts must be {"thresholdsPercent": [...], "creditsLowBalance": n} or null'],
    ];
    for (const [bad, message] of refusals) {
      const reply = await adminCall(stack.source, 'POST', '/import', {
        consumers: [{ name: 'bad-alerts', plan: 'pro', alerts: bad }],
      });
      expectErrorBody(reply, 400, 'VALIDATION_FAILED');
      expect([bad, (reply.body as { message: string }).message]).toEqual([bad, expect.stringContaining(message)]);
    }
    expectErrorBody(await adminCall(stack.source, 'GET', '/consumers/bad-alerts'), 404, 'NOT_FOUND');
  });

  it('round-trips every consumer through export and import: disabled, keyless, revoked and rotated keys included', async () => {
    const disabledKey = await mintKey(stack.source, 'pro', 'was-disabled');
    expect((await adminCall(stack.source, 'POST', '/consumers/was-disabled/disable')).status).toBe(200);
    const revokedKey = await mintKey(stack.source, 'free', 'was-revoked');
    expect((await adminCall(stack.source, 'POST', '/consumers/was-revoked/revoke')).status).toBe(200);
    await mintKey(stack.source, 'business', 'was-rotated');
    const [{ id }] = (await get(stack.source, 'was-rotated')).keys as unknown as Array<{ id: string }>;
    expect(
      (await adminCall(stack.source, 'POST', `/consumers/was-rotated/keys/${id}/rotate`, { overlapSeconds: 600 }))
        .status,
    ).toBe(201);

    const exported = (await adminCall(stack.source, 'GET', '/export?limit=1000')).body as {
      consumers: Array<Record<string, unknown>>;
      next: string | null;
    };
    expect(exported.next).toBeNull();
    expect(exported.consumers.find((c) => c.name === 'was-disabled')).toMatchObject({ disabledAt: expect.any(String) });
    expect((await adminCall(stack.target, 'POST', '/import', { consumers: exported.consumers })).body).toMatchObject({
      created: exported.consumers.length,
    });

    // The target now holds the same consumers: the same export, state for state.
    const again = (await adminCall(stack.target, 'GET', '/export?limit=1000')).body as { consumers: unknown[] };
    expect(again.consumers).toEqual(exported.consumers);
    expect((await get(stack.target, 'was-disabled')).disabledAt).toBe(
      (await get(stack.source, 'was-disabled')).disabledAt,
    );
    expect((await get(stack.target, 'keyless')).keys).toEqual([]);
    expectErrorBody(
      await call(`${stack.target.url}/v1/pets?limit=1`, { headers: { authorization: `Bearer ${disabledKey}` } }),
      401,
      'CONSUMER_DISABLED',
    );
    expectErrorBody(
      await call(`${stack.target.url}/v1/pets?limit=1`, { headers: { authorization: `Bearer ${revokedKey}` } }),
      401,
      'UNAUTHORIZED',
    );
    // Importing the export again changes nothing; it never enables a consumer disabled since (nor revives a key).
    expect((await adminCall(stack.target, 'POST', '/import', { consumers: exported.consumers })).body).toMatchObject({
      created: 0,
      updated: 0,
    });
  });

  it("carries allowed addresses, the consumer's and its keys', through export and import; null lifts them, absent leaves them", async () => {
    const key = await mintKey(stack.source, 'pro', 'fenced-file');
    await mintKey(stack.source, 'free', 'open-file');
    const [{ id }] = (await get(stack.source, 'fenced-file')).keys as unknown as Array<{ id: string }>;
    const patch = (path: string, allowedAddresses: string[]) =>
      adminCall(stack.source, 'PATCH', path, { allowedAddresses }).then((reply) => reply.status);
    expect(await patch('/consumers/fenced-file', ['10.1.0.0/16'])).toBe(200);
    expect(await patch(`/consumers/fenced-file/keys/${id}`, ['10.1.5.0/24'])).toBe(200);

    const exported = (await adminCall(stack.source, 'GET', '/export?limit=1000')).body as {
      consumers: Array<{ name: string; allowedAddresses?: unknown; keys: Array<{ allowedAddresses?: unknown }> }>;
    };
    const entry = exported.consumers.find((c) => c.name === 'fenced-file')!;
    expect(entry.allowedAddresses).toEqual(['10.1.0.0/16']);
    expect(entry.keys[0].allowedAddresses).toEqual(['10.1.5.0/24']);
    // Unrestricted ones write no field.
    expect(exported.consumers.find((c) => c.name === 'open-file')).not.toHaveProperty('allowedAddresses');

    const target = (file: unknown) => adminCall(stack.target, 'POST', '/import', { consumers: [file] });
    expect((await target(entry)).body).toEqual({ created: 1, updated: 0, unchanged: 0 });
    const imported = (await adminCall(stack.target, 'GET', '/consumers/fenced-file')).body as {
      allowedAddresses: string[] | null;
      keys: Array<{ allowedAddresses: string[] | null }>;
    };
    expect(imported.allowedAddresses).toEqual(['10.1.0.0/16']);
    expect(imported.keys[0].allowedAddresses).toEqual(['10.1.5.0/24']);
    // Applied where it was imported: the test's loopback address is outside them.
    expectErrorBody(
      await call(`${stack.target.url}/v1/pets?limit=1`, { headers: { authorization: `Bearer ${key}` } }),
      403,
      'ADDRESS_NOT_ALLOWED',
    );
    expect((await target(entry)).body).toEqual({ created: 0, updated: 0, unchanged: 1 });

    // null lifts the consumer's; a key's IPv4-mapped range is stored as the IPv4 one; absent fields change nothing.
    const { allowedAddresses: _dropped, ...withoutAddresses } = entry;
    expect(
      (
        await target({
          ...withoutAddresses,
          allowedAddresses: null,
          keys: [{ ...entry.keys[0], allowedAddresses: ['::ffff:127.0.0.0/104'] }],
        })
      ).body,
    ).toEqual({ created: 0, updated: 1, unchanged: 0 });
    const lifted = (await adminCall(stack.target, 'GET', '/consumers/fenced-file')).body as typeof imported;
    expect(lifted.allowedAddresses).toBeNull();
    expect(lifted.keys[0].allowedAddresses).toEqual(['127.0.0.0/8']);
    expect(
      (await call(`${stack.target.url}/v1/pets?limit=1`, { headers: { authorization: `Bearer ${key}` } })).status,
    ).toBe(200);
    const keysWithoutField = entry.keys.map(({ allowedAddresses: _ignored, ...rest }) => rest);
    expect((await target({ ...withoutAddresses, keys: keysWithoutField })).body).toEqual({
      created: 0,
      updated: 0,
      unchanged: 1,
    });
    const audit = (await adminCall(stack.target, 'GET', '/audit?target=fenced-file&action=import.update')).body as {
      items: Array<{ changes: Record<string, unknown> }>;
    };
    expect(audit.items.map((row) => row.changes.allowedAddresses)).toEqual([{ before: ['10.1.0.0/16'], after: null }]);

    // What is no address refuses the whole batch.
    expectErrorBody(await target({ ...entry, allowedAddresses: ['10.1'] }), 400, 'VALIDATION_FAILED');
    expectErrorBody(
      await target({ ...entry, keys: [{ ...entry.keys[0], allowedAddresses: [] }] }),
      400,
      'VALIDATION_FAILED',
    );
  });
});
