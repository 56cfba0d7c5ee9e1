import { randomBytes } from 'node:crypto';
import type { AdminAuditEntry } from '@app/web';
import { DENIED_PER_MINUTE } from '../../../apps/gateway/src/access/audit-log';
import { ADMIN_SCOPES } from '../../../apps/gateway/src/access/admin-scopes';
import { adminCall, GatewayUnderTest } from '../../support/gateway';
import { call, expectErrorBody, Reply } from '../../support/http';
import { withStack } from '../../support/with-stack';

const unique = (prefix: string) => `${prefix}-${randomBytes(4).toString('hex')}`;

/**
 * An audit that cannot be blinded and says who and which key (issue #36 finding 6, issue #37 point 4), on the
 * engine the run selects: two gateway instances sharing one database, as in production.
 */
describe('the audit log: refusals never dropped, keys named, the people behind a change', () => {
  const stack = withStack({ pets: {}, database: true, sharedKeyPrefix: 'audit', gateways: { a: {}, b: {} } });

  const root = (method: string, path: string, body?: unknown) => adminCall(stack.a, method, path, body);

  async function auditRows(query: string): Promise<AdminAuditEntry[]> {
    const rows: AdminAuditEntry[] = [];
    let after = '';
    for (;;) {
      const reply = await root('GET', `/audit?limit=1000&${query}${after}`);
      expect(reply.status).toBe(200);
      const page = reply.body as { items: AdminAuditEntry[]; next: string | null };
      rows.push(...page.items);
      if (page.next === null) return rows;
      after = `&after=${page.next}`;
    }
  }

  /** Refusals are recorded without holding the answer back: wait until `done` holds of the rows (or 30 s pass). */
  async function settled(query: string, done: (rows: AdminAuditEntry[]) => boolean): Promise<AdminAuditEntry[]> {
    const deadline = Date.now() + 30_000;
    let rows = await auditRows(query);
    while (!done(rows) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      rows = await auditRows(query);
    }
    return rows;
  }

  const total = (rows: AdminAuditEntry[]) => rows.reduce((sum, row) => sum + row.count, 0);

  async function createToken(body: Record<string, unknown>): Promise<{ token: string; id: string }> {
    const reply = await root('POST', '/tokens', body);
    expect(reply.status).toBe(201);
    const { token, record } = reply.body as { token: string; record: { id: string } };
    return { token, id: record.id };
  }

  function withEndUser(
    gateway: GatewayUnderTest,
    token: string,
    method: string,
    path: string,
    endUser: Record<string, string>,
    body?: unknown,
  ): Promise<Reply> {
    return call(`${gateway.adminUrl}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...endUser,
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  }

  it('keeps a known token’s 403s visible after a flood of 401s, and counts every refusal on a bounded number of rows', async () => {
    const started = Date.now();
    const since = `from=${encodeURIComponent(new Date(started - 1000).toISOString())}`;
    const reader = await createToken({ name: unique('reader'), scopes: ['consumers:read'] });
    for (let i = 0; i < DENIED_PER_MINUTE; i += 1)
      expectErrorBody(await adminCall(stack.a, 'GET', '/consumers', undefined, 'adm_junk'), 401, 'UNAUTHORIZED');
    for (let i = 0; i < 10; i += 1)
      expectErrorBody(await adminCall(stack.a, 'POST', '/consumers', { plan: 'free' }, reader.token), 403, 'FORBIDDEN');
    const forbidden = await settled(`${since}&actor=${reader.id}&action=auth.forbidden`, (rows) => total(rows) >= 10);
    expect(total(forbidden)).toBe(10);
    expect(forbidden.every((row) => row.changes?.route?.after === 'POST /consumers')).toBe(true);

    // 1,000 more junk calls, half on each instance, 20 at a time: every one counted, on few rows.
    const flood = 1000;
    const sent = Array.from({ length: flood }, (_, i) => (i % 2 === 0 ? stack.a : stack.b));
    for (let i = 0; i < flood; i += 20)
      await Promise.all(
        sent
          .slice(i, i + 20)
          .map(async (gateway) =>
            expectErrorBody(await adminCall(gateway, 'GET', '/tokens', undefined, 'adm_junk'), 401, 'UNAUTHORIZED'),
          ),
      );
    const query = `${since}&actor=anonymous&action=auth.unauthorized`;
    const rows = await settled(query, (all) => total(all) >= DENIED_PER_MINUTE + flood);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const after = await auditRows(query);
    expect(total(after)).toBe(DENIED_PER_MINUTE + flood);
    expect(after.length).toBe(rows.length);
    // Per minute at most DENIED_PER_MINUTE rows of their own on each instance, plus one aggregate row.
    const minutes = Math.floor(Date.now() / 60_000) - Math.floor(started / 60_000) + 1;
    expect(after.length).toBeLessThanOrEqual(minutes * (2 * DENIED_PER_MINUTE + 1));
    const aggregates = after.filter((row) => row.aggregated);
    expect(aggregates.length).toBeGreaterThanOrEqual(1);
    expect(aggregates.length).toBeLessThanOrEqual(minutes);
    for (const row of aggregates) {
      expect(row.source).toMatch(/127\.0\.0\.1/);
      expect(row.changes?.minute?.after).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:00\.000Z$/);
      expect(row.requestId).toBeNull();
    }
    expect(after.filter((row) => !row.aggregated).every((row) => row.count === 1)).toBe(true);
    // The flood never hid the token's refusals.
    expect(total(await auditRows(`${since}&actor=${reader.id}`))).toBe(10);
  }, 240_000);

  it('names the key by id and hint on every key action: issue, rotate (old and successor), revoke', async () => {
    const name = unique('keys');
    const created = await root('POST', '/consumers', { name, plan: 'free' });
    expect(created.status).toBe(201);
    const first = (created.body as { key: { id: string } }).key.id;
    const issued = await root('POST', `/consumers/${name}/keys`, {});
    expect(issued.status).toBe(201);
    const second = (issued.body as { id: string }).id;
    const rotated = await root('POST', `/consumers/${name}/keys/${first}/rotate`, {});
    expect(rotated.status).toBe(201);
    const successor = (await root('GET', `/consumers/${name}`)).body as {
      keys: Array<{ id: string; hint: string; state: string }>;
    };
    const hintOf = new Map(successor.keys.map((key) => [key.id, key.hint]));
    const third = successor.keys.find((key) => key.id !== first && key.id !== second)!.id;
    expect((await root('POST', `/consumers/${name}/keys/${second}/revoke`)).status).toBe(200);
    expect((await root('POST', `/consumers/${name}/revoke`)).status).toBe(200);

    const rows = await auditRows(`target=${name}`);
    expect(rows.map((row) => [row.action, row.targetKey, row.targetKeyHint])).toEqual([
      ['consumer.create', first, hintOf.get(first)],
      ['key.issue', second, hintOf.get(second)],
      ['key.rotate', first, hintOf.get(first)],
      ['key.revoke', second, hintOf.get(second)],
      ['key.revoke', first, hintOf.get(first)],
      ['key.revoke', third, hintOf.get(third)],
    ]);
    // Every hint is the one the pages show (`petk_` and four characters), never a key.
    expect([...hintOf.values()].every((hint) => /^petk_.{4}…$/.test(hint))).toBe(true);
    const rotation = rows[2];
    expect(rotation.changes?.replacedBy).toEqual({ before: null, after: third });
    expect(rotation.changes?.successorHint).toEqual({ before: null, after: hintOf.get(third) });
  });

  it('records the end user a web app names, only from a token allowed to act for users (or root)', async () => {
    const web = await createToken({
      name: unique('web'),
      scopes: ['consumers:read', 'consumers:write', 'tokens:admin'],
      actsForUsers: true,
    });
    const plain = await createToken({ name: unique('plain'), scopes: ['consumers:write', 'tokens:admin'] });
    const endUser = { 'x-on-behalf-of': 'account:42 dev@example.com', 'x-end-user-address': '2001:db8::7' };

    // The capability: shown on the token, granted by root only.
    expect((await adminCall(stack.a, 'GET', '/token', undefined, web.token)).body).toMatchObject({
      actsForUsers: true,
    });
    expect((await adminCall(stack.a, 'GET', '/token', undefined, plain.token)).body).toMatchObject({
      actsForUsers: false,
    });
    expectErrorBody(
      await adminCall(
        stack.a,
        'POST',
        '/tokens',
        { name: unique('x'), scopes: ['tokens:admin'], actsForUsers: true },
        web.token,
      ),
      403,
      'FORBIDDEN',
    );

    // A token that may act for users: the change's row names the person and their address, on either instance.
    const name = unique('dev');
    const made = await withEndUser(stack.b, web.token, 'POST', '/consumers', endUser, { name, plan: 'free' });
    expect(made.status).toBe(201);
    const keyId = (made.body as { key: { id: string } }).key.id;
    const operator = { 'x-on-behalf-of': 'operator:alice', 'x-end-user-address': '198.51.100.4' };
    const revoked = await withEndUser(
      stack.a,
      stack.a.adminToken,
      'POST',
      `/consumers/${name}/keys/${keyId}/revoke`,
      operator,
    );
    expect(revoked.status).toBe(200);
    expect(
      (await auditRows(`target=${name}`)).map((row) => [row.action, row.actorName, row.onBehalfOf, row.endUserAddress]),
    ).toEqual([
      ['consumer.create', expect.stringMatching(/^web-/), 'account:42 dev@example.com', '2001:db8::7'],
      ['key.revoke', 'root', 'operator:alice', '198.51.100.4'],
    ]);

    // Any other token: refused (and the refusal audited), nothing changed.
    const other = unique('other');
    expectErrorBody(
      await withEndUser(stack.a, plain.token, 'POST', '/consumers', endUser, { name: other, plan: 'free' }),
      403,
      'FORBIDDEN',
    );
    expect((await root('GET', `/consumers/${other}`)).status).toBe(404);
    const refused = await settled(`actor=${plain.id}&action=auth.forbidden`, (rows) => rows.length >= 1);
    expect(refused.map((row) => row.changes?.reason?.after)).toEqual([expect.stringContaining('X-On-Behalf-Of')]);

    // Values that are not a label or an address: 400 with the Error body.
    const bad = async (headers: Record<string, string>) =>
      expectErrorBody(await withEndUser(stack.a, web.token, 'GET', '/consumers', headers), 400, 'VALIDATION_FAILED');
    await bad({ 'x-on-behalf-of': 'x'.repeat(321) });
    await bad({ 'x-on-behalf-of': 'zo\u00e9' });
    await bad({ 'x-end-user-address': 'not-an-address' });
    await bad({ 'x-end-user-address': '10.0.0.1, 10.0.0.2' });
    // A call without the headers names nobody.
    const nobody = unique('n');
    expect(
      (await withEndUser(stack.a, web.token, 'POST', '/consumers', {}, { name: nobody, plan: 'free' })).status,
    ).toBe(201);
    const [row] = await auditRows(`target=${nobody}`);
    expect([row.onBehalfOf, row.endUserAddress]).toEqual([null, null]);
  });

  it("records the web apps' sign-ins naming the person and their address, only from actsForUsers tokens; a flood of failures counted on few rows", async () => {
    const web = await createToken({ name: unique('web'), scopes: ['consumers:read'], actsForUsers: true });
    const plain = await createToken({ name: unique('plain'), scopes: [...ADMIN_SCOPES] });
    const subject = `account:${unique('dev')}@example.com`;
    const event = (token: string, body: unknown, gateway = stack.a) =>
      withEndUser(gateway, token, 'POST', '/audit/events', {}, body);
    const signIn = await event(web.token, { kind: 'sign-in', subject, address: '198.51.100.4' });
    expect(signIn.status).toBe(204);
    const locked = { kind: 'lockout', subject, address: '2001:db8:1:2::/64', reason: 'PAIR_LIMIT' };
    expect((await event(web.token, locked)).status).toBe(204);
    const rows = await auditRows(`actor=${web.id}&order=asc`);
    expect(rows.map((r) => [r.action, r.actorName, r.onBehalfOf, r.endUserAddress, r.changes])).toEqual([
      ['user.sign-in', expect.stringMatching(/^web-/), subject, '198.51.100.4', null],
      [
        'user.lockout',
        expect.stringMatching(/^web-/),
        subject,
        '2001:db8:1:2::/64',
        { reason: { before: null, after: 'PAIR_LIMIT' } },
      ],
    ]);

    // Only tokens that act for users may name a person: any other is refused, whatever its scopes.
    expectErrorBody(await event(plain.token, { kind: 'sign-in', subject }), 403, 'FORBIDDEN');
    expect(await auditRows(`actor=${plain.id}&action=user.sign-in`)).toEqual([]);
    // Bad input: 400 with the Error body, never a 5xx.
    for (const body of [
      { kind: 'login' },
      { kind: 'sign-in', address: '10.0.0.0/8' },
      { kind: 'sign-in', subject: 'x'.repeat(321) },
      { kind: 'sign-in', reason: 'not a code' },
    ])
      expectErrorBody(await event(web.token, body), 400, 'VALIDATION_FAILED');

    // A flood of failures from one address, on both instances: every one counted, on a bounded number of rows.
    const flood = 140;
    const failed = { kind: 'sign-in-failed', subject, address: '203.0.113.66' };
    for (let i = 0; i < flood; i += 20)
      await Promise.all(
        Array.from({ length: 20 }, (_, j) => event(web.token, failed, (i + j) % 2 === 0 ? stack.a : stack.b)),
      ).then((replies) => expect(replies.map((r) => r.status)).toEqual(Array(20).fill(204)));
    const counted = await auditRows(`actor=${web.id}&action=user.sign-in-failed`);
    expect(total(counted)).toBe(flood);
    // Per instance and minute: at most DENIED_PER_MINUTE rows of their own, plus one aggregate row per minute.
    const minutes = new Set(counted.map((r) => r.at.slice(0, 16))).size;
    expect(counted.length).toBeLessThanOrEqual(minutes * (2 * DENIED_PER_MINUTE + 1));
    expect(counted.length).toBeLessThan(flood);
    expect(counted.filter((r) => r.aggregated).every((r) => r.onBehalfOf === subject)).toBe(true);
  });
});
