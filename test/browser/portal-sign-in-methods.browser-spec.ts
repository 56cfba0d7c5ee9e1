import { Browser, BrowserContext, Page } from 'playwright-core';
import { DataSource } from 'typeorm';
import { AccountIdentityEntity } from '../../apps/portal/src/sso/account-identity.entity';
import { adminCall } from '../support/gateway';
import { PeopleIdentityProvider } from '../support/identity-provider-people';
import { PortalStack } from '../support/portal';
import { linkIn, PortalVisitor } from '../support/portal-visitor';
import { launchChromium } from './launch-chromium';
import { PROVIDER, startPortalWithProvider } from './portal-with-provider';
import { checkPage } from './page-checks';

const PASSWORD = 'correct horse battery staple';

/**
 * The portal's "Sign-in methods" page (docs/sso.md), in Chromium against a real oidc-provider: a developer who linked
 * the company's provider to their password account unlinks it (the next provider sign-in must prove the account
 * again); a company developer (a required domain) cannot unlink the provider, even by posting the form; a developer
 * whose only way in is the provider is told to set a password first, sets one through the mailed link, and can then
 * unlink. Screenshots: artifacts/pages/portal-sign-in-methods-*.png (checkPage, with the accessibility scan).
 */
describe('portal: sign-in methods (browser)', () => {
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

  /** The provider's button, its login form (or its session), back to the portal. */
  async function signIn(login: string): Promise<void> {
    await page.goto(`${portalUrl}/login`);
    await page.getByRole('link', { name: `Sign in with ${PROVIDER}` }).click();
    const form = page.getByPlaceholder('Enter any login');
    await Promise.race([form.waitFor(), page.waitForURL((url) => url.href.startsWith(portalUrl))]);
    if (!page.url().startsWith(portalUrl)) {
      await form.fill(login);
      await page.getByPlaceholder('and password').fill('demo');
      await page.getByRole('button', { name: 'Sign-in' }).click();
      await page.waitForURL((url) => url.href.startsWith(portalUrl));
    }
  }

  async function signOut(): Promise<void> {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByText('You are signed out').waitFor();
  }

  async function openSignInMethods(): Promise<void> {
    await page.getByRole('link', { name: 'Sign-in methods' }).click();
    await page.getByRole('heading', { name: 'Sign-in methods', level: 1 }).waitFor();
  }

  /** The identity row's id, as a form posted anyway would name it. */
  async function identityId(email: string): Promise<string> {
    const row = await stack.portal.app.get(DataSource).getRepository(AccountIdentityEntity).findOneByOrFail({ email });
    return row.id;
  }

  const person = (login: string, email: string) => `account:${email} (${login} at ${idp.issuer})`;

  async function auditRow(action: string, onBehalfOf: string): Promise<void> {
    for (let i = 0; i < 100; i += 1) {
      const reply = await adminCall(stack.gateway, 'GET', `/audit?action=${action}&order=desc&limit=50`);
      if ((reply.body as { items: { onBehalfOf: string | null }[] }).items.some((r) => r.onBehalfOf === onBehalfOf))
        return;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error(`no ${action} row for ${onBehalfOf}`);
  }

  it('unlinks the provider from a password account; the next provider sign-in must prove the account again', async () => {
    const email = 'sam.support@example.com';
    const visitor = new PortalVisitor(portalUrl);
    await visitor.submit('/signup', { email, password: PASSWORD });
    const token = linkIn((await stack.smtp.next(email, /Verify/)).text, '/verify');
    expect((await visitor.submit(`/verify?token=${token}`, { token, password: PASSWORD }, '/verify')).status).toBe(303);
    await signIn('sam');
    await page.getByRole('heading', { name: 'Link your account' }).waitFor();
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Link and sign in' }).click();
    await page.waitForURL(`${portalUrl}/dashboard`);

    await openSignInMethods();
    await page.getByText('Your account has a password.').waitFor();
    const row = page.getByRole('row', { name: new RegExp(PROVIDER) });
    await row.getByRole('cell', { name: email }).waitFor();
    await checkPage(page, 'portal-sign-in-methods-linked');
    await row.getByRole('link', { name: `Unlink ${PROVIDER}` }).click();
    await page.getByRole('heading', { name: `Unlink ${PROVIDER}?` }).waitFor();
    await checkPage(page, 'portal-sign-in-methods-unlink');
    await page.getByRole('button', { name: 'Unlink' }).click();
    await page.waitForURL(`${portalUrl}/sign-in-methods`);
    await page.getByText(`${PROVIDER} no longer signs you in to this account.`).waitFor();
    await page.getByText('None is linked.').waitFor();
    await checkPage(page, 'portal-sign-in-methods-none');
    await auditRow('user.identity-unlinked', person('sam', email));

    // Unlinked: the provider's sign-in is a stranger to the account again, and must prove it.
    await signOut();
    await signIn('sam');
    await page.getByRole('heading', { name: 'Link your account' }).waitFor();
  });

  it('links the provider from the page while signed in, and refuses an identity that signs in to another account', async () => {
    const email = 'olivia.ops@example.com';
    const visitor = new PortalVisitor(portalUrl);
    await visitor.submit('/signup', { email, password: PASSWORD });
    const token = linkIn((await stack.smtp.next(email, /Verify/)).text, '/verify');
    expect((await visitor.submit(`/verify?token=${token}`, { token, password: PASSWORD }, '/verify')).status).toBe(303);
    await page.goto(`${portalUrl}/login`);
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.waitForURL(/\/(dashboard|keys\/new)$/);

    // Linked from the page: the provider's login, then back here, linked; no proof asked (the session is it).
    await page.goto(`${portalUrl}/sign-in-methods`);
    await page.getByText('None is linked.').waitFor();
    await checkPage(page, 'portal-sign-in-methods-linkable');
    await page.getByRole('button', { name: `Link ${PROVIDER}` }).click();
    await page.getByPlaceholder('Enter any login').fill('olivia');
    await page.getByPlaceholder('and password').fill('demo');
    await page.getByRole('button', { name: 'Sign-in' }).click();
    await page.waitForURL(`${portalUrl}/sign-in-methods`);
    await page.getByText(`${PROVIDER} now signs you in to this account.`).waitFor();
    await page
      .getByRole('row', { name: new RegExp(PROVIDER) })
      .getByRole('cell', { name: email })
      .waitFor();
    expect(await page.getByRole('button', { name: `Link ${PROVIDER}` }).count()).toBe(0);
    await auditRow('user.identity-linked', person('olivia', email));
    // It signs in: straight to the dashboard, no proof asked.
    await signOut();
    await signIn('olivia');
    await page.waitForURL(`${portalUrl}/dashboard`);

    // Another account cannot take it: unlinked here first, then linked by someone else, it is refused back here.
    await openSignInMethods();
    await page
      .getByRole('row', { name: new RegExp(PROVIDER) })
      .getByRole('link', { name: `Unlink ${PROVIDER}` })
      .click();
    await page.getByRole('button', { name: 'Unlink' }).click();
    await page.getByText('None is linked.').waitFor();
    await signOut();
    const other = 'someone.else@example.com';
    await visitor.submit('/signup', { email: other, password: PASSWORD });
    const otherToken = linkIn((await stack.smtp.next(other, /Verify/)).text, '/verify');
    await visitor.submit(`/verify?token=${otherToken}`, { token: otherToken, password: PASSWORD }, '/verify');
    await page.goto(`${portalUrl}/login`);
    await page.getByLabel('Email').fill(other);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.waitForURL(/\/(dashboard|keys\/new)$/);
    await page.goto(`${portalUrl}/sign-in-methods`);
    await page.getByRole('button', { name: `Link ${PROVIDER}` }).click();
    // The provider's session is still olivia's: straight back.
    await page.waitForURL(`${portalUrl}/sign-in-methods`);
    await page.getByText(`${PROVIDER} now signs you in to this account.`).waitFor();
    await signOut();
    await page.goto(`${portalUrl}/login`);
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.waitForURL(`${portalUrl}/dashboard`);
    await page.goto(`${portalUrl}/sign-in-methods`);
    const refused = page.waitForResponse((r) => r.url().includes('/login/oidc/') && r.url().includes('/callback'));
    await page.getByRole('button', { name: `Link ${PROVIDER}` }).click();
    expect((await refused).status()).toBe(409);
    await page.getByRole('heading', { name: 'Already linked to another account' }).waitFor();
    await checkPage(page, 'portal-sign-in-methods-link-refused');
    await page.getByRole('link', { name: 'Back to your sign-in methods' }).click();
    await page.getByText('None is linked.').waitFor();
  });

  it("keeps a company developer's provider: no Unlink button, and the form posted anyway is refused", async () => {
    await signIn('dev');
    await page.goto(`${portalUrl}/sign-in-methods`);
    await page.getByText(`Addresses of your email domain sign in with ${PROVIDER}, never with a password.`).waitFor();
    const row = page.getByRole('row', { name: new RegExp(PROVIDER) });
    await row.getByText('Your email domain signs in with Company SSO: its link stays.').waitFor();
    expect(await row.getByRole('link', { name: /Unlink/ }).count()).toBe(0);
    await checkPage(page, 'portal-sign-in-methods-required');

    await page.goto(`${portalUrl}/sign-in-methods/${await identityId('dev@company.example')}/unlink`);
    const answer = page.waitForResponse((r) => r.request().method() === 'POST');
    await page.getByRole('button', { name: 'Unlink' }).click();
    expect((await answer).status()).toBe(409);
    await page
      .getByRole('alert')
      .filter({ hasText: `${PROVIDER} stays linked: addresses of your email domain sign in with it` })
      .waitFor();
    await signOut();
    await signIn('dev');
    await page.waitForURL(`${portalUrl}/dashboard`);
  });

  it('asks a provider-only developer to set a password first, then lets them unlink', async () => {
    const email = 'nora.nobody@example.com';
    await signIn('nora');
    await page.getByTestId('new-key').waitFor();
    await page.goto(`${portalUrl}/sign-in-methods`);
    await page.getByText('Your account has no password').waitFor();
    const row = page.getByRole('row', { name: new RegExp(PROVIDER) });
    await row.getByText('Your only way in: set a password first.').waitFor();
    await checkPage(page, 'portal-sign-in-methods-only-way-in');

    // A form posted anyway: 409, the provider stays.
    await page.goto(`${portalUrl}/sign-in-methods/${await identityId(email)}/unlink`);
    const refused = page.waitForResponse((r) => r.request().method() === 'POST');
    await page.getByRole('button', { name: 'Unlink' }).click();
    expect((await refused).status()).toBe(409);
    await page.getByRole('alert').filter({ hasText: 'it is your only way in' }).waitFor();

    // The password through the mailed link, then the provider may go.
    await page.goto(`${portalUrl}/sign-in-methods`);
    await page.getByRole('link', { name: 'set a password' }).click();
    await page.getByLabel('Email').fill(email);
    await page.getByRole('button', { name: 'Send reset link' }).click();
    const reset = linkIn((await stack.smtp.next(email, /password/i)).text, '/reset/confirm');
    await page.goto(`${portalUrl}/reset/confirm?token=${reset}`);
    await page.getByLabel('New password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Set new password' }).click();
    await page.waitForURL(`${portalUrl}/login`);
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.waitForURL(`${portalUrl}/dashboard`);
    await openSignInMethods();
    await page
      .getByRole('row', { name: new RegExp(PROVIDER) })
      .getByRole('link', { name: `Unlink ${PROVIDER}` })
      .click();
    await page.getByRole('button', { name: 'Unlink' }).click();
    await page.getByText('None is linked.').waitFor();
    await auditRow('user.identity-unlinked', person('nora', email));
  });
});
