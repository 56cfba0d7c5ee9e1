import { Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { AfterAnswer } from '../../../apps/portal/src/accounts/after-answer';
import * as passwords from '../../../apps/portal/src/credentials/passwords';
import { UnverifiedPurge } from '../../../apps/portal/src/accounts/unverified-purge';
import { Mailer } from '@app/mail';
import { emailHash } from '../../../apps/portal/src/throttle/client-address';
import { adminCall, GatewayUnderTest } from '../../support/gateway';
import { PortalStack, PortalUnderTest, startPortalStack } from '../../support/portal';
import { SmtpSink } from '../../support/smtp-sink';
import { linkIn, PortalVisitor as Visitor } from '../../support/portal-visitor';

const PASSWORD = 'a long enough passphrase';
let counter = 0;
const newEmail = (label: string) => `${label}-${Date.now()}-${(counter += 1)}@example.com`;

/**
 * Portal accounts under attack (issue #36 finding 5): pre-account hijacking, links that outlive a password change
 * or a verification, a lockout that kept the owner out, throttles per IPv6 address instead of /64, no cap on
 * consumers, unverified accounts kept forever, sign-up and reset work that tells known from unknown emails, a
 * session row per form view, common passwords and address lists accepted.
 */
describe('portal accounts that resist abuse', () => {
  let stack: PortalStack;
  let smtp: SmtpSink;
  let portal: PortalUnderTest;

  const visitor = (address?: string) => new Visitor(portal.url, address);
  const drain = () => portal.app.get(AfterAnswer).drain();
  const db = () => portal.app.get(DataSource);

  async function signUp(email: string, password = PASSWORD, from = visitor()): Promise<string> {
    const reply = await from.submit('/signup', { email, password });
    expect(reply.status).toBe(200);
    await drain();
    return linkIn((await smtp.next(email, /Verify/)).text, '/verify');
  }

  /** "Verify my email", and the page its 303 leads to (the first key, or when it comes), as a browser sees it. */
  async function verify(token: string, password = PASSWORD, as = visitor()) {
    return as.submitAndFollow(`/verify?token=${token}`, { token, password }, '/verify');
  }

  async function signIn(email: string, password: string, as: Visitor) {
    return as.submit('/login', { email, password });
  }

  async function requestReset(email: string): Promise<string> {
    expect((await visitor().submit('/reset', { email })).status).toBe(200);
    await drain();
    return linkIn((await smtp.next(email, /Reset/)).text, '/reset/confirm');
  }

  beforeAll(async () => {
    stack = await startPortalStack({
      // This file's own sign-ups all come from loopback: only the sign-in throttles are under test here.
      portalEnv: { PORTAL_THROTTLE_ADDRESS_LIMIT: '10000', PORTAL_SIGN_IN_DELAY_AFTER: '6' },
    });
    ({ smtp, portal } = stack);
  }, 180_000); // several servers to start: slow on a loaded 2-core runner
  afterAll(async () => {
    await stack?.close();
  });

  it('never lets the first registrant of an unverified address keep it: the verifier needs the password, the newest sign-up replaces a pending one', async () => {
    const email = newEmail('victim');
    const attackerLink = await signUp(email, 'attacker chosen passphrase');
    const victimLink = await signUp(email, 'the victim own passphrase');
    // The attacker's pending sign-up (and its link) is gone: the victim's replaced it.
    expect((await verify(attackerLink, 'attacker chosen passphrase')).status).toBe(400);
    const wrong = await verify(victimLink, 'attacker chosen passphrase');
    expect(wrong.status).toBe(400);
    expect(wrong.text).toContain('Enter the password you chose when you signed up');
    const verified = await verify(victimLink, 'the victim own passphrase');
    expect(verified.status).toBe(200);
    expect(verified.text).toContain('Your API key');
    expect((await signIn(email, 'attacker chosen passphrase', visitor('198.51.100.1'))).status).toBe(401);
    expect((await signIn(email, 'the victim own passphrase', visitor('198.51.100.2'))).status).toBe(303);
    // A sign-up for the verified address changes nothing (its owner is told by mail).
    expect((await visitor().submit('/signup', { email, password: 'attacker chosen passphrase' })).status).toBe(200);
    await drain();
    await smtp.next(email, /Someone tried/);
    expect((await signIn(email, 'the victim own passphrase', visitor('198.51.100.2'))).status).toBe(303);
  });

  it('kills every unused reset and verify link when the password changes or the account is verified', async () => {
    const email = newEmail('links');
    const verifyLink = await signUp(email);
    const firstReset = await requestReset(email);
    const secondReset = await requestReset(email);
    const changed = await visitor().submit(
      `/reset/confirm?token=${secondReset}`,
      { token: secondReset, password: 'a brand new passphrase' },
      '/reset/confirm',
    );
    expect(changed.status).toBe(303);
    // The older reset link no longer sets a password; the verify link no longer verifies nor signs in.
    expect((await visitor().get(`/reset/confirm?token=${firstReset}`)).status).toBe(400);
    // (The form of a dead link is not shown: the CSRF token comes from another form of the portal.)
    const reused = await visitor().submit(
      '/reset',
      { token: firstReset, password: 'attacker wants this one' },
      '/reset/confirm',
    );
    expect(reused.status).toBe(400);
    expect((await verify(verifyLink, PASSWORD)).status).toBe(400);
    expect((await verify(verifyLink, 'a brand new passphrase')).status).toBe(400);
    expect((await signIn(email, 'attacker wants this one', visitor('198.51.100.3'))).status).toBe(401);
    // (Verified by the reset: this first sign-in shows the account's first key.)
    const firstSignIn = await visitor('198.51.100.3').submitAndFollow('/login', {
      email,
      password: 'a brand new passphrase',
    });
    expect(firstSignIn.posted).toMatchObject({ status: 303, location: '/keys/new' });
    expect(firstSignIn.text).toContain('Your API key');
    // And a verification kills the reset links asked for before it.
    const other = newEmail('links-verify');
    const link = await signUp(other);
    const resetBefore = await requestReset(other);
    expect((await verify(link)).status).toBe(200);
    expect((await visitor().get(`/reset/confirm?token=${resetBefore}`)).status).toBe(400);
  });

  it('slows an attacker per (account, /64) pair and per account, never the owner at a known address; a reset lifts it', async () => {
    const email = newEmail('owner');
    expect((await verify(await signUp(email))).status).toBe(200);
    const owner = visitor('2001:db8:0:1::10');
    expect((await signIn(email, PASSWORD, owner)).status).toBe(303);
    const warn = jest.spyOn(Logger.prototype, 'warn');
    try {
      // Five wrong guesses from five addresses of one /64: one pair, now refused even with the right password.
      for (let i = 1; i <= 5; i += 1)
        expect((await signIn(email, `wrong guess number ${i}`, visitor(`2001:db8:bad:1::${i}`))).status).toBe(401);
      const refused = await signIn(email, PASSWORD, visitor('2001:db8:bad:1::99'));
      expect(refused.status).toBe(429);
      expect(refused.text).toMatch(/Too many attempts\. Wait \d+ minutes? and try again, or reset your password\./);
      // Past PORTAL_SIGN_IN_DELAY_AFTER failures, attempts on the account from a new address are spaced out...
      const spaced = [];
      for (let i = 1; i <= 3; i += 1)
        spaced.push((await signIn(email, 'still wrong', visitor(`203.0.113.${i}`))).status);
      expect(spaced).toContain(429);
      // ...but the owner, at the address it signed in from before, gets in at once with the right password.
      expect((await signIn(email, PASSWORD, owner)).status).toBe(303);
      // Failed sign-ins and refusals are logged at warn: the email's hash and the address block, never a password.
      const lines = warn.mock.calls.map(([message]) => JSON.stringify(message));
      expect(lines).toContainEqual(
        JSON.stringify({ event: 'portal.sign-in.failed', account: emailHash(email), address: '2001:db8:bad:1::/64' }),
      );
      expect(lines.some((line) => line.includes('portal.sign-in.throttled') && line.includes('PAIR_LIMIT'))).toBe(true);
      expect(lines.join('\n')).not.toMatch(/wrong guess|still wrong|a long enough passphrase/);
      expect(lines.join('\n')).not.toContain(email);
    } finally {
      warn.mockRestore();
    }
    // A successful reset lifts the pair's block and the account's delay.
    const reset = await requestReset(email);
    expect(
      (await visitor().submit('/reset', { token: reset, password: 'the owner new passphrase' }, '/reset/confirm'))
        .status,
    ).toBe(303);
    expect((await signIn(email, 'the owner new passphrase', visitor('2001:db8:bad:1::5'))).status).toBe(303);
  });

  it('answers sign-up and reset before any work that depends on the email: known and unknown take the same path', async () => {
    const known = newEmail('known');
    expect((await verify(await signUp(known))).status).toBe(200);
    const unknown = newEmail('unknown');
    const afterAnswer = portal.app.get(AfterAnswer);
    const deferred: Array<() => Promise<void>> = [];
    const run = jest.spyOn(afterAnswer, 'run').mockImplementation((_what, task) => void deferred.push(task));
    const queries = jest.spyOn(db(), 'createQueryRunner');
    const hashes = jest.spyOn(passwords, 'hashPassword');
    const mails = jest.spyOn(portal.app.get(Mailer), 'sendLater');
    try {
      for (const form of ['/signup', '/reset']) {
        const pages: string[] = [];
        for (const email of [known, unknown]) {
          deferred.length = 0;
          queries.mockClear();
          hashes.mockClear();
          mails.mockClear();
          const reply = await visitor().submit(form, { email, password: 'a passphrase for the form' });
          expect(reply.status).toBe(200);
          pages.push(reply.text.replaceAll(email, '<email>'));
          // Answered: no query, no hash, no mail yet; exactly one piece of work left for after the answer.
          expect(queries).not.toHaveBeenCalled();
          expect(hashes).not.toHaveBeenCalled();
          expect(mails).not.toHaveBeenCalled();
          expect(deferred).toHaveLength(1);
          await deferred[0]();
          if (form === '/signup') {
            // The same expensive work either way: one argon2 hash, one mail (a "someone tried" or a link).
            expect(hashes).toHaveBeenCalledTimes(1);
            expect(mails).toHaveBeenCalledTimes(1);
          }
        }
        expect(pages[0]).toBe(pages[1]);
      }
    } finally {
      run.mockRestore();
      queries.mockRestore();
      hashes.mockRestore();
      mails.mockRestore();
    }
    await smtp.next(known, /Someone tried/);
    await smtp.next(known, /Reset/);
    await smtp.next(unknown, /Verify/);
  });

  it('stores no session row for any number of cookieless views of the forms', async () => {
    const rows = async () => Number((await db().query(`SELECT count(*)::int AS n FROM "portal"."session"`))[0].n);
    const before = await rows();
    for (let i = 0; i < 40; i += 1) {
      const reply = await fetch(`${portal.url}${['/signup', '/login', '/reset'][i % 3]}`);
      expect(reply.status).toBe(200);
      await reply.text();
    }
    expect(await rows()).toBe(before);
    // The forms still work without a stored session (the CSRF token is bound to a visitor cookie).
    expect((await visitor().submit('/login', { email: newEmail('nobody'), password: 'whatever it is' })).status).toBe(
      401,
    );
  });

  it('refuses common and blank passwords and anything but one address, and mails only that one address', async () => {
    for (const [password, message] of [
      ['password1234', 'This password is one of the most common ones'],
      [' '.repeat(12), 'Use more than spaces'],
    ]) {
      const reply = await visitor().submit('/signup', { email: newEmail('weak'), password });
      expect(reply.status).toBe(400);
      expect(reply.text).toContain(message);
    }
    for (const email of ['a,attacker\n@evil.test', 'Victim <victim@example.com>', 'a@example.com, b@evil.test']) {
      const reply = await visitor().submit('/signup', { email, password: PASSWORD });
      expect(reply.status).toBe(400);
      expect(reply.text).toContain('Enter an email address such as name@example.com.');
      expect((await visitor().submit('/reset', { email })).status).toBe(400);
    }
    await drain();
    expect(smtp.mails.filter((mail) => mail.to.some((to) => to.includes('evil.test')))).toEqual([]);
  });

  it('one idiom: a refused form is its page again (400, the errors by the fields, the email as typed, never the password); a signed-in page without a session is a 303 to the sign-in page', async () => {
    const password = 'short-pw-7';
    const signUp = await visitor().submit('/signup', { email: 'Not An Address', password });
    expect(signUp.status).toBe(400);
    expect(signUp.text).toContain('<h1>Create an account</h1>');
    expect(signUp.text).toContain('value="Not An Address"');
    expect(signUp.text).toContain('Enter an email address such as name@example.com.');
    expect(signUp.text).toContain('Use at least 12 characters.');
    expect(signUp.text).not.toContain(password);
    const reset = await visitor().submit('/login', { token: 'some-link-token', password }, '/reset/confirm');
    expect(reset.status).toBe(400);
    expect(reset.text).toContain('<h1>Choose a new password</h1>');
    expect(reset.text).toContain('name="token" value="some-link-token"');
    expect(reset.text).toContain('Use at least 12 characters.');
    expect(reset.text).not.toContain(password);
    const anonymous = visitor();
    for (const path of ['/dashboard', '/plan', '/keys/new']) {
      expect(await anonymous.get(path)).toMatchObject({ status: 303, location: '/login' });
    }
    expect(await anonymous.submit('/login', {}, '/keys')).toMatchObject({ status: 303, location: '/login' });
  });

  it('purges unverified accounts past the configured age, and only those', async () => {
    const stale = newEmail('stale');
    const staleLink = await signUp(stale);
    const kept = newEmail('kept');
    expect((await verify(await signUp(kept))).status).toBe(200);
    const fresh = newEmail('fresh');
    await signUp(fresh);
    await db().query(
      `UPDATE "portal"."accounts" SET "created_at" = now() - interval '73 hours' WHERE "email" = ANY($1)`,
      [[stale, kept]],
    );
    await portal.app.get(UnverifiedPurge).runOnce();
    const left = (await db().query(`SELECT "email" FROM "portal"."accounts" WHERE "email" = ANY($1)`, [
      [stale, kept, fresh],
    ])) as Array<{ email: string }>;
    expect(left.map((row) => row.email).sort()).toEqual([fresh, kept].sort());
    expect((await verify(staleLink)).status).toBe(400);
  });
});

describe('portal caps and throttles per address block', () => {
  let stack: PortalStack;
  let gateway: GatewayUnderTest;
  let smtp: SmtpSink;
  let portal: PortalUnderTest;

  beforeAll(async () => {
    stack = await startPortalStack({
      portalEnv: { PORTAL_THROTTLE_ADDRESS_LIMIT: '3', PORTAL_CONSUMERS_PER_BLOCK_PER_HOUR: '1' },
    });
    ({ gateway, smtp, portal } = stack);
  }, 180_000); // several servers to start: slow on a loaded 2-core runner
  afterAll(async () => {
    await stack?.close();
  });

  it('counts every address of an IPv6 /64 as one (an IPv4 address as itself)', async () => {
    const statuses: number[] = [];
    for (let i = 1; i <= 4; i += 1)
      statuses.push(
        (
          await new Visitor(portal.url, `2001:db8:64:1::${i}`).submit('/signup', {
            email: newEmail('flood'),
            password: PASSWORD,
          })
        ).status,
      );
    expect(statuses).toEqual([200, 200, 200, 429]);
    const otherBlock = new Visitor(portal.url, '2001:db8:64:2::1');
    expect((await otherBlock.submit('/signup', { email: newEmail('flood'), password: PASSWORD })).status).toBe(200);
    await portal.app.get(AfterAnswer).drain();
  });

  it('creates at most PORTAL_CONSUMERS_PER_BLOCK_PER_HOUR consumers per address block (one per verified account), then says when the key comes', async () => {
    const links: string[] = [];
    for (const [i, email] of [newEmail('capped-a'), newEmail('capped-b')].entries()) {
      const from = new Visitor(portal.url, `198.51.100.${50 + i}`);
      expect((await from.submit('/signup', { email, password: PASSWORD })).status).toBe(200);
      await portal.app.get(AfterAnswer).drain();
      links.push(linkIn((await smtp.next(email, /Verify/)).text, '/verify'));
    }
    // Both verified from one address block: its hour's one consumer goes to the first.
    const verifyAt = (token: string) =>
      new Visitor(portal.url, '198.51.100.60').submitAndFollow(
        `/verify?token=${token}`,
        { token, password: PASSWORD },
        '/verify',
      );
    expect((await verifyAt(links[0])).text).toContain('Your API key');
    const capped = await verifyAt(links[1]);
    expect(capped.posted).toMatchObject({ status: 303, location: '/key' });
    expect(capped.status).toBe(200);
    expect(capped.text).toContain('Your API key is on its way');
    expect(capped.text).toContain('data-testid="key-comes-at"');
    const consumers = await adminCall(gateway, 'GET', '/consumers?limit=100');
    const names = ((consumers.body as { items: Array<{ name: string }> }).items ?? []).map((c) => c.name);
    expect(names.filter((name) => name.startsWith('portal-'))).toHaveLength(1);
  });
});
