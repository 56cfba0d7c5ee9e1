import { ConsoleClient, ConsoleUnderTest, startConsole } from '../../support/console';
import { adminCall } from '../../support/gateway';
import { withStack } from '../../support/with-stack';

interface AuditRow {
  action: string;
  changes: Record<string, { before: unknown; after: unknown }> | null;
  actorName: string;
  onBehalfOf: string | null;
  endUserAddress: string | null;
}

/**
 * The operator behind a console change reaches the audit (issue #36 finding 6, issue #37 point 4): the row's actor is
 * the operator's own token; its address is added only when that token may send it (actsForUsers), and a token
 * without it changes things as before, the row naming no address.
 */
describe('the console names the operator address in the audit when their token may', () => {
  let console_: ConsoleUnderTest;
  // Before withStack: afterAll hooks run in declaration order, and the console closes before the gateway.
  afterAll(async () => {
    await console_?.close();
  });
  const stack = withStack({ petsUrl: 'http://127.0.0.1:1', gateway: {}, timeoutMs: 180_000 });

  const unique = (stem: string) => `${stem}-${Math.random().toString(36).slice(2, 8)}`;
  const WRITER = ['consumers:read', 'consumers:write', 'keys:write', 'usage:read'];

  async function createToken(actsForUsers: boolean): Promise<{ token: string; name: string }> {
    const name = unique('op');
    const reply = await adminCall(stack.gateway, 'POST', '/tokens', { name, scopes: WRITER, actsForUsers });
    expect(reply.status).toBe(201);
    return { token: (reply.body as { token: string }).token, name };
  }

  /** Signs in with `token`, moves a new consumer to Pro through the console's form, answers the change's row. */
  async function changePlan(token: string): Promise<AuditRow> {
    const consumer = unique('acme');
    expect((await adminCall(stack.gateway, 'POST', '/consumers', { name: consumer, plan: 'free' })).status).toBe(201);
    const client = new ConsoleClient(console_.url);
    expect((await client.signIn(token)).status).toBe(303);
    const saved = await client.submit(`/consumers/${consumer}`, `/consumers/${consumer}/plan`, {
      plan: 'pro',
      perMinute: '',
      perDay: '',
    });
    expect([saved.status, saved.location]).toEqual([303, `/consumers/${consumer}`]);
    const audit = await adminCall(stack.gateway, 'GET', `/audit?target=${consumer}&action=consumer.update`);
    const rows = (audit.body as { items: AuditRow[] }).items;
    expect(rows).toHaveLength(1);
    return rows[0];
  }

  beforeAll(async () => {
    console_ = await startConsole(stack.gateway.adminUrl);
  }, 180_000); // a gateway and a console: slow on a loaded 2-core runner

  it('with actsForUsers: the row names the operator token and the address the console saw', async () => {
    const operator = await createToken(true);
    const row = await changePlan(operator.token);
    expect(row.actorName).toBe(operator.name);
    expect(row.endUserAddress).toMatch(/^(::ffff:)?127\.0\.0\.1$/);
    expect(row.onBehalfOf).toBeNull();
  });

  it('without it: the change is made as before and the row names no address', async () => {
    const operator = await createToken(false);
    const row = await changePlan(operator.token);
    expect([row.actorName, row.endUserAddress, row.onBehalfOf]).toEqual([operator.name, null, null]);
  });

  /** The rows of `query`, once `done` holds of them (the console reports after the answer), or after 15 s. */
  async function rowsOnceThere(query: string, done: (rows: AuditRow[]) => boolean): Promise<AuditRow[]> {
    const deadline = Date.now() + 15_000;
    for (;;) {
      const rows = ((await adminCall(stack.gateway, 'GET', `/audit?limit=1000&${query}`)).body as { items: AuditRow[] })
        .items;
      if (done(rows) || Date.now() > deadline) return rows;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  it('audits sign-ins: with the operator token when it acts for users, else and for failures and lockouts CONSOLE_AUDIT_TOKEN', async () => {
    const reporterName = unique('console-audit');
    const reporter = await adminCall(stack.gateway, 'POST', '/tokens', {
      name: reporterName,
      scopes: ['consumers:read'],
      ownConsumersOnly: true,
      actsForUsers: true,
    });
    expect(reporter.status).toBe(201);
    const audited = await startConsole(stack.gateway.adminUrl, {
      CONSOLE_AUDIT_TOKEN: (reporter.body as { token: string }).token,
    });
    try {
      const withAddress = await createToken(true);
      const without = await createToken(false);
      expect((await new ConsoleClient(audited.url).signIn(withAddress.token)).status).toBe(303);
      expect((await new ConsoleClient(audited.url).signIn(without.token)).status).toBe(303);
      const mine = await rowsOnceThere(`action=user.sign-in&actor=${withAddress.name}`, (r) => r.length > 0);
      expect(mine.map((r) => [r.actorName, r.onBehalfOf, r.endUserAddress])).toEqual([
        [withAddress.name, `operator:${withAddress.name}`, expect.stringMatching(/127\.0\.0\.1$/)],
      ]);
      const reported = await rowsOnceThere(`action=user.sign-in&actor=${reporterName}`, (r) => r.length > 0);
      expect(reported.map((r) => [r.actorName, r.onBehalfOf])).toEqual([[reporterName, `operator:${without.name}`]]);

      // Refused tokens, then the throttle: each one reported, naming the address and the code.
      const guesser = new ConsoleClient(audited.url);
      for (let i = 0; i < 4; i += 1) expect([401, 429]).toContain((await guesser.signIn(`adm_wrong-${i}`)).status);
      const failures = await rowsOnceThere(
        `actor=${reporterName}&order=asc`,
        (r) => r.filter((row) => row.action !== 'user.sign-in').length >= 4,
      );
      // Reported after each answer: in any order.
      const reasons = failures
        .filter((r) => r.action !== 'user.sign-in')
        .map((r) => `${r.action} ${String(r.changes?.reason?.after)}`)
        .sort();
      expect(reasons).toEqual([
        'user.lockout SLOWED_AFTER_FAILURES',
        'user.sign-in-failed UNAUTHORIZED',
        'user.sign-in-failed UNAUTHORIZED',
        'user.sign-in-failed UNAUTHORIZED',
      ]);
      expect(failures.every((r) => /127\.0\.0\.1$/.test(r.endUserAddress ?? ''))).toBe(true);
    } finally {
      await audited.close();
    }
  });

  it('without CONSOLE_AUDIT_TOKEN, a token that may not act for users signs in unaudited, and nothing fails', async () => {
    const operator = await createToken(false);
    expect((await new ConsoleClient(console_.url).signIn(operator.token)).status).toBe(303);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(await rowsOnceThere(`action=user.sign-in&actor=${operator.name}`, () => true)).toEqual([]);
  });
});
