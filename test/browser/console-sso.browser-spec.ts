import { randomBytes } from 'node:crypto';
import { Browser, BrowserContext, Page } from 'playwright-core';
import { ConsoleUnderTest, startConsole } from '../support/console';
import { adminCall, GatewayUnderTest, startGateway } from '../support/gateway';
import { DEMO_ROLES, PeopleIdentityProvider } from '../support/identity-provider-people';
import { launchChromium } from './launch-chromium';
import { checkPage } from './page-checks';

const PROVIDER = 'Example SSO';
const CLIENT_ID = 'petstore-console';

/**
 * Operators sign in to the console with their company's identity provider (issue #51), in Chromium against a real
 * oidc-provider: the admin role changes a plan and the audit row names them; the read-only role sees no write form
 * and its direct POST is refused by the admin API; no mapped role is a page; sign-out ends both sessions; a wrong
 * state or nonce, a replayed callback, a code of another client are refused; the provider away is a clear page.
 * Screenshots of every new page: artifacts/pages/console-sso-*.png and /tmp/sso-*.png.
 */
describe('console sign-in with an identity provider (browser)', () => {
  let idp: PeopleIdentityProvider;
  let gateway: GatewayUnderTest;
  let consoleApp: ConsoleUnderTest;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  const secret = randomBytes(24).toString('hex');

  beforeAll(async () => {
    idp = await PeopleIdentityProvider.start();
    gateway = await startGateway({
      petsUrl: 'http://127.0.0.1:1',
      env: {
        ADMIN_OIDC_ISSUER: idp.issuer,
        ADMIN_OIDC_AUDIENCE: CLIENT_ID,
        ADMIN_OIDC_ROLES: JSON.stringify(DEMO_ROLES),
      },
    });
    consoleApp = await startConsole(gateway.adminUrl, {
      CONSOLE_OIDC_ISSUER: idp.issuer,
      CONSOLE_OIDC_CLIENT_ID: CLIENT_ID,
      CONSOLE_OIDC_CLIENT_SECRET: secret,
      CONSOLE_OIDC_NAME: PROVIDER,
    });
    const redirect = `${consoleApp.url}/sign-in/oidc/callback`;
    const postLogout = `${consoleApp.url}/sign-in?out=1`;
    idp.register({
      clientId: CLIENT_ID,
      clientSecret: secret,
      redirectUris: [redirect],
      postLogoutRedirectUris: [postLogout],
    });
    // Another application of the same company: its codes are no good to the console.
    idp.register({ clientId: 'other-app', redirectUris: [redirect], postLogoutRedirectUris: [] });
    await adminCall(gateway, 'POST', '/consumers', { name: 'acme-sso', plan: 'free' });
    browser = await launchChromium();
  }, 300_000); // a provider, a gateway, a console and Chromium: slow on a loaded 2-core runner
  afterAll(async () => {
    await browser?.close();
    await consoleApp?.close();
    await gateway?.close();
    await idp?.stop();
  });
  beforeEach(async () => {
    context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    page = await context.newPage();
    page.setDefaultTimeout(15_000);
  });
  afterEach(async () => {
    await context?.close();
  });

  const shot = (name: string) => page.screenshot({ path: `/tmp/sso-${name}.png`, fullPage: true });

  /** The button on the console, the provider's login form, back to the console. */
  async function signIn(login: string): Promise<void> {
    await page.goto(`${consoleApp.url}/sign-in`);
    await page.getByRole('link', { name: `Sign in with ${PROVIDER}` }).click();
    await page.getByPlaceholder('Enter any login').fill(login);
    await page.getByPlaceholder('and password').fill('demo');
    await page.getByRole('button', { name: 'Sign-in' }).click();
    await page.waitForURL((url) => url.href.startsWith(consoleApp.url));
  }

  /**
   * Rewrites the console's authorization request once (a parameter an attacker or a bug changed): the console's
   * redirect to the provider is taken and sent on changed (Playwright routes no request a redirect made).
   */
  async function rewriteAuthorization(change: (url: URL) => void): Promise<void> {
    await page.route(
      (url) => url.href === `${consoleApp.url}/sign-in/oidc`,
      async (route) => {
        const answer = await route.fetch({ maxRedirects: 0 });
        const location = new URL(answer.headers().location);
        change(location);
        await route.fulfill({ response: answer, headers: { ...answer.headers(), location: location.href } });
      },
      { times: 1 },
    );
  }

  /** The console's answer to the provider's callback. */
  const callbackAnswer = () =>
    page.waitForResponse((r) => r.url().startsWith(`${consoleApp.url}/sign-in/oidc/callback`));

  it('signs an operator in the admin role in: they change a plan, and the audit row names them', async () => {
    await page.goto(`${consoleApp.url}/sign-in`);
    await shot('console-sign-in');
    await checkPage(page, 'console-sso-sign-in');
    await signIn('olivia');
    await page.getByText('Signed in as olivia.ops@example.com').waitFor();
    await page.goto(`${consoleApp.url}/consumers/acme-sso`);
    await page.getByLabel('Plan').selectOption('pro');
    await page.getByRole('button', { name: 'Save plan and limits' }).click();
    await page.waitForLoadState('load');
    const consumer = await adminCall(gateway, 'GET', '/consumers/acme-sso');
    expect((consumer.body as { plan: string }).plan).toBe('pro');
    const audit = await adminCall(gateway, 'GET', '/audit?target=acme-sso&action=consumer.update');
    const row = (audit.body as { items: Array<{ actorName: string; onBehalfOf: string | null }> }).items[0];
    expect(row.actorName).toBe('sso:olivia.ops@example.com');
    expect(row.onBehalfOf).toBe(`olivia.ops@example.com (olivia at ${idp.issuer})`);
    const signIns = await adminCall(gateway, 'GET', '/audit?action=user.sign-in');
    expect(JSON.stringify(signIns.body)).toContain(`olivia.ops@example.com (olivia at ${idp.issuer})`);
    await page.goto(`${consoleApp.url}/audit`);
    await shot('console-audit-person');
  });

  it('shows the read-only role no write form, and the admin API refuses its direct POST', async () => {
    await signIn('sam');
    await page.getByText('Signed in as sam.support@example.com').waitFor();
    await page.goto(`${consoleApp.url}/consumers/acme-sso`);
    await expect(page.getByRole('button', { name: 'Save plan and limits' }).count()).resolves.toBe(0);
    await expect(page.getByRole('button', { name: 'Disable' }).count()).resolves.toBe(0);
    await shot('console-read-only');
    // The form the page does not show, posted anyway with the session's CSRF token (the sign-out form's).
    const csrf = await page.locator('input[name="_csrf"]').first().inputValue();
    const refused = await page.request.post(`${consoleApp.url}/consumers/acme-sso/disable`, {
      form: { _csrf: csrf },
      maxRedirects: 0,
    });
    // The console's answer to a refused change: back to the page, the refusal in its words.
    expect(refused.status()).toBe(303);
    await page.goto(`${consoleApp.url}/consumers/acme-sso`);
    await page.getByRole('alert').filter({ hasText: 'You are not allowed to do this.' }).waitFor();
    const consumer = await adminCall(gateway, 'GET', '/consumers/acme-sso');
    expect((consumer.body as { disabledAt: string | null }).disabledAt).toBeNull();
    const forbidden = await adminCall(gateway, 'GET', '/audit?action=auth.forbidden&order=desc&limit=5');
    expect(JSON.stringify(forbidden.body)).toContain('sso:sam.support@example.com');
  });

  it('refuses a person with no mapped role with a page that says so', async () => {
    await signIn('nora');
    await page.getByRole('heading', { name: 'No console role' }).waitFor();
    await shot('console-no-role');
    await checkPage(page, 'console-sso-no-role');
    await page.goto(`${consoleApp.url}/`);
    await page.waitForURL(`${consoleApp.url}/sign-in`);
    const failed = await adminCall(gateway, 'GET', '/audit?action=user.sign-in-failed&order=desc&limit=5');
    expect(JSON.stringify(failed.body)).toContain('nora.nobody@example.com');
    expect(JSON.stringify(failed.body)).toContain('NO_MAPPED_ROLE');
  });

  it('signs out here and at the provider: the console token is revoked, the provider asks for a login again', async () => {
    await signIn('olivia');
    await page.getByText('Signed in as olivia.ops@example.com').waitFor();
    await page.getByRole('button', { name: 'Sign out' }).click();
    // oidc-provider's own confirmation of the RP-initiated logout.
    await page.getByRole('button', { name: 'Yes, sign me out' }).click();
    await page.waitForURL(`${consoleApp.url}/sign-in?out=1`);
    await page.getByText('You are signed out').waitFor();
    const out = await adminCall(gateway, 'GET', '/audit?action=user.sign-out&order=desc&limit=1');
    expect(JSON.stringify(out.body)).toContain('olivia.ops@example.com');
    // The provider's session is gone too: the next sign-in asks for the login again.
    await page.getByRole('link', { name: `Sign in with ${PROVIDER}` }).click();
    await page.getByPlaceholder('Enter any login').waitFor();
  });

  it('refuses a wrong state', async () => {
    await page.goto(`${consoleApp.url}/sign-in`);
    // A sign-in under way (its state in the session; the browser kept from the provider), then a callback with
    // another state: refused by the check (401), not as a sign-in never started (400).
    await rewriteAuthorization((url) => (url.href = `${consoleApp.url}/health/ready`));
    await page.getByRole('link', { name: `Sign in with ${PROVIDER}` }).click();
    await page.waitForURL(`${consoleApp.url}/health/ready`);
    const answer = await page.goto(`${consoleApp.url}/sign-in/oidc/callback?code=forged&state=wrong`);
    expect(answer?.status()).toBe(401);
    await page.getByRole('heading', { name: 'Sign-in not accepted' }).waitFor();
    await shot('console-refused');
    await checkPage(page, 'console-sso-refused');
    await page.goto(`${consoleApp.url}/`);
    await page.waitForURL(`${consoleApp.url}/sign-in`);
  });

  it('refuses an ID token with another nonce', async () => {
    await rewriteAuthorization((url) => url.searchParams.set('nonce', 'someone-elses-nonce'));
    const answer = callbackAnswer();
    await signIn('olivia');
    expect((await answer).status()).toBe(401);
    await page.getByRole('heading', { name: 'Sign-in not accepted' }).waitFor();
    await page.goto(`${consoleApp.url}/`);
    await page.waitForURL(`${consoleApp.url}/sign-in`);
  });

  it("refuses a code issued to another client (a foreign audience's)", async () => {
    await rewriteAuthorization((url) => url.searchParams.set('client_id', 'other-app'));
    const answer = callbackAnswer();
    await signIn('olivia');
    expect((await answer).status()).toBe(401);
    await page.getByRole('heading', { name: 'Sign-in not accepted' }).waitFor();
    await page.goto(`${consoleApp.url}/`);
    await page.waitForURL(`${consoleApp.url}/sign-in`);
  });

  it('refuses a replayed callback (its code and state) once the sign-in is done', async () => {
    let callback = '';
    page.on('request', (request) => {
      if (request.url().startsWith(`${consoleApp.url}/sign-in/oidc/callback`)) callback = request.url();
    });
    await signIn('olivia');
    await page.getByText('Signed in as olivia.ops@example.com').waitFor();
    expect(callback).toContain('code=');
    const replayed = await page.goto(callback);
    expect(replayed?.status()).toBe(400);
    await page.getByRole('heading', { name: 'Sign-in not accepted' }).waitFor();
  });

  it('shows a clear page when the provider is away, and signs in again once it is back', async () => {
    await idp.stop();
    try {
      await page.goto(`${consoleApp.url}/sign-in`);
      const answer = page.waitForResponse((r) => r.url().startsWith(`${consoleApp.url}/sign-in/oidc`));
      await page.getByRole('link', { name: `Sign in with ${PROVIDER}` }).click();
      expect((await answer).status()).toBe(503);
      await page.getByRole('heading', { name: 'Identity provider unreachable' }).waitFor();
      await shot('console-provider-away');
      await checkPage(page, 'console-sso-provider-away');
    } finally {
      await idp.start();
    }
    await signIn('olivia');
    await page.getByText('Signed in as olivia.ops@example.com').waitFor();
  });
});
