import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { AdminPlanRequest } from '@app/web';
import { adminCall } from '../../support/gateway';
import { call, expectErrorBody, Reply } from '../../support/http';
import { TOKEN_PRESETS } from '../../support/token-presets';
import { withStack } from '../../support/with-stack';

/** The admin API's answer, as its committed document types it. */
type PlanRequest = AdminPlanRequest;

const unique = (prefix: string) => `${prefix}-${randomBytes(4).toString('hex')}`;
const withKey = (key: string) => ({ headers: { authorization: `Bearer ${key}` } });

/**
 * Plan requests (issue #25): the portal asks, an operator decides. Two gateway instances share one database, as
 * in production: an approval made on one is enforced on /v1 by the other.
 */
describe('plan requests', () => {
  const stack = withStack({ pets: {}, database: true, sharedKeyPrefix: 'plan-requests', gateways: { a: {}, b: {} } });

  const root = (method: string, path: string, body?: unknown) => adminCall(stack.a, method, path, body);
  const as = (token: string, method: string, path: string, body?: unknown) =>
    adminCall(stack.a, method, path, body, token);

  async function createToken(body: Record<string, unknown>): Promise<{ token: string; id: string; name: string }> {
    const reply = await root('POST', '/tokens', body);
    expect(reply.status).toBe(201);
    const { token, record } = reply.body as { token: string; record: { id: string; name: string } };
    return { token, id: record.id, name: record.name };
  }

  async function createConsumer(plan = 'free', token?: string): Promise<{ name: string; key: string }> {
    const name = unique('c');
    const reply = token
      ? await as(token, 'POST', '/consumers', { name, plan })
      : await root('POST', '/consumers', { name, plan });
    expect(reply.status).toBe(201);
    return { name, key: (reply.body as { key: { key: string } }).key.key };
  }

  async function request(consumer: string, requestedPlan = 'pro', token?: string): Promise<Reply> {
    const body = { consumer, requestedPlan, expectedVolume: 'About 5,000 requests a day', message: 'A shelter app.' };
    return token ? as(token, 'POST', '/plan-requests', body) : root('POST', '/plan-requests', body);
  }

  async function audit(consumer: string): Promise<Array<{ action: string; actorName: string }>> {
    return (
      (await root('GET', `/audit?target=${consumer}&limit=1000`)).body as {
        items: Array<{ action: string; actorName: string }>;
      }
    ).items;
  }

  it('records a pending request, refuses a second pending one (409), and lists it', async () => {
    const { name } = await createConsumer();
    const first = await request(name);
    expect(first.status).toBe(201);
    const created = first.body as PlanRequest;
    expect(created).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      consumer: name,
      currentPlan: 'free',
      requestedPlan: 'pro',
      expectedVolume: 'About 5,000 requests a day',
      message: 'A shelter app.',
      status: 'pending',
      createdAt: expect.any(String),
      decidedAt: null,
      decidedBy: null,
      note: null,
      // Asked by a token on its own (no person named): the token's name.
      requestedBy: 'root',
    });
    expectErrorBody(await request(name, 'business'), 409, 'PLAN_REQUEST_PENDING');
    const listed = (await root('GET', `/plan-requests?consumer=${name}&status=pending`)).body as {
      items: PlanRequest[];
      next: string | null;
    };
    expect(listed).toEqual({ items: [created], next: null });
    expect((await audit(name)).map((r) => r.action)).toEqual(['consumer.create', 'plan-request.create']);
  });

  it('approves: the plan changes on every instance (the other one enforces it on /v1), audited, and a second decision is a 409', async () => {
    const { name, key } = await createConsumer();
    expect((await call(`${stack.b.url}/v1/pets?limit=1`, withKey(key))).headers.get('x-ratelimit-limit')).toBe('60');
    const { id } = (await request(name)).body as PlanRequest;
    const approved = await root('POST', `/plan-requests/${id}/approve`);
    expect(approved.status).toBe(200);
    expect(approved.body).toMatchObject({ status: 'approved', decidedBy: 'root', decidedAt: expect.any(String) });
    expect((await root('GET', `/consumers/${name}`)).body).toMatchObject({ plan: 'pro', limits: null });
    let limit: string | null = null;
    for (const deadline = Date.now() + 2000; Date.now() < deadline && limit !== '300';) {
      limit = (await call(`${stack.b.url}/v1/pets?limit=1`, withKey(key))).headers.get('x-ratelimit-limit');
    }
    expect(limit).toBe('300');
    expect((await audit(name)).map((r) => r.action)).toEqual([
      'consumer.create',
      'plan-request.create',
      'plan-request.approve',
      'consumer.update',
    ]);
    expectErrorBody(await root('POST', `/plan-requests/${id}/approve`), 409, 'PLAN_REQUEST_DECIDED');
    expectErrorBody(
      await root('POST', `/plan-requests/${id}/decline`, { note: 'too late' }),
      409,
      'PLAN_REQUEST_DECIDED',
    );
    // Decided: the consumer may ask again.
    expect((await request(name, 'business')).status).toBe(201);
  });

  it('approves Enterprise only with custom limits, both of them', async () => {
    const { name } = await createConsumer();
    const { id } = (await request(name, 'enterprise')).body as PlanRequest;
    expectErrorBody(await root('POST', `/plan-requests/${id}/approve`, {}), 400, 'VALIDATION_FAILED');
    expectErrorBody(await root('POST', `/plan-requests/${id}/approve`, { perMinute: 5000 }), 400, 'VALIDATION_FAILED');
    expect((await root('GET', `/consumers/${name}`)).body).toMatchObject({ plan: 'free' });
    const approved = await root('POST', `/plan-requests/${id}/approve`, { perMinute: 5000, perDay: 2_000_000 });
    expect(approved.status).toBe(200);
    expect((await root('GET', `/consumers/${name}`)).body).toMatchObject({
      plan: 'enterprise',
      limits: { perMinute: 5000, perDay: 2_000_000 },
    });
  });

  it('declines with a note the requester can read; the plan stays', async () => {
    const reviewer = await createToken({ name: unique('reviewer'), scopes: ['plan-requests:review'] });
    const { name } = await createConsumer();
    const { id } = (await request(name)).body as PlanRequest;
    const declined = await as(reviewer.token, 'POST', `/plan-requests/${id}/decline`, {
      note: 'Pro needs a company address.',
    });
    expect(declined.status).toBe(200);
    expect(declined.body).toMatchObject({
      status: 'declined',
      note: 'Pro needs a company address.',
      decidedBy: reviewer.name,
    });
    expect((await root('GET', `/consumers/${name}`)).body).toMatchObject({ plan: 'free' });
    expect((await audit(name)).map((r) => [r.action, r.actorName])).toEqual([
      ['consumer.create', 'root'],
      ['plan-request.create', 'root'],
      ['plan-request.decline', reviewer.name],
    ]);
  });

  it('lets exactly one of concurrent decisions win (approvals and declines on both instances)', async () => {
    for (let round = 0; round < 3; round += 1) {
      const { name } = await createConsumer();
      const { id } = (await request(name)).body as PlanRequest;
      const replies = await Promise.all([
        adminCall(stack.a, 'POST', `/plan-requests/${id}/approve`),
        adminCall(stack.b, 'POST', `/plan-requests/${id}/decline`, { note: 'no' }),
        adminCall(stack.b, 'POST', `/plan-requests/${id}/approve`),
        adminCall(stack.a, 'POST', `/plan-requests/${id}/decline`, { note: 'no' }),
      ]);
      expect(replies.map((r) => r.status).sort()).toEqual([200, 409, 409, 409]);
      const winner = replies.find((r) => r.status === 200)!.body as PlanRequest;
      expect((await root('GET', `/consumers/${name}`)).body).toMatchObject({
        plan: winner.status === 'approved' ? 'pro' : 'free',
      });
      const decisions = (await audit(name)).filter(
        (r) => r.action.startsWith('plan-request.') && r.action !== 'plan-request.create',
      );
      expect(decisions).toHaveLength(1);
    }
  });

  it('lets an own-consumers token (the portal) ask and read only for its own consumers, and never decide', async () => {
    const portal = await createToken({
      name: unique('portal'),
      scopes: ['consumers:write', 'plan-requests:read', 'plan-requests:write', 'plan-requests:review'],
      ownConsumersOnly: true,
      plans: ['free'],
    });
    const mine = await createConsumer('free', portal.token);
    const other = await createConsumer('free');
    const created = await request(mine.name, 'pro', portal.token);
    expect(created.status).toBe(201);
    const { id } = created.body as PlanRequest;
    expectErrorBody(await request(other.name, 'pro', portal.token), 403, 'FORBIDDEN');
    const { id: othersId } = (await request(other.name)).body as PlanRequest;
    const listed = (await as(portal.token, 'GET', '/plan-requests?limit=1000')).body as { items: PlanRequest[] };
    expect(listed.items.map((r) => r.consumer)).toEqual([mine.name]);
    expectErrorBody(await as(portal.token, 'GET', `/plan-requests?consumer=${other.name}`), 403, 'FORBIDDEN');
    for (const target of [id, othersId]) {
      expectErrorBody(await as(portal.token, 'POST', `/plan-requests/${target}/approve`), 403, 'FORBIDDEN');
      expectErrorBody(
        await as(portal.token, 'POST', `/plan-requests/${target}/decline`, { note: 'x' }),
        403,
        'FORBIDDEN',
      );
    }
    expect(
      ((await root('GET', `/plan-requests?consumer=${mine.name}`)).body as { items: PlanRequest[] }).items[0].status,
    ).toBe('pending');
  });

  it('leaves an approved consumer to the own-consumers token that created it: it reads it and its keys, never raises its limits', async () => {
    const portal = await createToken({
      name: unique('portal'),
      ...TOKEN_PRESETS.portal,
    });
    const mine = await createConsumer('free', portal.token);
    const { id } = (await request(mine.name, 'pro', portal.token)).body as PlanRequest;
    expect((await root('POST', `/plan-requests/${id}/approve`)).status).toBe(200);
    expect((await as(portal.token, 'GET', `/consumers/${mine.name}`)).body).toMatchObject({ plan: 'pro' });
    expect((await as(portal.token, 'GET', `/consumers/${mine.name}/usage`)).status).toBe(200);
    expect((await as(portal.token, 'POST', `/consumers/${mine.name}/keys`, {})).status).toBe(201);
    expect(
      ((await as(portal.token, 'GET', '/consumers?limit=1000')).body as { items: Array<{ name: string }> }).items.map(
        (c) => c.name,
      ),
    ).toContain(mine.name);
    expect(
      ((await as(portal.token, 'GET', `/plan-requests?consumer=${mine.name}`)).body as { items: PlanRequest[] })
        .items[0].status,
    ).toBe('approved');
    expectErrorBody(
      await as(portal.token, 'PATCH', `/consumers/${mine.name}`, { limits: { perMinute: 100000, perDay: 1000000 } }),
      403,
      'FORBIDDEN',
    );
  });

  it('CLI: lists the pending requests, approves one, declines another with its note', async () => {
    const cli = async (...args: string[]) =>
      (
        await promisify(execFile)(
          process.execPath,
          [join(__dirname, '../../../scripts/keys.js'), 'requests', ...args],
          {
            env: { ...process.env, ADMIN_URL: stack.a.adminUrl, ADMIN_TOKEN: stack.a.adminToken },
          },
        )
      ).stdout
        .trim()
        .split('\n');
    const [first, second] = [await createConsumer(), await createConsumer()];
    const one = (await request(first.name)).body as PlanRequest;
    const two = (await request(second.name, 'business')).body as PlanRequest;
    const pending = await cli('--consumer', first.name);
    expect(pending).toEqual([expect.stringMatching(new RegExp(`^${one.id}\t${first.name}\tfree -> pro\tpending\t`))]);
    expect((await cli('approve', one.id))[0]).toMatch(
      new RegExp(`^Approved: ${one.id}\t${first.name}\tfree -> pro\tapproved`),
    );
    expect((await root('GET', `/consumers/${first.name}`)).body).toMatchObject({ plan: 'pro' });
    const refused = await cli('decline', two.id).then(
      () => undefined,
      (error: { code: number; stderr: string }) => error,
    );
    expect([refused?.code, refused?.stderr.split('\n')[0]]).toEqual([
      2,
      'keys: requests decline needs --note TEXT: the requester reads it on the portal',
    ]);
    expect((await cli('decline', two.id, '--note', 'Business needs a contract.'))[0]).toContain(
      'note: Business needs a contract.',
    );
    expect(await cli('--consumer', second.name)).toEqual(['No pending plan requests.']);
    expect((await cli('--status', 'declined', '--consumer', second.name))[0]).toContain(
      `${two.id}\t${second.name}\tfree -> business\tdeclined`,
    );
  });

  it('pages oldest first', async () => {
    const names = [await createConsumer(), await createConsumer(), await createConsumer()].map((c) => c.name);
    for (const name of names) expect((await request(name)).status).toBe(201);
    const seen: string[] = [];
    let after: string | null = null;
    do {
      const page = (await root('GET', `/plan-requests?status=pending&limit=2${after ? `&after=${after}` : ''}`))
        .body as { items: PlanRequest[]; next: string | null };
      expect(page.items.length).toBeLessThanOrEqual(2);
      seen.push(...page.items.map((r) => r.consumer));
      after = page.next;
    } while (after);
    expect(seen.filter((n) => names.includes(n))).toEqual(names);
    expect(new Set(seen).size).toBe(seen.length);
  });

  it('refuses bad input with a 400 naming the rule, the current plan with a 409, an unknown consumer or request with a 404', async () => {
    const { name } = await createConsumer();
    const base = { consumer: name, requestedPlan: 'pro', expectedVolume: '10/day' };
    const cases: Array<[unknown, string]> = [
      [{ ...base, requestedPlan: 'gold' }, 'requestedPlan must be one of free, pro, business, enterprise'],
      [{ ...base, expectedVolume: 'x'.repeat(201) }, 'expectedVolume must be at most 200 characters'],
      [{ ...base, expectedVolume: '' }, 'expectedVolume must not be empty'],
      [{ ...base, message: 'x'.repeat(2001) }, 'message must be at most 2000 characters'],
      [{ ...base, message: 'a\u0000b' }, 'message must not contain NUL characters'],
      [
        { ...base, consumer: '-bad' },
        'consumer must be 1-64 letters, digits, ".", "_" or "-", starting with a letter or digit',
      ],
      [{ ...base, extra: 1 }, 'property extra should not exist'],
      [{ consumer: name, requestedPlan: 'pro' }, 'expectedVolume is required'],
    ];
    for (const [body, message] of cases) {
      const reply = await root('POST', '/plan-requests', body);
      expectErrorBody(reply, 400, 'VALIDATION_FAILED');
      expect((reply.body as { message: string }).message).toBe(message);
    }
    // The plan it is on already: a conflict with its state, not a broken rule.
    const unchanged = await root('POST', '/plan-requests', { ...base, requestedPlan: 'free' });
    expectErrorBody(unchanged, 409, 'PLAN_UNCHANGED');
    expect((unchanged.body as { message: string }).message).toBe(
      "requestedPlan must differ from the consumer's current plan (free).",
    );
    expectErrorBody(await root('POST', '/plan-requests', { ...base, consumer: 'nobody-here' }), 404, 'NOT_FOUND');
    const unknown = '00000000-0000-4000-8000-000000000000';
    expectErrorBody(await root('POST', `/plan-requests/${unknown}/approve`), 404, 'NOT_FOUND');
    expectErrorBody(await root('POST', `/plan-requests/${unknown}/decline`, { note: 'x' }), 404, 'NOT_FOUND');
    expectErrorBody(await root('POST', '/plan-requests/nope/approve'), 400, 'VALIDATION_FAILED');
    const { id } = (await request(name)).body as PlanRequest;
    for (const [body, message] of [
      [{}, 'note is required'],
      [{ note: 3 }, 'note must be a string'],
      [{ note: '' }, 'note must not be empty'],
      [{ note: 'x'.repeat(2001) }, 'note must be at most 2000 characters'],
    ] as Array<[unknown, string]>) {
      const reply = await root('POST', `/plan-requests/${id}/decline`, body);
      expectErrorBody(reply, 400, 'VALIDATION_FAILED');
      expect((reply.body as { message: string }).message).toBe(message);
    }
    for (const [query, message] of [
      ['status=open', 'status must be one of pending, approved, declined'],
      ['limit=0', 'limit must be an integer from 1 to 1000'],
      ['after=x', 'after must be the next of a previous page'],
      [`after=${unknown}`, 'after must be the next of a previous page'],
    ]) {
      const reply = await root('GET', `/plan-requests?${query}`);
      expectErrorBody(reply, 400, 'VALIDATION_FAILED');
      expect((reply.body as { message: string }).message).toBe(message);
    }
  });
});
