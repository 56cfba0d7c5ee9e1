import { Browser, Page } from 'playwright-core';
import { ConsoleUnderTest, startConsole } from '../support/console';
import { adminCall, GatewayUnderTest, startGateway } from '../support/gateway';
import { checkPage, tableProblems } from './page-checks';
import { launchChromium } from './launch-chromium';

/**
 * The console's audit log as an operator reads it (issue #37.4, #36.4, #48.8): every column in view at 1280 px and
 * on a phone (a row wraps between words, never inside a value: the tables rule of page-checks' tableProblems), the
 * web apps' sign-ins, failed sign-ins and lockouts readable (the person, their address, why), and at 390 px the page
 * does not scroll sideways.
 */
describe('console audit log (browser)', () => {
  let gateway: GatewayUnderTest;
  let consoleApp: ConsoleUnderTest;
  let browser: Browser;
  let page: Page;
  const OPERATOR = 'alice-ops';

  beforeAll(async () => {
    gateway = await startGateway({ petsUrl: 'http://127.0.0.1:1' });
    const reporter = await adminCall(gateway, 'POST', '/tokens', {
      name: 'console-audit',
      scopes: ['consumers:read'],
      ownConsumersOnly: true,
      actsForUsers: true,
    });
    consoleApp = await startConsole(gateway.adminUrl, {
      CONSOLE_AUDIT_TOKEN: (reporter.body as { token: string }).token,
    });
    // Changes of every length: a rotation (the longest change), a plan change, a revocation.
    const created = await adminCall(gateway, 'POST', '/consumers', { name: 'acme-audit', plan: 'free' });
    const keyId = (created.body as { key: { id: string } }).key.id;
    await adminCall(gateway, 'POST', `/consumers/acme-audit/keys/${keyId}/rotate`, { overlapSeconds: 86_400 });
    await adminCall(gateway, 'PATCH', '/consumers/acme-audit', { plan: 'pro' });
    // The portal's events, as its token reports them (root may too): failures, then a lockout.
    for (const kind of ['sign-in-failed', 'sign-in-failed', 'lockout'])
      await adminCall(gateway, 'POST', '/audit/events', {
        kind,
        subject: 'account:dev@example.com',
        address: '2001:db8:1:2::/64',
        ...(kind === 'lockout' ? { reason: 'PAIR_LIMIT' } : {}),
      });
    const operator = await adminCall(gateway, 'POST', '/tokens', {
      name: OPERATOR,
      scopes: ['audit:read', 'consumers:read'],
      actsForUsers: true,
    });
    browser = await launchChromium();
    page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
    page.setDefaultTimeout(15_000);
    // A refused token, then the operator's own sign-in: both reported by the console.
    await page.goto(`${consoleApp.url}/sign-in`);
    await page.getByLabel('Admin token').fill('adm_wrong-token');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByText('This token was not accepted').waitFor();
    await page.getByLabel('Admin token').fill((operator.body as { token: string }).token);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForLoadState('load');
  }, 300_000); // a gateway, a console and Chromium: slow on a loaded 2-core runner
  afterAll(async () => {
    await browser?.close();
    await consoleApp?.close();
    await gateway?.close();
  });

  it('shows sign-ins, failed sign-ins and lockouts readably, every column in view at 1280 and 390 px', async () => {
    // The console reports after its answer: the operator's sign-in row may take a moment.
    const deadline = Date.now() + 15_000;
    const table = page.getByTestId('audit-table');
    for (;;) {
      await page.goto(`${consoleApp.url}/audit`);
      if ((await table.getByRole('cell', { name: 'user.sign-in', exact: true }).count()) > 0) break;
      if (Date.now() > deadline) throw new Error('the operator sign-in never reached the audit page');
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    const row = (action: string, text: string) =>
      table
        .getByRole('row')
        .filter({ has: page.getByRole('cell', { name: action, exact: true }) })
        .filter({ hasText: text });
    await expect(row('user.sign-in', OPERATOR).count()).resolves.toBe(1);
    await expect(row('user.sign-in', '127.0.0.1').count()).resolves.toBe(1);
    await expect(row('user.sign-in-failed', 'Sign-in failed: UNAUTHORIZED').count()).resolves.toBe(1);
    await expect(row('user.sign-in-failed', 'dev@example.com').count()).resolves.toBe(2);
    await expect(row('user.lockout', 'Refused by the sign-in throttle: PAIR_LIMIT').count()).resolves.toBe(1);
    await expect(row('user.lockout', '2001:db8:1:2::/64').count()).resolves.toBe(1);
    await expect(row('key.rotate', 'acme-audit').count()).resolves.toBe(1);

    // Every column in view and no value broken inside itself (issue #48.8, which replaced issue #37.4's one line per
    // row: a long change wraps between its words rather than scroll its column out of sight), at 1280 px and on a
    // phone.
    for (const width of [1280, 390]) {
      await page.setViewportSize({ width, height: 900 });
      expect([width, ...(await tableProblems(page))]).toEqual([width]);
    }
    await page.setViewportSize({ width: 1280, height: 900 });
    await checkPage(page, 'console-audit-sign-ins');
  });
});
