import { randomBytes } from 'node:crypto';
import { adminCall } from '../../support/gateway';
import { expectErrorBody } from '../../support/http';
import { withStack } from '../../support/with-stack';

const unique = (prefix: string) => `${prefix}-${randomBytes(4).toString('hex')}`;

interface ConsumerAnswer {
  name: string;
  email: string | null;
}

/**
 * A consumer's contact email (issue #37, point 3): operators find the developer who wrote in. Stored lower-cased,
 * searched exactly whatever the case, cleared by `null`, audited; a restricted token still sees only its own.
 */
describe('a consumer’s contact email', () => {
  const stack = withStack({ petsUrl: 'http://127.0.0.1:1', database: true, gateway: {} });

  const root = (method: string, path: string, body?: unknown) => adminCall(stack.gateway, method, path, body);

  async function searchByEmail(email: string, token?: string): Promise<string[]> {
    const reply = await adminCall(
      stack.gateway,
      'GET',
      `/consumers?email=${encodeURIComponent(email)}`,
      undefined,
      token,
    );
    expect(reply.status).toBe(200);
    return (reply.body as { items: ConsumerAnswer[] }).items.map((c) => c.name);
  }

  it('is stored lower-cased on create, returned, and found by an exact search in any case', async () => {
    const local = unique('ada');
    const name = unique('dev');
    const created = await root('POST', '/consumers', { name, plan: 'free', email: `${local}@Example.COM` });
    expect(created.status).toBe(201);
    expect((created.body as { consumer: ConsumerAnswer }).consumer.email).toBe(`${local}@example.com`);
    const other = unique('other');
    expect(
      (await root('POST', '/consumers', { name: other, plan: 'free', email: `x${local}@example.com` })).status,
    ).toBe(201);

    expect(await searchByEmail(`${local.toUpperCase()}@EXAMPLE.com`)).toEqual([name]);
    expect(await searchByEmail(`x${local}@example.com`)).toEqual([other]);
    // Exact, not a substring; and it combines with the name prefix.
    expect(await searchByEmail(`${local.slice(1)}@example.com`)).toEqual([]);
    const combined = await root('GET', `/consumers?prefix=dev-&email=${local}@example.com`);
    expect((combined.body as { items: ConsumerAnswer[] }).items.map((c) => c.name)).toEqual([name]);
    const mismatched = await root('GET', `/consumers?prefix=other-&email=${local}@example.com`);
    expect((mismatched.body as { items: ConsumerAnswer[] }).items).toEqual([]);
    expect(((await root('GET', `/consumers/${name}`)).body as ConsumerAnswer).email).toBe(`${local}@example.com`);
  });

  it.each([
    ['a display name', 'Ada <ada@example.com>'],
    ['a list', 'ada@example.com,bob@example.com'],
    ['whitespace', 'ada @example.com'],
    ['a control character', 'ada\u0001@example.com'],
    ['no domain', 'ada@'],
    ['more than 254 characters', `${'a'.repeat(64)}@${'b'.repeat(183)}.example`],
    ['not a string', 42],
  ])('refuses %s with 400 VALIDATION_FAILED and the Error body, on create, update and search', async (_what, email) => {
    const name = unique('bad');
    const create = await root('POST', '/consumers', { name, plan: 'free', email });
    expectErrorBody(create, 400, 'VALIDATION_FAILED');
    expect((create.body as { message: string }).message).toContain('email must be one email address');
    expect((await root('GET', `/consumers/${name}`)).status).toBe(404);

    const existing = unique('ok');
    expect((await root('POST', '/consumers', { name: existing, plan: 'free' })).status).toBe(201);
    expectErrorBody(await root('PATCH', `/consumers/${existing}`, { email }), 400, 'VALIDATION_FAILED');
    if (typeof email === 'string')
      expectErrorBody(await root('GET', `/consumers?email=${encodeURIComponent(email)}`), 400, 'VALIDATION_FAILED');
  });

  it('is set and cleared (null) by PATCH, each change audited', async () => {
    const name = unique('patch');
    expect((await root('POST', '/consumers', { name, plan: 'free' })).status).toBe(201);
    const email = `${unique('grace')}@example.org`;

    const set = await root('PATCH', `/consumers/${name}`, { email: email.toUpperCase() });
    expect(set.status).toBe(200);
    expect((set.body as ConsumerAnswer).email).toBe(email);
    expect(await searchByEmail(email)).toEqual([name]);

    // A PATCH without the field keeps it.
    expect(((await root('PATCH', `/consumers/${name}`, { plan: 'pro' })).body as ConsumerAnswer).email).toBe(email);

    const cleared = await root('PATCH', `/consumers/${name}`, { email: null });
    expect(cleared.status).toBe(200);
    expect((cleared.body as ConsumerAnswer).email).toBeNull();
    expect(await searchByEmail(email)).toEqual([]);

    const audit = await root('GET', `/audit?target=${name}&action=consumer.update&limit=10`);
    const changes = (audit.body as { items: { changes: Record<string, unknown> }[] }).items.map((row) => row.changes);
    expect(changes).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ email: { before: null, after: email } }),
        expect.objectContaining({ email: { before: email, after: null } }),
      ]),
    );
  });

  it('finds for a token restricted to its own consumers only the ones it created', async () => {
    const tokenReply = await root('POST', '/tokens', {
      name: unique('portal'),
      scopes: ['consumers:read', 'consumers:write'],
      ownConsumersOnly: true,
      plans: ['free'],
    });
    expect(tokenReply.status).toBe(201);
    const token = (tokenReply.body as { token: string }).token;
    const email = `${unique('shared')}@example.net`;
    const theirs = unique('theirs');
    expect((await root('POST', '/consumers', { name: theirs, plan: 'free', email })).status).toBe(201);
    const mine = unique('mine');
    const created = await adminCall(stack.gateway, 'POST', '/consumers', { name: mine, plan: 'free', email }, token);
    expect(created.status).toBe(201);

    expect(await searchByEmail(email, token)).toEqual([mine]);
    expect((await searchByEmail(email)).sort()).toEqual([mine, theirs].sort());
    expectErrorBody(
      await adminCall(stack.gateway, 'PATCH', `/consumers/${theirs}`, { email: null }, token),
      403,
      'FORBIDDEN',
    );

    // An operator moves its consumer to Pro: the Free-only token may still set the contact email, not the limits.
    expect((await root('PATCH', `/consumers/${mine}`, { plan: 'pro' })).status).toBe(200);
    const moved = await adminCall(stack.gateway, 'PATCH', `/consumers/${mine}`, { email: `new-${email}` }, token);
    expect(moved.status).toBe(200);
    expect((moved.body as ConsumerAnswer).email).toBe(`new-${email}`);
    expectErrorBody(
      await adminCall(stack.gateway, 'PATCH', `/consumers/${mine}`, { limits: { perMinute: 5, perDay: 50 } }, token),
      403,
      'FORBIDDEN',
    );
  });
});
