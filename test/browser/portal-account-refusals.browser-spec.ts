import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { Browser, Page } from 'playwright-core';
import { createGatewayTestDatabase, GatewayTestDatabase, GatewayUnderTest, startGateway } from '../support/gateway';
import { createPortalToken, PortalUnderTest, startPortal } from '../support/portal';
import { SmtpSink, startSmtpSink } from '../support/smtp-sink';
import { ARTIFACTS, launchChromium } from './launch-chromium';

/**
 * The account refusals of issue #36 as a person sees them: a common or blank password and an address list refused
 * next to their fields on the portal's sign-up form. (The console's slowed sign-in: console-sign-in.browser-spec.ts,
 * a file of its own: hbs partials are per process, and the console's `nav` would replace the portal's.)
 */
describe('portal account refusals in the browser', () => {
  let gateway: GatewayUnderTest;
  let database: GatewayTestDatabase;
  let smtp: SmtpSink;
  let portal: PortalUnderTest;
  let browser: Browser;
  let page: Page;
  const shot = (name: string) => page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });

  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    gateway = await startGateway({ petsUrl: 'http://127.0.0.1:1' });
    database = await createGatewayTestDatabase();
    smtp = await startSmtpSink();
    portal = await startPortal({ gateway, token: await createPortalToken(gateway), database, smtpUrl: smtp.url });
    browser = await launchChromium();
    page = await (await browser.newContext()).newPage();
    page.setDefaultTimeout(10_000);
  }, 300_000); // a gateway, a portal and Chromium: slow on a loaded 2-core runner
  afterAll(async () => {
    await browser?.close();
    await portal?.close();
    await smtp?.close();
    await database?.drop();
    await gateway?.close();
  });

  it('refuses a common password, a blank one and an address list next to their fields, keeping the email typed', async () => {
    await page.goto(`${portal.url}/signup`);
    await page.getByLabel('Email').fill('dev@example.com');
    await page.getByLabel('Password').fill('password1234');
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.getByText('This password is one of the most common ones').waitFor();
    expect(await page.getByLabel('Password').getAttribute('aria-invalid')).toBe('true');
    expect(await page.getByLabel('Email').inputValue()).toBe('dev@example.com');
    await shot('portal-signup-common-password');
    await page.getByLabel('Password').fill(' '.repeat(12));
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.getByText('Use more than spaces').waitFor();
    await page.getByLabel('Email').fill('victim@example.com, attacker@evil.test');
    await page.getByLabel('Password').fill('a long enough passphrase');
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.getByText('Enter an email address such as name@example.com.').waitFor();
    expect(await page.getByLabel('Email').getAttribute('aria-invalid')).toBe('true');
    await shot('portal-signup-address-list');
  });
});
