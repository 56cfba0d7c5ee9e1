import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { AppMetrics } from '@app/platform';
import { generateApiKey, hashApiKey, keyHint } from '../../../apps/gateway/src/consumers/api-key';
import { adminCall, GatewayUnderTest, mintKey, startGateway } from '../../support/gateway';
import { call, expectErrorBody, Reply } from '../../support/http';
import { withStack } from '../../support/with-stack';

const run = promisify(execFile);
const KEYS_CLI = join(__dirname, '../../../scripts/keys.js');

const withKey = (key: string) => ({ headers: { authorization: `Bearer ${key}` } });

/** Polls until `ok` or the deadline; returns the last reply and when it was seen (ms after the start). */
async function until(
  probe: () => Promise<Reply>,
  ok: (reply: Reply) => boolean,
  timeoutMs: number,
): Promise<{ reply: Reply; afterMs: number }> {
  const started = Date.now();
  let reply = await probe();
  while (!ok(reply) && Date.now() - started < timeoutMs) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    reply = await probe();
  }
  return { reply, afterMs: Date.now() - started };
}

async function storeQueries(gateway: GatewayUnderTest): Promise<number> {
  const metric = await gateway.app.get(AppMetrics).registry.getSingleMetric('gateway_key_store_queries_total')!.get();
  return metric.values.reduce((sum, v) => sum + v.value, 0);
}

/**
 * The control plane on the engine the run selects (embedded PGlite, or DATABASE_URL's server; Redis pub/sub
 * when REDIS_URL is set, LISTEN/NOTIFY otherwise): two gateway instances sharing one consumers database.
 */
describe('control plane: consumers and keys behind the admin API', () => {
  const stack = withStack({ pets: {}, database: true, sharedKeyPrefix: 'control', gateways: { a: {}, b: {} } });

  describe('admin API', () => {
    it('refuses a missing or wrong token with 401 on every route', async () => {
      for (const [method, path] of [
        ['GET', '/consumers'],
        ['POST', '/consumers'],
        ['GET', '/consumers/x/usage'],
        ['GET', '/export'],
        ['POST', '/import'],
      ]) {
        const missing = await adminCall(stack.a, method, path, method === 'POST' ? { plan: 'free' } : undefined, null);
        expectErrorBody(missing, 401, 'UNAUTHORIZED');
        expect(missing.headers.get('www-authenticate')).toMatch(/^Bearer/);
        expectErrorBody(
          await adminCall(stack.a, method, path, undefined, `${stack.a.adminToken.slice(0, -1)}x`),
          401,
          'UNAUTHORIZED',
        );
        // Another instance's token is not this one's.
        expectErrorBody(await adminCall(stack.a, method, path, undefined, stack.b.adminToken), 401, 'UNAUTHORIZED');
      }
    });

    it.each([
      ['an unknown plan', { plan: 'gold' }, 'plan must be one of'],
      ['a bad name', { plan: 'free', name: '-bad name' }, 'name must be'],
      ['an enterprise consumer without limits', { plan: 'enterprise' }, 'needs the consumer'],
      ['zero limits', { plan: 'pro', limits: { perMinute: 0, perDay: 10 } }, 'perMinute must be at least 1'],
      ['an unknown field', { plan: 'free', admin: true }, 'property admin should not exist'],
      ['an expiry in the past', { plan: 'free', expiresAt: '2001-01-01T00:00:00Z' }, 'expiresAt must be in the future'],
      ['a non-date expiry', { plan: 'free', expiresAt: 'tomorrow' }, 'expiresAt must be an ISO 8601 date-time'],
      ['malformed JSON', '{"plan": ', undefined],
    ])('refuses %s with 400', async (_case, body, message) => {
      const reply = await adminCall(stack.a, 'POST', '/consumers', body);
      expectErrorBody(reply, 400);
      if (message) expect((reply.body as { message: string }).message).toContain(message);
    });

    it('refuses a taken name with 409 CONSUMER_EXISTS, bad paging and key ids with 400, and an unknown consumer with 404', async () => {
      await mintKey(stack.a, 'free', 'taken');
      expectErrorBody(
        await adminCall(stack.a, 'POST', '/consumers', { plan: 'pro', name: 'taken' }),
        409,
        'CONSUMER_EXISTS',
      );
      expectErrorBody(await adminCall(stack.a, 'GET', '/consumers?limit=0'), 400, 'VALIDATION_FAILED');
      expectErrorBody(await adminCall(stack.a, 'GET', '/consumers?limit=abc'), 400, 'VALIDATION_FAILED');
      expectErrorBody(
        await adminCall(stack.a, 'POST', '/consumers/taken/keys/not-a-uuid/revoke'),
        400,
        'VALIDATION_FAILED',
      );
      expectErrorBody(
        await adminCall(stack.a, 'POST', '/consumers/taken/keys/00000000-0000-4000-8000-000000000000/rotate', {}),
        404,
        'NOT_FOUND',
      );
      expectErrorBody(await adminCall(stack.a, 'GET', '/consumers/nobody'), 404, 'NOT_FOUND');
      expectErrorBody(await adminCall(stack.a, 'GET', '/nowhere'), 404, 'NOT_FOUND');
    });

    it('serves its own OpenAPI document, apart from the public one', async () => {
      const admin = (await call(`${stack.a.adminUrl}/docs-json`)).body as {
        info: { title: string };
        paths: Record<string, unknown>;
      };
      expect(admin.info.title).toMatch(/admin/i);
      expect(Object.keys(admin.paths)).toEqual(
        expect.arrayContaining(['/consumers', '/consumers/{name}/keys/{keyId}/rotate', '/import', '/export']),
      );
      const publicDoc = (await call(`${stack.a.url}/docs-json`)).body as { paths: Record<string, unknown> };
      expect(Object.keys(publicDoc.paths).some((path) => path.includes('consumers'))).toBe(false);
    });

    it('pages consumers in name order', async () => {
      for (const name of ['page-a', 'page-b', 'page-c']) await mintKey(stack.a, 'free', name);
      const first = (await adminCall(stack.a, 'GET', '/consumers?limit=2&after=page-')).body as {
        items: Array<{ name: string }>;
        next: string;
      };
      expect(first.items.map((c) => c.name)).toEqual(['page-a', 'page-b']);
      const second = (await adminCall(stack.a, 'GET', `/consumers?limit=2&after=${first.next}`)).body as {
        items: Array<{ name: string }>;
      };
      expect(second.items[0].name).toBe('page-c');
    });

    it('filters consumers by name prefix, literally ("_" is no wildcard), paged the same way (the console\'s search)', async () => {
      for (const name of ['pfx_a', 'pfx_b', 'pfx_c', 'pfxXd']) await mintKey(stack.a, 'free', name);
      const first = (await adminCall(stack.a, 'GET', '/consumers?prefix=pfx_&limit=2')).body as {
        items: Array<{ name: string }>;
        next: string;
      };
      expect(first.items.map((c) => c.name)).toEqual(['pfx_a', 'pfx_b']);
      const second = (await adminCall(stack.a, 'GET', `/consumers?prefix=pfx_&limit=2&after=${first.next}`)).body as {
        items: Array<{ name: string }>;
        next: string | null;
      };
      expect(second).toEqual({ items: [expect.objectContaining({ name: 'pfx_c' })], next: null });
      expectErrorBody(await adminCall(stack.a, 'GET', '/consumers?prefix=%25'), 400, 'VALIDATION_FAILED');
    });
  });

  it('gives 100 working keys for 100 concurrent creations', async () => {
    const replies = await Promise.all(
      Array.from({ length: 100 }, (_, i) =>
        adminCall(i % 2 ? stack.a : stack.b, 'POST', '/consumers', { plan: 'pro', name: `burst-${i}` }),
      ),
    );
    expect(replies.map((r) => r.status)).toEqual(Array(100).fill(201));
    const keys = replies.map((r) => (r.body as { key: { key: string } }).key.key);
    expect(new Set(keys).size).toBe(100);
    const statuses = await Promise.all(
      keys.map((key, i) =>
        call(`${(i % 2 ? stack.b : stack.a).url}/v1/pets?limit=1`, withKey(key)).then((r) => r.status),
      ),
    );
    expect(statuses).toEqual(Array(100).fill(200));
  });

  it('has a revoked key refused by both instances within the documented 1 s (measured under 100 ms)', async () => {
    const key = await mintKey(stack.a, 'business', 'to-revoke');
    for (const gateway of [stack.a, stack.b])
      expect((await call(`${gateway.url}/v1/pets?limit=1`, withKey(key))).status).toBe(200);
    expect((await adminCall(stack.a, 'POST', '/consumers/to-revoke/revoke')).body).toHaveLength(1);
    // Idempotent: nothing left to revoke.
    expect((await adminCall(stack.a, 'POST', '/consumers/to-revoke/revoke')).body).toEqual([]);
    for (const gateway of [stack.a, stack.b]) {
      const { reply, afterMs } = await until(
        () => call(`${gateway.url}/v1/pets?limit=1`, withKey(key)),
        (r) => r.status === 401,
        1_000,
      );
      expectErrorBody(reply, 401, 'UNAUTHORIZED');
      expect(afterMs).toBeLessThanOrEqual(1_000);
    }
  });

  it('has a disabled consumer refused by both instances within the documented 1 s, and welcomed back when enabled', async () => {
    const key = await mintKey(stack.b, 'pro', 'to-disable');
    for (const gateway of [stack.a, stack.b])
      expect((await call(`${gateway.url}/v1/pets?limit=1`, withKey(key))).status).toBe(200);
    expect((await adminCall(stack.b, 'POST', '/consumers/to-disable/disable')).status).toBe(200);
    for (const gateway of [stack.a, stack.b]) {
      const { reply } = await until(
        () => call(`${gateway.url}/v1/pets?limit=1`, withKey(key)),
        (r) => r.status === 401,
        1_000,
      );
      // Told apart from a revoked key: its own code.
      expectErrorBody(reply, 401, 'CONSUMER_DISABLED');
    }
    expect((await adminCall(stack.b, 'POST', '/consumers/to-disable/enable')).status).toBe(200);
    for (const gateway of [stack.a, stack.b]) {
      expect(
        (
          await until(
            () => call(`${gateway.url}/v1/pets?limit=1`, withKey(key)),
            (r) => r.status === 200,
            1_000,
          )
        ).reply.status,
      ).toBe(200);
    }
  });

  it('has an expired key refused by both instances within the documented 1 s of its expiry, although cached', async () => {
    const expiresAt = new Date(Date.now() + 1_500);
    const created = await adminCall(stack.a, 'POST', '/consumers', {
      plan: 'pro',
      name: 'short-lived',
      expiresAt: expiresAt.toISOString(),
    });
    const key = (created.body as { key: { key: string } }).key.key;
    for (const gateway of [stack.a, stack.b])
      expect((await call(`${gateway.url}/v1/pets?limit=1`, withKey(key))).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, expiresAt.getTime() - Date.now())));
    for (const gateway of [stack.a, stack.b]) {
      const { reply, afterMs } = await until(
        () => call(`${gateway.url}/v1/pets?limit=1`, withKey(key)),
        (r) => r.status === 401,
        1_000,
      );
      expectErrorBody(reply, 401, 'UNAUTHORIZED');
      expect((reply.body as { message: string }).message).toBe('Expired API key.');
      expect(afterMs).toBeLessThanOrEqual(1_000);
    }
  });

  it('rotates a key: both work during the overlap, only the new one after', async () => {
    const old = await mintKey(stack.a, 'pro', 'rotating');
    for (const gateway of [stack.a, stack.b])
      expect((await call(`${gateway.url}/v1/pets?limit=1`, withKey(old))).status).toBe(200);
    const keyId = ((await adminCall(stack.a, 'GET', '/consumers/rotating')).body as { keys: Array<{ id: string }> })
      .keys[0].id;
    const rotated = await adminCall(stack.a, 'POST', `/consumers/rotating/keys/${keyId}/rotate`, { overlapSeconds: 2 });
    expect(rotated.status).toBe(201);
    const { key: issued, previous } = rotated.body as {
      key: { key: string };
      previous: { expiresAt: string; state: string };
    };
    const key = issued.key;
    expect(previous.state).toBe('active');
    for (const gateway of [stack.a, stack.b]) {
      expect((await call(`${gateway.url}/v1/pets?limit=1`, withKey(old))).status).toBe(200);
      expect((await call(`${gateway.url}/v1/pets?limit=1`, withKey(key))).status).toBe(200);
    }
    await new Promise((resolve) =>
      setTimeout(resolve, Math.max(0, new Date(previous.expiresAt).getTime() - Date.now())),
    );
    for (const gateway of [stack.a, stack.b]) {
      expect(
        (
          await until(
            () => call(`${gateway.url}/v1/pets?limit=1`, withKey(old)),
            (r) => r.status === 401,
            1_000,
          )
        ).reply.status,
      ).toBe(401);
      expect((await call(`${gateway.url}/v1/pets?limit=1`, withKey(key))).status).toBe(200);
    }
    // Both keys count against the one consumer: usage reads the shared counters.
    const usage = (await adminCall(stack.b, 'GET', '/consumers/rotating/usage')).body as {
      windows: Array<{ name: string; used: number; limit: number; remaining: number }>;
      banned: boolean;
    };
    const minute = usage.windows.find((w) => w.name === 'minute')!;
    expect(minute.used).toBeGreaterThanOrEqual(4);
    expect(minute.remaining).toBe(minute.limit - minute.used);
    expect(usage.banned).toBe(false);
  });

  it('reports usage without counting it', async () => {
    const key = await mintKey(stack.a, 'enterprise', 'measured', { perMinute: 5, perDay: 100 });
    for (let i = 0; i < 3; i += 1)
      expect((await call(`${stack.a.url}/v1/pets?limit=1`, withKey(key))).status).toBe(200);
    for (let i = 0; i < 3; i += 1) {
      const usage = (await adminCall(stack.a, 'GET', '/consumers/measured/usage')).body as {
        windows: Array<{ name: string; used: number; remaining: number; resetSeconds: number }>;
      };
      expect(usage.windows.map((w) => [w.name, w.used, w.remaining])).toEqual([
        ['minute', 3, 2],
        ['day', 3, 97],
      ]);
      expect(usage.windows[0].resetSeconds).toBeGreaterThan(0);
    }
  });

  it('imports a consumers file idempotently and exports it back (hashes only)', async () => {
    const key = generateApiKey();
    const file = {
      consumers: [
        {
          name: 'from-file',
          plan: 'business',
          keyHash: hashApiKey(key),
          keyHint: keyHint(key),
          createdAt: '2026-01-01T00:00:00.000Z',
        },
        {
          name: 'from-file-big',
          plan: 'enterprise',
          keyHash: hashApiKey(generateApiKey()),
          keyHint: 'petk_x…',
          createdAt: '2026-01-02T00:00:00.000Z',
          limits: { perMinute: 9, perDay: 99 },
        },
        {
          name: 'from-file-gone',
          plan: 'free',
          keyHash: hashApiKey(generateApiKey()),
          keyHint: 'petk_y…',
          createdAt: '2026-01-03T00:00:00.000Z',
          revokedAt: '2026-02-01T00:00:00.000Z',
        },
      ],
    };
    expect((await adminCall(stack.a, 'POST', '/import', file)).body).toEqual({ created: 3, updated: 0, unchanged: 0 });
    expect((await adminCall(stack.a, 'POST', '/import', file)).body).toEqual({ created: 0, updated: 0, unchanged: 3 });
    expect((await call(`${stack.b.url}/v1/pets?limit=1`, withKey(key))).status).toBe(200);

    const exported = (await adminCall(stack.a, 'GET', '/export?after=from-file&limit=1')).body as {
      consumers: Array<Record<string, unknown>>;
    };
    expect(exported.consumers[0]).toMatchObject({
      name: 'from-file-big',
      plan: 'enterprise',
      limits: { perMinute: 9, perDay: 99 },
    });
    const all = await adminCall(stack.a, 'GET', '/export?limit=1000');
    expect(all.text).not.toContain(key);
    // A hash held by another consumer is refused, and the batch with it.
    const stolen = { consumers: [{ ...file.consumers[0], name: 'thief' }] };
    expectErrorBody(await adminCall(stack.a, 'POST', '/import', stolen), 409, 'KEY_OF_ANOTHER_CONSUMER');
    expectErrorBody(await adminCall(stack.a, 'GET', '/consumers/thief'), 404, 'NOT_FOUND');
  });

  describe('keys CLI (a client of the admin API)', () => {
    const cli = async (...args: string[]) => {
      const { stdout } = await run(process.execPath, [KEYS_CLI, ...args], {
        env: { ...process.env, ADMIN_URL: stack.a.adminUrl, ADMIN_TOKEN: stack.a.adminToken },
      });
      return stdout.trim().split('\n');
    };

    it("keeps today's commands and output: create prints the key last, list, revoke NAME", async () => {
      const key = (await cli('create', '--plan', 'pro', '--name', 'cli-acme')).at(-1)!;
      expect((await call(`${stack.b.url}/v1/pets?limit=1`, withKey(key))).status).toBe(200);
      const listed = (await cli('list')).join('\n');
      expect(listed).toContain('cli-acme\tpro\t300/min 10000/day\tpetk_');
      expect(listed).not.toMatch(/[0-9a-f]{64}/);
      expect((await cli('revoke', 'cli-acme'))[0]).toContain('Revoked 1 key(s) of "cli-acme"');
      expect(
        await until(
          () => call(`${stack.b.url}/v1/pets?limit=1`, withKey(key)),
          (r) => r.status === 401,
          1_000,
        ).then((r) => r.reply.status),
      ).toBe(401);
      expect((await cli('list')).join('\n')).toMatch(/cli-acme\t.*revoked/);
      await expect(cli('create', '--plan', 'enterprise', '--name', 'cli-big')).rejects.toMatchObject({
        code: 2,
        stderr: expect.stringContaining('needs its agreed limits'),
      });
      await expect(cli('create', '--plan', 'pro', '--name', 'cli-acme')).rejects.toMatchObject({
        code: 1,
        stderr: expect.stringContaining('already exists'),
      });
    });

    it('rotates, reports usage, exports and re-imports', async () => {
      const old = (await cli('create', '--plan', 'free', '--name', 'cli-rot')).at(-1)!;
      const fresh = (await cli('rotate', 'cli-rot', '--overlap', '60')).at(-1)!;
      expect(fresh).not.toBe(old);
      for (const key of [old, fresh])
        expect((await call(`${stack.a.url}/v1/pets?limit=1`, withKey(key))).status).toBe(200);
      expect((await cli('usage', 'cli-rot'))[0]).toMatch(/^minute\t2\/60 used\t58 remaining/);
      const dir = mkdtempSync(join(tmpdir(), 'keys-cli-'));
      await cli('export', join(dir, 'consumers.json'));
      const exported = JSON.parse(readFileSync(join(dir, 'consumers.json'), 'utf8')) as {
        consumers: Array<{ name: string }>;
      };
      expect(exported.consumers.map((c) => c.name)).toContain('cli-rot');
      expect((await cli('import', join(dir, 'consumers.json')))[0]).toMatch(/0 created, 0 updated, \d+ unchanged/);
      writeFileSync(join(dir, 'broken.json'), '{"consumers": [');
      await expect(cli('import', join(dir, 'broken.json'))).rejects.toMatchObject({ code: 2 });
    });

    /** The CLI's failure: its exit code and what it wrote to stderr. */
    const refused = (...args: string[]) =>
      cli(...args).then(
        () => ({ code: 0, stderr: '' }),
        (error: { code: number; stderr: string }) => ({ code: error.code, stderr: error.stderr }),
      );
    const keysOf = async (name: string) =>
      (
        (await adminCall(stack.a, 'GET', `/consumers/${name}`)).body as {
          keys: Array<{ id: string; state: string; expiresAt: string | null }>;
        }
      ).keys;
    const works = (key: string) => call(`${stack.b.url}/v1/pets?limit=1`, withKey(key)).then((r) => r.status);
    const refusedWithin = (key: string) =>
      until(
        () => call(`${stack.b.url}/v1/pets?limit=1`, withKey(key)),
        (r) => r.status === 401,
        1_000,
      ).then((r) => r.reply.status);

    it('lists key ids, issues another key, and rotates or revokes the key named (an ambiguous rotate names the ids)', async () => {
      const first = (await cli('create', '--plan', 'pro', '--name', 'cli-keys')).at(-1)!;
      const [firstId] = (await keysOf('cli-keys')).map((k) => k.id);
      expect((await cli('list')).filter((line) => line.includes(firstId))).toEqual([
        expect.stringMatching(new RegExp(`^\\s+key ${firstId}\\tpetk_.*\\tactive$`)),
      ]);

      const issued = await cli('issue', 'cli-keys', '--expires', '2099-01-01T00:00:00Z');
      expect(issued[0]).toContain('Issued another key to "cli-keys"');
      expect(issued[0]).toContain('2099-01-01T00:00:00.000Z');
      const second = issued.at(-1)!;
      expect(second).toMatch(/^petk_/);
      expect(await works(second)).toBe(200);
      expect(await works(first)).toBe(200);
      const secondId = (await keysOf('cli-keys')).find((k) => k.id !== firstId)!.id;
      const listed = (await cli('list')).join('\n');
      expect(listed).toMatch(new RegExp(`key ${firstId}\\t`));
      expect(listed).toMatch(new RegExp(`key ${secondId}\\tpetk_.*\\tactive until 2099-01-01T00:00:00.000Z`));

      // Two keys could be meant: the CLI names both and asks which, and rotates nothing.
      const ambiguous = await refused('rotate', 'cli-keys');
      expect(ambiguous.code).toBe(2);
      expect(ambiguous.stderr).toContain(firstId);
      expect(ambiguous.stderr).toContain(secondId);
      expect(ambiguous.stderr).toContain('--key');
      expect((await keysOf('cli-keys')).length).toBe(2);

      const rotated = (await cli('rotate', 'cli-keys', '--key', firstId, '--overlap', '0')).at(-1)!;
      expect(await refusedWithin(first)).toBe(401);
      expect(await works(rotated)).toBe(200);
      expect((await cli('revoke', 'cli-keys', '--key', secondId))[0]).toContain('Revoked 1 key(s) of "cli-keys"');
      expect(await refusedWithin(second)).toBe(401);
      expect(await works(rotated)).toBe(200);
      // One key left that can be rotated: no --key needed.
      expect((await cli('rotate', 'cli-keys', '--overlap', '0')).at(-1)).toMatch(/^petk_/);
      expect(await refusedWithin(rotated)).toBe(401);
    });

    it('disables and enables a consumer', async () => {
      const key = (await cli('create', '--plan', 'free', '--name', 'cli-off')).at(-1)!;
      expect((await cli('disable', 'cli-off'))[0]).toContain('Disabled "cli-off"');
      expect(await refusedWithin(key)).toBe(401);
      expect((await cli('list')).join('\n')).toMatch(/cli-off\t.*\tdisabled /);
      expect((await cli('enable', 'cli-off'))[0]).toContain('Enabled "cli-off"');
      expect(
        await until(
          () => call(`${stack.b.url}/v1/pets?limit=1`, withKey(key)),
          (r) => r.status === 200,
          1_000,
        ).then((r) => r.reply.status),
      ).toBe(200);
      expect(await refused('disable', 'nobody-here')).toEqual({
        code: 1,
        stderr: expect.stringContaining('No consumer named "nobody-here"'),
      });
    });

    it("changes a consumer's plan, with agreed limits where the plan needs them", async () => {
      await cli('create', '--plan', 'free', '--name', 'cli-plan');
      const line = async () => (await cli('list')).find((l) => l.startsWith('cli-plan\t'));
      expect((await cli('plan', 'cli-plan', 'business'))[0]).toContain(
        '"cli-plan" is on the business plan: 1000/min 100000/day',
      );
      expect(await line()).toMatch(/^cli-plan\tbusiness\t1000\/min 100000\/day\t/);
      expect(await refused('plan', 'cli-plan', 'enterprise')).toEqual({
        code: 2,
        stderr: expect.stringContaining('needs its agreed limits'),
      });
      expect(await refused('plan', 'cli-plan', 'gold')).toEqual({
        code: 2,
        stderr: expect.stringContaining('PLAN must be one of'),
      });
      await cli('plan', 'cli-plan', 'enterprise', '--rpm', '5', '--rpd', '50');
      expect(await line()).toMatch(/^cli-plan\tenterprise\t5\/min 50\/day\t/);
      // Without --rpm/--rpd a plan's own limits apply again (the agreed ones are cleared).
      await cli('plan', 'cli-plan', 'pro');
      expect(await line()).toMatch(/^cli-plan\tpro\t300\/min 10000\/day\t/);
      expect(((await adminCall(stack.a, 'GET', '/consumers/cli-plan')).body as { limits: unknown }).limits).toBeNull();
      await cli('plan', 'cli-plan', 'pro', '--rpm', '7', '--rpd', '70');
      expect(await line()).toMatch(/^cli-plan\tpro\t7\/min 70\/day\t/);
    });

    it('says plainly when the admin API cannot be reached', async () => {
      await expect(
        run(process.execPath, [KEYS_CLI, 'list'], {
          env: { ...process.env, ADMIN_URL: 'http://127.0.0.1:1', ADMIN_TOKEN: 'x' },
        }),
      ).rejects.toMatchObject({ code: 1, stderr: expect.stringContaining('cannot reach the admin API') });
    });
  });

  it('does not turn a flood of random well-formed keys into a flood of queries', async () => {
    // No grace before strikes (BAN_GRACE_MS 0): the address is banned after BAN_THRESHOLD + 1 refusals past its limit.
    const flooded = await startGateway({
      petsUrl: stack.pets.url,
      database: stack.database,
      env: {
        ANON_RATE_LIMIT_PER_MINUTE: '5',
        BAN_THRESHOLD: '3',
        BAN_GRACE_MS: '0',
        TRUST_PROXY: 'loopback',
        KEY_LOOKUPS_PER_SECOND: '20',
      },
    });
    try {
      // One address: refused keys count against its anonymous limit until it is banned. The key filter refuses
      // them without a query: only its false positives (~1 % at capacity, far fewer here) and one hash a second
      // not in the filter (1 % of the budget of 20, at least 1) are looked up.
      const seconds = (since: number) => Math.ceil((Date.now() - since) / 1000);
      let started = Date.now();
      const before = await storeQueries(flooded);
      const single: number[] = [];
      for (let i = 0; i < 60; i += 1)
        single.push(
          (
            await call(`${flooded.url}/v1/pets`, {
              headers: { authorization: `Bearer ${generateApiKey()}`, 'x-forwarded-for': '203.0.113.7' },
            })
          ).status,
        );
      expect((await storeQueries(flooded)) - before).toBeLessThanOrEqual(1 + seconds(started) + 1);
      expect(new Set(single)).toEqual(new Set([401, 429]));

      // Many addresses at once: still no query but those, and no 503 (the budget is not spent).
      started = Date.now();
      const middle = await storeQueries(flooded);
      const spread = await Promise.all(
        Array.from({ length: 300 }, (_, i) =>
          call(`${flooded.url}/v1/pets`, {
            headers: { authorization: `Bearer ${generateApiKey()}`, 'x-forwarded-for': `198.51.100.${i % 250}` },
          }).then((r) => r.status),
        ),
      );
      expect((await storeQueries(flooded)) - middle).toBeLessThanOrEqual(Math.ceil(300 * 0.01) + seconds(started) + 1);
      expect(spread.every((s) => s === 401 || s === 429)).toBe(true);
    } finally {
      await flooded.close();
    }
  });
});
