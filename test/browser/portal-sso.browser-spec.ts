import { Browser, BrowserContext, Page } from 'playwright-core';
import { adminCall } from '../support/gateway';
import { call } from '../support/http';
import { PeopleIdentityProvider } from '../support/identity-provider-people';
import { PortalStack } from '../support/portal';
import { linkIn, PortalVisitor } from '../support/portal-visitor';
import { launchChromium } from './launch-chromium';
import { PROVIDER, PROVIDER_ID, startPortalWithProvider } from './portal-with-provider';
import { checkPage } from './page-checks';

const PASSWORD = 'correct horse battery staple';

interface AuditRow {
  action: string;
  onBehalfOf: string | null;
  changes: { reason?: { after: string } } | null;
}

/**
 * Developers sign in to the portal with their company's identity provider (issue #51.2), in Chromium against a real
 * oidc-provider: a developer gets a Free key and calls the API; an existing password account is linked only after its
 * owner proves it (its password, or a mailed link in the same browser), and a pre-registered unverified sign-up gives
 * its registrant nothing; the company's domain is refused on the password forms; wrong state, wrong nonce, a replayed
 * callback and a code of another client are refused; the provider away is a clear page. Each in the admin audit.
 * Screenshots of every new page: /tmp/portal-sso-*.png (and artifacts/pages/portal-sso-*.png by checkPage).
 */
describe('portal sign-in with an identity provider (browser)', () => {
  let portal: Awaited<ReturnType<typeof startPortalWithProvider>> | undefined;
  let idp: PeopleIdentityProvider;
  let stack: PortalStack;
  let portalUrl: string;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;

  beforeAll(async () => {
    portal = await startPortalWithProvider();
    ({ idp, stack, portalUrl } = portal);
    // Another application of the same company: its codes are no good to the portal.
    idp.register({ clientId: 'other-app', redirectUris: [portal.callback], postLogoutRedirectUris: [] });
    browser = await launchChromium();
  }, 300_000);
  afterAll(async () => {
    await browser?.close();
    await portal?.close();
  });
  beforeEach(async () => {
    context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    page = await context.newPage();
    page.setDefaultTimeout(15_000);
  });
  afterEach(async () => {
    await context?.close();
  });

  const shot = (name: string) => page.screenshot({ path: `/tmp/portal-sso-${name}.png`, fullPage: true });

  /** The button on the portal's sign-in page, the provider's login form, back to the portal. */
  async function signIn(login: string): Promise<void> {
    await page.goto(`${portalUrl}/login`);
    await page.getByRole('link', { name: `Sign in with ${PROVIDER}` }).click();
    await page.getByPlaceholder('Enter any login').fill(login);
    await page.getByPlaceholder('and password').fill('demo');
    await page.getByRole('button', { name: 'Sign-in' }).click();
    await page.waitForURL((url) => url.href.startsWith(portalUrl));
  }

  /** The button again while the provider's own session lasts: no login form there, straight back to the portal. */
  async function signInAgain(): Promise<void> {
    await page.goto(`${portalUrl}/login`);
    await page.getByRole('link', { name: `Sign in with ${PROVIDER}` }).click();
    await page.waitForURL(`${portalUrl}/dashboard`);
  }

  /** A verified password account, made as a developer makes one (sign-up, the mailed link with the password). */
  async function passwordAccount(email: string): Promise<void> {
    const visitor = new PortalVisitor(portalUrl);
    await visitor.submit('/signup', { email, password: PASSWORD });
    const token = linkIn((await stack.smtp.next(email, /Verify/)).text, '/verify');
    const verified = await visitor.submit(`/verify?token=${token}`, { token, password: PASSWORD }, '/verify');
    expect(verified.status).toBe(303);
  }

  async function auditRows(action: string): Promise<AuditRow[]> {
    const reply = await adminCall(stack.gateway, 'GET', `/audit?action=${action}&order=desc&limit=50`);
    return (reply.body as { items: AuditRow[] }).items;
  }

  /** Waits for the row the portal reports after its answer: `action`, naming `onBehalfOf`, with `reason` (or none). */
  async function auditRow(action: string, onBehalfOf: string, reason?: string): Promise<AuditRow> {
    for (let i = 0; i < 100; i += 1) {
      const row = (await auditRows(action)).find(
        (r) => r.onBehalfOf === onBehalfOf && r.changes?.reason?.after === reason,
      );
      if (row) return row;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error(`no ${action} row for ${onBehalfOf} (${reason ?? 'no reason'})`);
  }

  const person = (login: string, email: string) => `account:${email} (${login} at ${idp.issuer})`;

  async function rewriteAuthorization(change: (url: URL) => void): Promise<void> {
    await page.route(
      (url) => url.href === `${portalUrl}/login/oidc/${PROVIDER_ID}`,
      async (route) => {
        const answer = await route.fetch({ maxRedirects: 0 });
        const location = new URL(answer.headers().location);
        change(location);
        await route.fulfill({ response: answer, headers: { ...answer.headers(), location: location.href } });
      },
      { times: 1 },
    );
  }

  const callbackAnswer = () =>
    page.waitForResponse((r) => r.url().startsWith(`${portalUrl}/login/oidc/${PROVIDER_ID}/callback`));

  it('signs a developer in through the provider: a new account, its Free key, the API answers 200', async () => {
    await page.goto(`${portalUrl}/login`);
    await shot('sign-in');
    await checkPage(page, 'portal-sso-sign-in');
    await page.goto(`${portalUrl}/signup`);
    await page.getByRole('link', { name: `Sign in with ${PROVIDER}` }).waitFor();
    await shot('sign-up');
    await checkPage(page, 'portal-sso-sign-up');
    await signIn('dev');
    const key = (await page.getByTestId('new-key').innerText()).trim();
    expect(key).toMatch(/^petk_/);
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
    await shot('new-key');
    const answer = await call(`${stack.gateway.url}/v1/pets?limit=1`, { headers: { authorization: `Bearer ${key}` } });
    expect(answer.status).toBe(200);
    await auditRow('user.sign-in', person('dev', 'dev@company.example'), 'ACCOUNT_CREATED');
    // Signed out, then in again: the same account (its identity, not a second account), straight to the dashboard.
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByText('You are signed out').waitFor();
    await auditRow('user.sign-out', person('dev', 'dev@company.example'));
    await signInAgain();
    await auditRow('user.sign-in', person('dev', 'dev@company.example'));
    const consumers = await adminCall(stack.gateway, 'GET', '/consumers?limit=100');
    const mine = (consumers.body as { items: Array<{ email: string | null }> }).items.filter(
      (c) => c.email === 'dev@company.example',
    );
    expect(mine).toHaveLength(1);
  });

  it('rotates the session id at sign-in', async () => {
    await page.goto(`${portalUrl}/login`);
    await page.getByRole('link', { name: `Sign in with ${PROVIDER}` }).click();
    // The session that holds the sign-in in progress.
    const before = (await context.cookies(portalUrl)).find((c) => c.name === 'portal.sid')?.value;
    expect(before).toBeDefined();
    await page.getByPlaceholder('Enter any login').fill('dev');
    await page.getByPlaceholder('and password').fill('demo');
    await page.getByRole('button', { name: 'Sign-in' }).click();
    await page.waitForURL(`${portalUrl}/dashboard`);
    const after = (await context.cookies(portalUrl)).find((c) => c.name === 'portal.sid')?.value;
    expect(after).toBeDefined();
    expect(after).not.toBe(before);
  });

  it("refuses the company's domain on the password forms: they are sent to the provider", async () => {
    await page.goto(`${portalUrl}/login`);
    await page.getByLabel('Email').fill('dev@company.example');
    await page.getByLabel('Password').fill(PASSWORD);
    const answer = page.waitForResponse((r) => r.url() === `${portalUrl}/login` && r.request().method() === 'POST');
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    expect((await answer).status()).toBe(400);
    await page
      .getByRole('alert')
      .filter({ hasText: `Addresses at company.example sign in with ${PROVIDER}` })
      .waitFor();
    await shot('password-refused');
    await checkPage(page, 'portal-sso-password-refused');
    await page.goto(`${portalUrl}/signup`);
    await page.getByLabel('Email').fill('someone.new@company.example');
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.getByText(`Addresses at company.example sign in with ${PROVIDER}`).waitFor();
    await shot('sign-up-refused');
  });

  it('cannot take an existing password account without its password, and links it with the password', async () => {
    await passwordAccount('sam.support@example.com');
    await signIn('sam');
    await page.getByRole('heading', { name: 'Link your account' }).waitFor();
    await shot('link-account');
    await checkPage(page, 'portal-sso-link-account');
    // Nobody is signed in: the dashboard sends to the sign-in page.
    await page.goto(`${portalUrl}/dashboard`);
    await page.waitForURL(`${portalUrl}/login`);
    await auditRow('user.sign-in-failed', person('sam', 'sam.support@example.com'), 'LINK_REQUIRED');
    await page.goto(`${portalUrl}/login/link`);
    await page.getByLabel('Password').fill('not the password of sam');
    await page.getByRole('button', { name: 'Link and sign in' }).click();
    await page.getByText('This is not the password of this account.').waitFor();
    await shot('link-wrong-password');
    await page.goto(`${portalUrl}/dashboard`);
    await page.waitForURL(`${portalUrl}/login`);
    await page.goto(`${portalUrl}/login/link`);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Link and sign in' }).click();
    await page.waitForURL(`${portalUrl}/dashboard`);
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
    await auditRow('user.sign-in', person('sam', 'sam.support@example.com'), 'ACCOUNT_LINKED_BY_PASSWORD');
    // Linked: the next provider sign-in goes straight in.
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByText('You are signed out').waitFor();
    await signInAgain();
  });

  it('links an existing account by a mailed link, which works only in the browser that signed in', async () => {
    await passwordAccount('olivia.ops@example.com');
    await signIn('olivia');
    await page.getByRole('heading', { name: 'Link your account' }).waitFor();
    await page.getByRole('button', { name: 'Email me a link' }).click();
    await page.getByText('We sent a link to').waitFor();
    await shot('link-mailed');
    await checkPage(page, 'portal-sso-link-mailed');
    const mail = await stack.smtp.next('olivia.ops@example.com', /Link/);
    const token = linkIn(mail.text, '/login/link/confirm');
    // Another browser (the mailbox's owner who did not start this, or an attacker who got the mail): refused.
    const other = await browser.newContext();
    try {
      const elsewhere = await other.newPage();
      const answer = await elsewhere.goto(`${portalUrl}/login/link/confirm?token=${token}`);
      expect(answer?.status()).toBe(400);
      await elsewhere.getByText('only in the browser where you signed in').waitFor();
      await elsewhere.screenshot({ path: '/tmp/portal-sso-link-elsewhere.png', fullPage: true });
      await checkPage(elsewhere, 'portal-sso-link-elsewhere');
    } finally {
      await other.close();
    }
    await page.goto(`${portalUrl}/login/link/confirm?token=${token}`);
    await shot('link-confirm');
    await checkPage(page, 'portal-sso-link-confirm');
    await page.getByRole('button', { name: 'Link and sign in' }).click();
    await page.waitForURL(`${portalUrl}/dashboard`);
    await auditRow('user.sign-in', person('olivia', 'olivia.ops@example.com'), 'ACCOUNT_LINKED_BY_MAIL');
  });

  it("takes over an unverified sign-up of the provider's email: whoever pre-registered it gets nothing", async () => {
    // Someone pre-registers nora's address with a password they know; nora never verifies it.
    const attacker = new PortalVisitor(portalUrl);
    await attacker.submit('/signup', { email: 'nora.nobody@example.com', password: 'attacker knows this phrase' });
    const staleLink = linkIn((await stack.smtp.next('nora.nobody@example.com', /Verify/)).text, '/verify');
    await signIn('nora');
    await page.getByTestId('new-key').waitFor();
    await auditRow('user.sign-in', person('nora', 'nora.nobody@example.com'), 'ACCOUNT_CLAIMED');
    // The pending password and its link are dead: no sign-in, no verification with them.
    const signInAttempt = await attacker.submit('/login', {
      email: 'nora.nobody@example.com',
      password: 'attacker knows this phrase',
    });
    expect(signInAttempt.status).toBe(401);
    const verifyAttempt = await attacker.submit(
      `/verify?token=${staleLink}`,
      { token: staleLink, password: 'attacker knows this phrase' },
      '/verify',
    );
    expect(verifyAttempt.status).toBe(400);
  });

  it('refuses a provider email that is not verified', async () => {
    await signIn('unverified');
    await page.getByRole('heading', { name: 'Email address not verified' }).waitFor();
    await shot('email-not-verified');
    await checkPage(page, 'portal-sso-email-not-verified');
    await auditRow('user.sign-in-failed', person('unverified', 'unverified@example.com'), 'EMAIL_NOT_VERIFIED');
  });

  it('refuses a wrong state', async () => {
    await rewriteAuthorization((url) => (url.href = `${portalUrl}/health/ready`));
    await page.goto(`${portalUrl}/login`);
    await page.getByRole('link', { name: `Sign in with ${PROVIDER}` }).click();
    await page.waitForURL(`${portalUrl}/health/ready`);
    const answer = await page.goto(`${portalUrl}/login/oidc/${PROVIDER_ID}/callback?code=forged&state=wrong`);
    expect(answer?.status()).toBe(401);
    await page.getByRole('heading', { name: 'Sign-in not accepted' }).waitFor();
    await shot('refused');
    await checkPage(page, 'portal-sso-refused');
    await page.goto(`${portalUrl}/dashboard`);
    await page.waitForURL(`${portalUrl}/login`);
  });

  it('refuses an ID token with another nonce', async () => {
    await rewriteAuthorization((url) => url.searchParams.set('nonce', 'someone-elses-nonce'));
    const answer = callbackAnswer();
    await signIn('dev');
    expect((await answer).status()).toBe(401);
    await page.getByRole('heading', { name: 'Sign-in not accepted' }).waitFor();
    await page.goto(`${portalUrl}/dashboard`);
    await page.waitForURL(`${portalUrl}/login`);
  });

  it("refuses a code issued to another client (a foreign audience's)", async () => {
    await rewriteAuthorization((url) => url.searchParams.set('client_id', 'other-app'));
    const answer = callbackAnswer();
    await signIn('dev');
    expect((await answer).status()).toBe(401);
    await page.getByRole('heading', { name: 'Sign-in not accepted' }).waitFor();
    await page.goto(`${portalUrl}/dashboard`);
    await page.waitForURL(`${portalUrl}/login`);
  });

  it('refuses a replayed callback (its code and state) once the sign-in is done', async () => {
    let callback = '';
    page.on('request', (request) => {
      if (request.url().startsWith(`${portalUrl}/login/oidc/${PROVIDER_ID}/callback`)) callback = request.url();
    });
    await signIn('dev');
    await page.waitForURL(`${portalUrl}/dashboard`);
    expect(callback).toContain('code=');
    const replayed = await page.goto(callback);
    expect(replayed?.status()).toBe(400);
    await page.getByRole('heading', { name: 'Sign-in not accepted' }).waitFor();
  });

  it('shows a clear page when the provider is away, and signs in again once it is back', async () => {
    await idp.stop();
    try {
      await page.goto(`${portalUrl}/login`);
      const answer = page.waitForResponse((r) => r.url() === `${portalUrl}/login/oidc/${PROVIDER_ID}`);
      await page.getByRole('link', { name: `Sign in with ${PROVIDER}` }).click();
      expect((await answer).status()).toBe(503);
      await page.getByRole('heading', { name: 'Identity provider unreachable' }).waitFor();
      await shot('provider-away');
      await checkPage(page, 'portal-sso-provider-away');
    } finally {
      await idp.start();
    }
    await signIn('dev');
    await page.waitForURL(`${portalUrl}/dashboard`);
  });
});
