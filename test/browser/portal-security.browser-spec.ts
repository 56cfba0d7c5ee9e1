import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { Browser, BrowserContext, Page } from 'playwright-core';
import { adminCall, GatewayUnderTest } from '../support/gateway';
import { call } from '../support/http';
import { PortalStack, PortalUnderTest, startPortalStack } from '../support/portal';
import type { SmtpSink } from '../support/smtp-sink';
import { ARTIFACTS, launchChromium } from './launch-chromium';

const PASSWORD = 'a long enough passphrase';
let counter = 0;
const newEmail = (label: string) => `${label}-${Date.now()}-${(counter += 1)}@example.com`;

/**
 * The portal's security (issue #25 point 7): one account cannot reach another's keys or usage by any URL, forms
 * without a CSRF token are refused, a session id planted before sign-in is worthless after it, sign-in guesses are
 * throttled per account and per address (counted in PostgreSQL: shared by instances), and two portal instances on
 * one database share sessions.
 */
describe('developer portal security', () => {
  let stack: PortalStack;
  let gateway: GatewayUnderTest;
  let smtp: SmtpSink;
  let a: PortalUnderTest;
  let b: PortalUnderTest;
  let browser: Browser;
  const contexts: BrowserContext[] = [];

  async function newPage(): Promise<Page> {
    const context = await browser.newContext();
    contexts.push(context);
    const page = await context.newPage();
    page.setDefaultTimeout(10_000);
    return page;
  }

  /** Signs up and verifies through the mailed link; answers the first key. */
  async function signUp(page: Page, email: string, portal = a): Promise<string> {
    await page.goto(`${portal.url}/signup`);
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.getByRole('heading', { name: 'Check your email' }).waitFor();
    const mail = await smtp.next(email, /Verify/);
    await page.goto(/https?:\/\/\S+\/verify\?token=[A-Za-z0-9_-]+/.exec(mail.text)![0]);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Verify my email' }).click();
    return (await page.getByTestId('new-key').innerText()).trim();
  }

  async function signIn(page: Page, email: string, password = PASSWORD, portal = a): Promise<void> {
    await page.goto(`${portal.url}/login`);
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Sign in' }).click();
  }

  const keyIds = async (page: Page, portal = a) => {
    await page.goto(`${portal.url}/dashboard`);
    return page.locator('[data-key-id]').evaluateAll((rows) => rows.map((row) => row.getAttribute('data-key-id')!));
  };

  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    stack = await startPortalStack({ instances: 2 });
    ({ gateway, smtp } = stack);
    [a, b] = stack.portals;
    browser = await launchChromium();
  });
  afterAll(async () => {
    for (const context of contexts) await context.close();
    await browser?.close();
    await stack?.close();
  });

  it('marks every page no-store (signed in or not), while the assets stay cacheable', async () => {
    const page = await newPage();
    await signUp(page, newEmail('no-store'));
    for (const path of ['/dashboard', '/plan', '/login']) {
      const response = await page.goto(`${a.url}${path}`);
      expect([path, response?.headers()['cache-control']]).toEqual([path, 'no-store']);
    }
    expect((await call(`${a.url}/assets/swagger-ui/swagger-ui.css`)).headers.get('cache-control')).toBe(
      'public, max-age=3600',
    );
  });

  it('serves only the Swagger UI files the API reference loads: no demo page, package.json or source maps', async () => {
    for (const file of ['swagger-ui.css', 'swagger-ui-bundle.js'])
      expect([file, (await call(`${a.url}/assets/swagger-ui/${file}`)).status]).toEqual([file, 200]);
    for (const file of [
      'index.html',
      'package.json',
      'swagger-ui-bundle.js.map',
      'swagger-initializer.js',
      'oauth2-redirect.html',
      '',
      '../package.json',
    ]) {
      expect([file, (await call(`${a.url}/assets/swagger-ui/${file}`)).status]).toEqual([file, 404]);
    }
  });

  it("keeps one account away from another's keys and usage, whatever the URL", async () => {
    const first = await newPage();
    const firstKey = await signUp(first, newEmail('first'));
    const [firstKeyId] = await keyIds(first);
    const firstConsumer = (await first.locator('code').first().innerText()).trim();
    const second = await newPage();
    await signUp(second, newEmail('second'));

    // Every portal URL that names a key, with the first account's key id, from the second account's session.
    await second.goto(`${a.url}/keys/${firstKeyId}/revoke`);
    await second.getByText('No such key.').waitFor();
    await second.goto(`${a.url}/dashboard`);
    for (const path of [`/keys/${firstKeyId}/revoke`, `/keys/${firstKeyId}/rotate`]) {
      const csrf = await second.locator('input[name=_csrf]').first().inputValue();
      const reply = await second.request.post(`${a.url}${path}`, {
        form: { _csrf: csrf, overlap: 'none' },
        maxRedirects: 0,
      });
      expect(reply.status()).toBe(303);
      await second.goto(`${a.url}/dashboard`);
      await second.getByText('No such key.').waitFor();
    }
    // URLs that would name the consumer do not exist; the dashboard ignores a query naming it.
    for (const path of [
      `/consumers/${firstConsumer}`,
      `/consumers/${firstConsumer}/usage`,
      `/dashboard/${firstConsumer}`,
    ]) {
      expect((await second.request.get(`${a.url}${path}`)).status()).toBe(404);
    }
    await second.goto(`${a.url}/dashboard?consumer=${firstConsumer}&name=${firstConsumer}`);
    expect(await second.locator('main').innerText()).not.toContain(firstConsumer);
    await second.screenshot({ path: join(ARTIFACTS, 'portal-other-account.png'), fullPage: true });
    // The first key still works, and is the first account's only key still.
    expect(
      (await call(`${gateway.url}/v1/pets?limit=1`, { headers: { authorization: `Bearer ${firstKey}` } })).status,
    ).toBe(200);
    const consumer = (await adminCall(gateway, 'GET', `/consumers/${firstConsumer}`)).body as {
      keys: Array<{ state: string; replacedBy: string | null }>;
    };
    expect(consumer.keys).toEqual([expect.objectContaining({ state: 'active', replacedBy: null })]);
  });

  it("refuses a form without its CSRF token, or with another session's", async () => {
    const page = await newPage();
    await signUp(page, newEmail('csrf'));
    const before = (await keyIds(page)).length;
    for (const form of [{}, { _csrf: 'forged' }] as Array<Record<string, string>>) {
      const reply = await page.request.post(`${a.url}/keys`, { form, maxRedirects: 0 });
      expect(reply.status()).toBe(403);
      expect(await reply.text()).toContain('Form expired');
    }
    const other = await newPage();
    await other.goto(`${a.url}/login`);
    const othersToken = await other.locator('input[name=_csrf]').first().inputValue();
    expect((await page.request.post(`${a.url}/keys`, { form: { _csrf: othersToken }, maxRedirects: 0 })).status()).toBe(
      403,
    );
    // Sign-out too is a form: a cross-site POST cannot sign anyone out.
    expect((await page.request.post(`${a.url}/logout`, { form: {}, maxRedirects: 0 })).status()).toBe(403);
    expect((await keyIds(page)).length).toBe(before);
  });

  it('gives a new session id at sign-in: a planted one is worth nothing (session fixation)', async () => {
    const email = newEmail('fixation');
    const page = await newPage();
    await signUp(page, email);
    await page.getByRole('link', { name: 'Go to your dashboard' }).click();
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();

    // Viewing a form stores no session: the id an attacker can plant is one of a session they hold (their own).
    const attacker = await newPage();
    const attackerEmail = newEmail('fixation-attacker');
    await signUp(attacker, attackerEmail);
    const planted = (await attacker.context().cookies()).find((c) => c.name === 'portal.sid')!;
    expect(planted).toBeDefined();
    expect(planted.httpOnly).toBe(true);
    expect(planted.sameSite).toBe('Lax');
    const victim = await newPage();
    await victim.context().addCookies([{ ...planted }]);
    await victim.goto(`${a.url}/login`);
    await victim.getByLabel('Email').fill(email);
    await victim.getByLabel('Password').fill(PASSWORD);
    await victim.getByRole('button', { name: 'Sign in' }).click();
    await victim.getByRole('heading', { name: 'Your dashboard' }).waitFor();
    const after = (await victim.context().cookies()).find((c) => c.name === 'portal.sid')!;
    expect(after.value).not.toBe(planted.value);

    // The planted id never becomes the victim's session: the sign-in ended it (regenerated), whoever held it.
    await attacker.goto(`${a.url}/dashboard`);
    expect(new URL(attacker.url()).pathname).toBe('/login');
  });

  it('shares sessions between two portal instances on one database', async () => {
    const email = newEmail('shared');
    const page = await newPage();
    await signUp(page, email);
    await signIn(page, email, PASSWORD, a);
    await page.getByRole('heading', { name: 'Your dashboard' }).waitFor();
    // Cookies belong to the host, not the port: instance B gets the session A made.
    await page.goto(`${b.url}/dashboard`);
    await page.getByRole('heading', { name: 'Your dashboard' }).waitFor();
    expect(await page.locator('main').innerText()).toContain(email);
    // And a form rendered by B is accepted by A (same secret, same session).
    await page.goto(`${b.url}/dashboard`);
    const csrf = await page.locator('input[name=_csrf]').first().inputValue();
    expect((await page.request.post(`${a.url}/keys`, { form: { _csrf: csrf } })).status()).toBe(200);
  });

  it('throttles sign-in guesses per account (on every instance), keeping what was typed, and says nothing of who exists', async () => {
    const email = newEmail('brute');
    const page = await newPage();
    await signUp(page, email);
    await page.getByRole('link', { name: 'Go to your dashboard' }).click();
    await page.getByRole('button', { name: 'Sign out' }).click();
    const unknown = newEmail('nobody');
    await signIn(page, unknown, 'whatever whatever');
    const unknownMessage = await page.getByRole('alert').innerText();
    await signIn(page, email, 'wrong password here');
    expect(await page.getByRole('alert').innerText()).toBe(unknownMessage);
    expect(await page.getByLabel('Email').inputValue()).toBe(email);
    expect(await page.getByLabel('Password').inputValue()).toBe('');
    await page.screenshot({ path: join(ARTIFACTS, 'portal-login-failed.png'), fullPage: true });
    // Five wrong guesses per (account, address) pair and window (the first above included), over both instances.
    for (let i = 0; i < 4; i += 1) await signIn(page, email, `wrong password ${i}`, i % 2 ? a : b);
    await signIn(page, email, PASSWORD, b);
    await page.getByText(/Too many attempts/).waitFor();
    expect(await page.getByLabel('Email').inputValue()).toBe(email);
    await page.screenshot({ path: join(ARTIFACTS, 'portal-login-throttled.png'), fullPage: true });
    // The right password does not get through from this address while blocked, on either instance...
    await signIn(page, email, PASSWORD, a);
    await page.getByText(/Too many attempts/).waitFor();
    // ...but the guesses slow the attacker, not the owner: from another address, the right password signs in.
    const owner = await newPage();
    await owner.setExtraHTTPHeaders({ 'x-forwarded-for': '198.51.100.77' });
    await signIn(owner, email, PASSWORD, b);
    await owner.getByRole('heading', { name: 'Your dashboard' }).waitFor();
  });

  it('keeps what was typed on the reset form and answers the same for a known and an unknown email', async () => {
    const page = await newPage();
    await page.goto(`${a.url}/reset`);
    await page.getByLabel('Email').fill('not-an-email');
    await page.getByRole('button', { name: 'Send reset link' }).click();
    await page.getByText('Enter an email address such as name@example.com.').waitFor();
    expect(await page.getByLabel('Email').inputValue()).toBe('not-an-email');
    await page.screenshot({ path: join(ARTIFACTS, 'portal-reset-error.png'), fullPage: true });
    const texts: string[] = [];
    const unknown = newEmail('unknown-reset');
    await page.goto(`${a.url}/reset`);
    await page.getByLabel('Email').fill(unknown);
    await page.getByRole('button', { name: 'Send reset link' }).click();
    texts.push((await page.locator('main').innerText()).replace(unknown, '<email>'));
    const known = newEmail('known-reset');
    const owner = await newPage();
    await signUp(owner, known);
    await page.goto(`${a.url}/reset`);
    await page.getByLabel('Email').fill(known);
    await page.getByRole('button', { name: 'Send reset link' }).click();
    texts.push((await page.locator('main').innerText()).replace(known, '<email>'));
    expect(texts[0]).toBe(texts[1]);
    // The known one gets a working, single-use link.
    const mail = await smtp.next(known, /Reset/);
    const link = /https?:\/\/\S+\/reset\/confirm\?token=[A-Za-z0-9_-]+/.exec(mail.text)![0];
    await page.goto(link);
    await page.getByLabel('New password').fill('short');
    await page.getByRole('button', { name: 'Set new password' }).click();
    await page.getByText('Use at least 12 characters.').waitFor();
    await page.getByLabel('New password').fill('another long passphrase');
    await page.getByRole('button', { name: 'Set new password' }).click();
    await page.getByText('Your password was changed').waitFor();
    // The sessions signed in with the old password are over.
    await owner.goto(`${a.url}/dashboard`);
    expect(new URL(owner.url()).pathname).toBe('/login');
    await signIn(page, known, 'another long passphrase');
    await page.getByRole('heading', { name: 'Your dashboard' }).waitFor();
    await page.goto(link);
    await page.getByText('already used or has expired').waitFor();
  });
});

describe('developer portal throttling per address', () => {
  let stack: PortalStack;
  let portal: PortalUnderTest;

  beforeAll(async () => {
    stack = await startPortalStack({ portalEnv: { PORTAL_THROTTLE_ADDRESS_LIMIT: '4' } });
    ({ portal } = stack);
  });
  afterAll(() => stack?.close());

  it('refuses the fifth sign-in from one address within the window, whatever the accounts', async () => {
    // Without a browser: each attempt carries its own session's CSRF token (CSRF is checked before the throttle counts).
    const statuses: number[] = [];
    for (let i = 0; i < 5; i += 1) {
      const form = await call(`${portal.url}/login`);
      const cookie = form.headers
        .getSetCookie()
        .map((c) => c.split(';')[0])
        .join('; ');
      const csrf = /name="_csrf" value="([^"]+)"/.exec(form.text)![1];
      const reply = await call(`${portal.url}/login`, {
        method: 'POST',
        headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          _csrf: csrf,
          email: `someone-${i}@example.com`,
          password: 'not the password',
        }).toString(),
      });
      statuses.push(reply.status);
    }
    expect(statuses).toEqual([401, 401, 401, 401, 429]);
  });
});
