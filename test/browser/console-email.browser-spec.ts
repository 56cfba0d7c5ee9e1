import { Browser, Page } from 'playwright-core';
import { ConsoleUnderTest, startConsole } from '../support/console';
import { adminCall, GatewayUnderTest, startGateway } from '../support/gateway';
import { checkPage } from './page-checks';
import { launchChromium } from './launch-chromium';

/**
 * Operators find the developer who wrote in (issue #37, point 3): the console's search box takes a name prefix or
 * an email address (any case), the list and the consumer's page show the email, a search the admin API refuses gets
 * the console's own sentence (never the API's message), and a panel the token may not read is left out.
 */
describe('console: consumers by email (browser)', () => {
  let gateway: GatewayUnderTest;
  let consoleApp: ConsoleUnderTest;
  let browser: Browser;
  let page: Page;
  const DEVELOPER = 'portal-5f1c0ffee0a1b2c3';

  beforeAll(async () => {
    gateway = await startGateway({ petsUrl: 'http://127.0.0.1:1' });
    consoleApp = await startConsole(gateway.adminUrl);
    for (const [name, email] of [
      [DEVELOPER, 'Ada.Lovelace@Example.com'],
      ['portal-0000aaaa1111bbbb', 'grace@example.com'],
      ['acme', undefined],
    ] as const)
      expect((await adminCall(gateway, 'POST', '/consumers', { name, plan: 'free', email })).status).toBe(201);
    // Only consumers:read: the usage, audit and plan-request panels are not this token's to read.
    const reply = await adminCall(gateway, 'POST', '/tokens', { name: 'support-desk', scopes: ['consumers:read'] });
    expect(reply.status).toBe(201);
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await page.goto(`${consoleApp.url}/sign-in`);
    await page.getByLabel('Admin token').fill((reply.body as { token: string }).token);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
  });

  afterAll(async () => {
    await browser?.close();
    await consoleApp?.close();
    await gateway?.close();
  });

  async function search(text: string): Promise<void> {
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Consumers' }).click();
    await page.getByLabel('Search consumers').fill(text);
    await page.getByRole('button', { name: 'Search' }).click();
    await page.getByRole('heading', { level: 1, name: 'Consumers' }).waitFor();
  }

  it('leaves out the overview panels the token may not read, with no refusal in their place', async () => {
    await page.goto(`${consoleApp.url}/`);
    const main = await page.locator('main').innerText();
    for (const heading of ['Requests by outcome', 'Top consumers', 'Pending plan requests'])
      await expect(page.getByRole('heading', { name: heading }).count()).resolves.toBe(0);
    expect(main).not.toMatch(/Not shown|FORBIDDEN|403|may not/);
    await expect(page.getByRole('main').getByRole('link', { name: 'Consumers' }).isVisible()).resolves.toBe(true);
    await checkPage(page, 'console-overview-consumers-read-only');
  });

  it('finds the developer by email in any case, and shows the email in the list and on the consumer page', async () => {
    await search('ADA.LOVELACE@example.COM');
    const table = page.getByRole('table');
    await expect(table.getByRole('row').count()).resolves.toBe(2); // the header and one consumer
    await expect(table.getByRole('rowheader', { name: DEVELOPER }).isVisible()).resolves.toBe(true);
    await expect(table.getByRole('cell', { name: 'ada.lovelace@example.com' }).isVisible()).resolves.toBe(true);
    await checkPage(page, 'console-consumers-by-email');

    await table.getByRole('link', { name: DEVELOPER }).click();
    await page.getByRole('heading', { level: 1, name: DEVELOPER }).waitFor();
    await expect(page.getByRole('link', { name: 'ada.lovelace@example.com' }).isVisible()).resolves.toBe(true);
    // Usage and audit are not this token's: left out, not replaced by a refusal.
    for (const heading of ['Current windows', 'Usage, last 30 days', 'Audit trail'])
      await expect(page.getByRole('heading', { name: heading }).count()).resolves.toBe(0);
    expect(await page.locator('main').innerText()).not.toMatch(/Not shown/);
    await checkPage(page, 'console-consumer-with-email');
  });

  it('still searches by name prefix, and says an unknown address plainly', async () => {
    await search('portal-');
    await expect(page.getByRole('table').getByRole('row').count()).resolves.toBe(3);
    await search('nobody@example.com');
    await page.getByText('No consumer with the email "nobody@example.com".').waitFor();
  });

  it.each([
    ['a broken address', 'ada@', 'Type a whole email address, such as name@example.com (no spaces).'],
    ['a name no consumer can have', '!acme', 'Type the start of a name'],
  ])('answers %s with its own sentence next to the box, never the API’s message', async (_what, text, sentence) => {
    await search(text);
    const alert = page.getByRole('alert');
    await expect(alert.innerText()).resolves.toContain(sentence);
    await expect(page.getByLabel('Search consumers').getAttribute('aria-invalid')).resolves.toBe('true');
    await expect(page.getByLabel('Search consumers').inputValue()).resolves.toBe(text);
    expect(await page.locator('main').innerText()).not.toMatch(/VALIDATION_FAILED|must be|400/);
  });

  it('shows the search error page whole at a laptop’s and a phone’s width', async () => {
    await search('ada@');
    await page.getByRole('alert').waitFor();
    await checkPage(page, 'console-consumers-search-refused');
  });
});
