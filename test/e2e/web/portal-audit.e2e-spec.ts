import { Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { AccountEntity } from '../../../apps/portal/src/accounts/account.entity';
import { AfterAnswer } from '../../../apps/portal/src/accounts/after-answer';
import { SignInAudit } from '@app/web';
import { adminCall, GatewayUnderTest } from '../../support/gateway';
import { PortalStack, PortalUnderTest, startPortalStack } from '../../support/portal';
import { PortalVisitor as Developer } from '../../support/portal-visitor';
import { SmtpSink } from '../../support/smtp-sink';

const PASSWORD = 'a long enough passphrase';
const NOT_NAMED = 'The audit will not name developers: mint the portal token again with --for portal.';
let counter = 0;
const newEmail = (label: string) => `${label}-${Date.now()}-${(counter += 1)}@example.com`;

interface AuditRow {
  action: string;
  changes: Record<string, { before: unknown; after: unknown }> | null;
  actorName: string;
  targetConsumer: string | null;
  onBehalfOf: string | null;
  endUserAddress: string | null;
}

/**
 * The developer behind a portal change reaches the audit (issue #36 finding 6, issue #37 point 4): with a token
 * minted by `--for portal` (actsForUsers) every row of a sign-up and a key rotation names `account:<id> <email>` and
 * the developer's address; a token minted before keeps every flow working, unnamed, with one warning.
 */
describe('the portal names the developer behind each change in the audit', () => {
  let stack: PortalStack;
  let gateway: GatewayUnderTest;
  let smtp: SmtpSink;
  let named: PortalUnderTest;
  let unnamed: PortalUnderTest;
  let warn: jest.SpyInstance;

  beforeAll(async () => {
    warn = jest.spyOn(Logger.prototype, 'warn');
    // Two portals on one gateway and one database, each on a token of its own: `--for portal`'s, and one minted before.
    stack = await startPortalStack({
      tokens: [{ actsForUsers: true }, { actsForUsers: false }],
      portalEnv: { PORTAL_THROTTLE_ADDRESS_LIMIT: '10000' },
    });
    ({ gateway, smtp } = stack);
    [named, unnamed] = stack.portals;
  }, 180_000); // several servers to start: slow on a loaded 2-core runner
  afterAll(async () => {
    warn?.mockRestore();
    await stack?.close();
  });

  /** Signs up, verifies (the consumer and its first key are made), then rotates that key: every flow must work. */
  async function signUpAndRotate(portal: PortalUnderTest, email: string, address: string) {
    const developer = new Developer(portal.url, address);
    expect((await developer.submit('/signup', { email, password: PASSWORD })).status).toBe(200);
    await portal.app.get(AfterAnswer).drain();
    const mail = (await smtp.next(email, /Verify/)).text;
    const token = /https?:\/\/\S+\/verify\?token=([A-Za-z0-9_-]+)/.exec(mail)![1];
    const verified = await developer.submitAndFollow(
      `/verify?token=${token}`,
      { token, password: PASSWORD },
      '/verify',
    );
    expect(verified.posted).toMatchObject({ status: 303, location: '/keys/new' });
    expect(verified.status).toBe(200);
    expect(verified.text).toContain('Your API key');
    const account = (await portal.app.get(DataSource).getRepository(AccountEntity).findOneBy({ email }))!;
    const consumer = account.consumerName!;
    const keys = (await adminCall(gateway, 'GET', `/consumers/${consumer}`)).body as { keys: { id: string }[] };
    const rotated = await developer.submit('/dashboard', { overlap: 'none' }, `/keys/${keys.keys[0].id}/rotate`);
    expect(rotated.status).toBe(303);
    const audit = await adminCall(gateway, 'GET', `/audit?target=${consumer}&order=asc&limit=100`);
    expect(audit.status).toBe(200);
    return { account, rows: (audit.body as { items: AuditRow[] }).items };
  }

  it('with actsForUsers: the sign-up and the rotation rows name account:<id> <email> and the address', async () => {
    const email = newEmail('named');
    const { account, rows } = await signUpAndRotate(named, email, '198.51.100.36');
    expect(rows.map((r) => r.action)).toEqual(['consumer.create', 'key.rotate']);
    for (const row of rows) {
      expect(row.onBehalfOf).toBe(`account:${account.id} ${email}`);
      expect(row.endUserAddress).toBe('198.51.100.36');
    }
  });

  it('without it (a token minted before): every flow works, the rows name no one, and one warning says why', async () => {
    const { rows } = await signUpAndRotate(unnamed, newEmail('unnamed'), '198.51.100.37');
    await signUpAndRotate(unnamed, newEmail('unnamed'), '198.51.100.38');
    expect(rows.map((r) => r.action)).toEqual(['consumer.create', 'key.rotate']);
    for (const row of rows) expect([row.onBehalfOf, row.endUserAddress]).toEqual([null, null]);
    // Asked once per portal: the token's record is read on the first call, not on each.
    expect(warn.mock.calls.filter(([message]) => message === NOT_NAMED)).toHaveLength(1);
  });

  it('audits a successful sign-in, naming the email and the address', async () => {
    const email = newEmail('signs-in');
    await signUpAndRotate(named, email, '198.51.100.39');
    const developer = new Developer(named.url, '198.51.100.40');
    expect((await developer.submit('/login', { email, password: PASSWORD })).status).toBe(303);
    await named.app.get(SignInAudit).drain();
    const rows = (
      (await adminCall(gateway, 'GET', `/audit?action=user.sign-in&limit=100`)).body as { items: AuditRow[] }
    ).items;
    expect(rows.filter((r) => r.onBehalfOf === `account:${email}`).map((r) => r.endUserAddress)).toEqual([
      '198.51.100.40',
    ]);
  });

  it('audits failed sign-ins and the lockout that follows, naming the email typed and the address', async () => {
    const email = newEmail('guessed');
    const attacker = new Developer(named.url, '198.51.100.41');
    const statuses: number[] = [];
    for (let i = 0; i < 6; i += 1)
      statuses.push((await attacker.submit('/login', { email, password: `wrong guess ${i}` })).status);
    // PORTAL_SIGN_IN_PAIR_LIMIT (5) failures, then the pair is refused.
    expect(statuses).toEqual([401, 401, 401, 401, 401, 429]);
    await named.app.get(SignInAudit).drain();
    const rows = (
      (await adminCall(gateway, 'GET', `/audit?action=user.sign-in-failed&limit=100`)).body as { items: AuditRow[] }
    ).items.filter((r) => r.onBehalfOf === `account:${email}`);
    expect(rows.map((r) => [r.actorName, r.endUserAddress])).toEqual(
      Array(5).fill([expect.stringMatching(/^portal-/), '198.51.100.41']),
    );
    const locked = ((await adminCall(gateway, 'GET', `/audit?action=user.lockout`)).body as { items: AuditRow[] })
      .items;
    expect(
      locked
        .filter((r) => r.onBehalfOf === `account:${email}`)
        .map((r) => [r.endUserAddress, r.changes?.reason?.after]),
    ).toEqual([['198.51.100.41', 'PAIR_LIMIT']]);
  });

  it('a token that may not act for users: sign-in failures still answer as before, the log says what the audit lost', async () => {
    const email = newEmail('unaudited');
    warn.mockClear();
    const reply = await new Developer(unnamed.url, '198.51.100.42').submit('/login', { email, password: 'wrong one' });
    expect(reply.status).toBe(401);
    await unnamed.app.get(SignInAudit).drain();
    expect(warn).toHaveBeenCalledWith(
      expect.objectContaining({ event: 'audit event not recorded', kind: 'sign-in-failed', code: 'FORBIDDEN' }),
    );
  });
});

/**
 * Portals behind a balancer: each instance reports its own sign-ins (its SignInAudit, after its answers), so the
 * audit holds every sign-in, whichever instance answered it.
 */
describe('two portal instances behind one gateway', () => {
  let stack: PortalStack;

  beforeAll(async () => {
    stack = await startPortalStack({ instances: 2, portalEnv: { PORTAL_THROTTLE_ADDRESS_LIMIT: '10000' } });
  }, 180_000); // several servers to start: slow on a loaded 2-core runner
  afterAll(async () => {
    await stack?.close();
  });

  it("audits each instance's successful sign-ins, naming the email and the address", async () => {
    const [first, second] = stack.portals;
    const email = newEmail('two-instances');
    const developer = new Developer(first.url, '198.51.100.50');
    expect((await developer.submit('/signup', { email, password: PASSWORD })).status).toBe(200);
    await first.app.get(AfterAnswer).drain();
    const mail = (await stack.smtp.next(email, /Verify/)).text;
    const token = /https?:\/\/\S+\/verify\?token=([A-Za-z0-9_-]+)/.exec(mail)![1];
    expect((await developer.submit(`/verify?token=${token}`, { token, password: PASSWORD }, '/verify')).status).toBe(
      303,
    );
    // One sign-in on each instance (the account is in their one database), from an address of its own.
    for (const [portal, address] of [
      [first, '198.51.100.51'],
      [second, '198.51.100.52'],
    ] as const) {
      expect((await new Developer(portal.url, address).submit('/login', { email, password: PASSWORD })).status).toBe(
        303,
      );
      await portal.app.get(SignInAudit).drain();
    }
    const rows = (
      (await adminCall(stack.gateway, 'GET', `/audit?action=user.sign-in&limit=100`)).body as { items: AuditRow[] }
    ).items.filter((r) => r.onBehalfOf === `account:${email}`);
    expect(rows.map((r) => r.endUserAddress).sort()).toEqual(['198.51.100.51', '198.51.100.52']);
    expect(new Set(rows.map((r) => r.actorName)).size).toBe(1); // both on the stack's one portal token
  });
});
