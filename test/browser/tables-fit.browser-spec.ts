import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { Browser, BrowserContext, Page } from 'playwright-core';
import { ConsoleUnderTest, startConsole } from '../support/console';
import { adminCall, GatewayUnderTest } from '../support/gateway';
import { PortalStack, PortalUnderTest, startPortalStack } from '../support/portal';
import { ARTIFACTS, launchChromium } from './launch-chromium';
import { tableProblems } from './page-checks';

const PASSWORD = 'correct horse battery staple';
/** A laptop and a phone: every table is looked at at both (issue #48.8). */
const WIDTHS = [1366, 390] as const;

/**
 * Every page with a table, in the portal and the console, at 1366 and 390 px, filled with the values that wrapped or
 * pushed columns out before (dates, durations, a credits ledger with a reason and its author, long consumer and
 * token names, an audit log with changes): the rule above holds on each, and a screenshot of each is kept
 * (artifacts/tables-<page>-<width>.png).
 */
describe('tables that fit, in the portal and the console (browser)', () => {
  let stack: PortalStack;
  let gateway: GatewayUnderTest;
  let portal: PortalUnderTest;
  let consoleApp: ConsoleUnderTest;
  let browser: Browser;
  let developer: Page;
  let operator: Page;
  const contexts: BrowserContext[] = [];
  const email = `tables-${Date.now()}@example.com`;
  let consumer = '';

  async function newPage(): Promise<Page> {
    const context = await browser.newContext({ viewport: { width: 1366, height: 900 } });
    contexts.push(context);
    const page = await context.newPage();
    page.setDefaultTimeout(15_000);
    return page;
  }

  /** The rule at both widths, a screenshot of each. */
  async function checkTables(page: Page, name: string): Promise<string[]> {
    const problems: string[] = [];
    for (const width of WIDTHS) {
      await page.setViewportSize({ width, height: 900 });
      await page.screenshot({ path: join(ARTIFACTS, `tables-${name}-${width}.png`), fullPage: true });
      for (const problem of await tableProblems(page)) problems.push(`${name} at ${width} px: ${problem}`);
    }
    await page.setViewportSize({ width: 1366, height: 900 });
    return problems;
  }

  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    stack = await startPortalStack({ gatewayEnv: { USAGE_FLUSH_MS: '200' } });
    ({ gateway, portal } = stack);
    consoleApp = await startConsole(gateway.adminUrl);
    browser = await launchChromium();

    // A developer, signed up and verified in the browser: the portal's consumer and first key.
    developer = await newPage();
    await developer.goto(`${portal.url}/signup`);
    await developer.getByLabel('Email').fill(email);
    await developer.getByLabel('Password').fill(PASSWORD);
    await developer.getByRole('button', { name: 'Create account' }).click();
    await developer.getByRole('heading', { name: 'Check your email' }).waitFor();
    const mail = await stack.smtp.next(email, /Verify/);
    await developer.goto(/https?:\/\/\S+\/verify\?token=[A-Za-z0-9_-]+/.exec(mail.text)![0]);
    await developer.getByLabel('Password').fill(PASSWORD);
    await developer.getByRole('button', { name: 'Verify my email' }).click();
    const key = (await developer.getByTestId('new-key').innerText()).trim();
    const found = await adminCall(gateway, 'GET', `/consumers?email=${encodeURIComponent(email)}`);
    consumer = (found.body as { items: Array<{ name: string }> }).items[0].name;

    // A monthly quota, credits with a refill, a ledger with reasons, a little spend and usage, a rotated key.
    expect(
      (
        await adminCall(gateway, 'PATCH', `/consumers/${consumer}/billing`, {
          perMonth: 200_000,
          creditRefill: { amount: 5_000, every: 'day' },
        })
      ).status,
    ).toBe(200);
    expect(
      (
        await adminCall(gateway, 'PUT', `/consumers/${consumer}/credits`, {
          balance: 12_500,
          reason: 'trial credit for the launch week of the shelter app',
        })
      ).status,
    ).toBe(200);
    expect(
      (
        await adminCall(gateway, 'POST', `/consumers/${consumer}/credits/top-ups`, {
          amount: 250_000,
          reason: 'invoice 2026-11-0042 paid by bank transfer',
        })
      ).status,
    ).toBe(201);
    for (let i = 0; i < 5; i += 1)
      await fetch(`${gateway.url}/v1/pets?limit=1`, { headers: { authorization: `Bearer ${key}` } });
    await fetch(`${gateway.url}/v1/pets/999999`, { headers: { authorization: `Bearer ${key}` } });
    const keys = (await adminCall(gateway, 'GET', `/consumers/${consumer}`)).body as { keys: Array<{ id: string }> };
    expect(
      (
        await adminCall(gateway, 'POST', `/consumers/${consumer}/keys/${keys.keys[0].id}/rotate`, {
          overlapSeconds: 86_400,
        })
      ).status,
    ).toBe(201);
    // A pending plan request (the console's overview lists it with who asked).
    await developer.goto(`${portal.url}/plan`);
    await developer.getByLabel('Plan').selectOption('pro');
    await developer.getByLabel('Expected volume').fill('5,000 requests a day from the adoption kiosks');
    await developer.getByRole('button', { name: 'Send request' }).click();
    await developer.waitForLoadState('load');
    // An admin token with a long name and an expiry (the tokens page), used once (its last use).
    const token = await adminCall(gateway, 'POST', '/tokens', {
      name: 'shelter-frontend-deploy-bot-2026-11',
      scopes: ['consumers:read', 'usage:read', 'audit:read'],
      expiresAt: new Date(Date.now() + 30 * 86_400_000).toISOString(),
    });
    expect(token.status).toBe(201);
    await adminCall(gateway, 'GET', '/consumers', undefined, (token.body as { token: string }).token);
    // The usage history has the answers (flushed every 200 ms).
    await new Promise((resolve) => setTimeout(resolve, 1_000));

    operator = await newPage();
    await operator.goto(`${consoleApp.url}/sign-in`);
    await operator.getByLabel('Admin token').fill(gateway.adminToken);
    await operator.getByRole('button', { name: 'Sign in' }).click();
    await operator.waitForLoadState('load');
  }, 240_000);
  afterAll(async () => {
    for (const context of contexts) await context.close();
    await browser?.close();
    await consoleApp?.close();
    await stack?.close();
  });

  it('the portal’s dashboard: usage, keys, the credits’ costs and ledger', async () => {
    await developer.goto(`${portal.url}/dashboard`);
    await developer.getByTestId('credits-ledger').waitFor();
    expect(await checkTables(developer, 'portal-dashboard')).toEqual([]);
  });

  it.each([
    ['console-overview', '/'],
    ['console-consumers', '/consumers'],
    ['console-consumer', '/consumers/<consumer>'],
    ['console-audit', '/audit'],
    ['console-tokens', '/tokens'],
  ])('the console’s %s', async (name, path) => {
    await operator.goto(`${consoleApp.url}${path.replace('<consumer>', consumer)}`);
    await operator.locator('main table').first().waitFor();
    expect(await checkTables(operator, name)).toEqual([]);
  });
});
