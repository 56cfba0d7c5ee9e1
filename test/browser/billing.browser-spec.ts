import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Browser, BrowserContext, Page } from 'playwright-core';
import { describeLimits, readPlanCatalogue } from '@app/contract';
import { formatUtc } from '@app/web';
import type { AdminBilling, AdminCreditLedger, AdminCurrentUsage } from '@app/web';
import { ConsoleUnderTest, startConsole } from '../support/console';
import { adminCall, GatewayUnderTest } from '../support/gateway';
import { call } from '../support/http';
import { PortalStack, PortalUnderTest, startPortalStack } from '../support/portal';
import type { SmtpSink } from '../support/smtp-sink';
import { runIf } from '../support/skip';
import { checkPage } from './page-checks';
import { ARTIFACTS, launchChromium } from './launch-chromium';

const PASSWORD = 'correct horse battery staple';
const PLANS = readPlanCatalogue();
const WRITE_SCOPES = ['consumers:read', 'consumers:write', 'keys:write', 'usage:read', 'audit:read'];
const READ_SCOPES = ['consumers:read', 'usage:read', 'audit:read'];
/** The credit views need the admin API's credit routes (docs/billing.md): its committed document says whether it has them. */
const ADMIN_PATHS = (
  JSON.parse(readFileSync(join(__dirname, '../../gateway/admin-openapi.json'), 'utf8')) as { paths: object }
).paths;
const withCredits = runIf(
  '/consumers/{name}/credits/ledger' in ADMIN_PATHS,
  "the admin API's credit routes (GET /consumers/{name}/credits/ledger, POST .../credits/top-ups: branch credits)",
);

/**
 * What a developer and an operator see of billing (issue #38 point 5): the portal's figures per policy equal the
 * admin API's (read in the test), with the monthly quota in the plan's sentence; the console's billing forms change
 * the billing (read back through the admin API), refuse bad input in its own words with what was typed kept, and are
 * not offered to a read-only token nor to a restricted one (the admin policy's fleet-only routes).
 */
describe('billing in the portal and the console (browser)', () => {
  let stack: PortalStack;
  let gateway: GatewayUnderTest;
  let smtp: SmtpSink;
  let portal: PortalUnderTest;
  let consoleApp: ConsoleUnderTest;
  let browser: Browser;
  const contexts: BrowserContext[] = [];
  const email = `billing-${Date.now()}@example.com`;
  let key = '';
  let consumer = '';

  const shot = (page: Page, name: string) =>
    page.screenshot({ path: join(ARTIFACTS, `billing-${name}.png`), fullPage: true });

  async function newPage(): Promise<Page> {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    contexts.push(context);
    const page = await context.newPage();
    page.setDefaultTimeout(15_000);
    return page;
  }

  async function createToken(name: string, scopes: string[], extra: Record<string, unknown> = {}): Promise<string> {
    const reply = await adminCall(gateway, 'POST', '/tokens', { name, scopes, ...extra });
    expect(reply.status).toBe(201);
    return (reply.body as { token: string }).token;
  }

  async function signInConsole(page: Page, token: string): Promise<void> {
    await page.goto(`${consoleApp.url}/sign-in`);
    await page.getByLabel('Admin token').fill(token);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForLoadState('load');
  }

  const billingOf = async () =>
    (await adminCall(gateway, 'GET', `/consumers/${consumer}/billing`)).body as AdminBilling;

  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    stack = await startPortalStack({ gatewayEnv: { USAGE_FLUSH_MS: '200' } });
    ({ gateway, smtp, portal } = stack);
    consoleApp = await startConsole(gateway.adminUrl);
    browser = await launchChromium();
  });
  afterAll(async () => {
    for (const context of contexts) await context.close();
    await browser?.close();
    await consoleApp?.close();
    await stack?.close();
  });

  it("the portal's dashboard shows, per policy in force, the admin API's figures and its monthly quota", async () => {
    const page = await newPage();
    await page.goto(`${portal.url}/signup`);
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.getByRole('heading', { name: 'Check your email' }).waitFor();
    const mail = await smtp.next(email, /Verify/);
    await page.goto(/https?:\/\/\S+\/verify\?token=[A-Za-z0-9_-]+/.exec(mail.text)![0]);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Verify my email' }).click();
    key = (await page.getByTestId('new-key').innerText()).trim();
    await page.goto(`${portal.url}/dashboard`);
    consumer = (await page.locator('main p code').first().innerText()).trim();

    // Free has no monthly quota: no month card, no credits; the sentence is the catalogue's.
    expect(await page.getByTestId('month-card').count()).toBe(0);
    expect(await page.getByTestId('credits-card').count()).toBe(0);
    expect(await page.getByRole('heading', { name: 'Credits' }).count()).toBe(0);
    expect(await page.getByTestId('plan-limits').innerText()).toBe(describeLimits(PLANS.free));

    // An operator agrees a monthly quota with this developer; three requests are admitted.
    expect((await adminCall(gateway, 'PATCH', `/consumers/${consumer}/billing`, { perMonth: 5000 })).status).toBe(200);
    for (let i = 0; i < 3; i += 1)
      expect(
        (await call(`${gateway.url}/v1/pets?limit=1`, { headers: { authorization: `Bearer ${key}` } })).status,
      ).toBe(200);
    await page.reload();
    const usage = (await adminCall(gateway, 'GET', `/consumers/${consumer}/usage`)).body as AdminCurrentUsage;
    const billing = await billingOf();
    expect(usage.windows.map((w) => w.name)).toEqual(['minute', 'day', 'month']);
    expect(await page.getByTestId('plan-limits').innerText()).toBe(
      describeLimits({ ...(PLANS.free as { perMinute: number; perDay: number }), perMonth: 5000 }),
    );
    const now = Date.now();
    for (const window of usage.windows) {
      const number = async (id: string) =>
        Number((await page.getByTestId(`${window.name}-${id}`).innerText()).replace(/,/g, ''));
      expect([window.name, await number('used'), await number('remaining'), await number('limit')]).toEqual([
        window.name,
        window.used,
        window.remaining,
        window.limit,
      ]);
      const resetsAt = await page.getByTestId(`${window.name}-resets-at`).innerText();
      if (window.name === 'month') {
        // The month resets at the end of the billing period, in the one date format of both apps.
        expect(resetsAt).toBe(formatUtc(billing.currentPeriod.end));
      } else {
        // now + seconds to reset, read a moment apart: the same minute, or the next.
        const at = (slack: number) => formatUtc(new Date(now + window.resetSeconds * 1000 + slack));
        expect([at(-60_000), at(0), at(60_000)]).toContain(resetsAt);
      }
    }
    expect(await page.getByTestId('month-used').innerText()).toBe('3');
    expect(await page.locator('#counts-explained').innerText()).toContain(formatUtc(billing.currentPeriod.end));
    await shot(page, 'portal-dashboard');
    await checkPage(page, 'billing-portal-dashboard');
  });

  it('the console shows the billing and its forms change it (read back through the admin API)', async () => {
    const page = await newPage();
    await signInConsole(page, await createToken('billing-writer', WRITE_SCOPES));
    await page.goto(`${consoleApp.url}/consumers/${consumer}`);
    const before = await billingOf();
    expect(await page.getByTestId('billing-anchor').innerText()).toBe(
      `${formatUtc(before.billingAnchor)} (its creation time)`,
    );
    expect(await page.getByTestId('billing-quota').innerText()).toBe('5,000 requests (its own)');
    expect(await page.getByTestId('billing-period').innerText()).toBe(
      `${formatUtc(before.currentPeriod.start)} to ${formatUtc(before.currentPeriod.end)}`,
    );
    await shot(page, 'console-consumer');
    await checkPage(page, 'billing-console-consumer');

    // Bad input: the console's own sentence next to the form, what was typed kept, nothing changed.
    await page.getByLabel('Billing anchor (UTC)').fill('31/01/2026');
    await page.getByRole('button', { name: 'Save anchor' }).click();
    await page.getByRole('alert').filter({ hasText: 'Type a date and time in UTC as YYYY-MM-DD HH:MM' }).waitFor();
    expect(await page.getByLabel('Billing anchor (UTC)').inputValue()).toBe('31/01/2026');
    expect(await page.getByLabel('Billing anchor (UTC)').getAttribute('aria-invalid')).toBe('true');
    expect((await billingOf()).anchorSet).toBe(false);
    await shot(page, 'console-anchor-refused');
    await checkPage(page, 'billing-console-anchor-refused');

    await page.getByLabel('Billing anchor (UTC)').fill('2026-01-31 09:00');
    await page.getByRole('button', { name: 'Save anchor' }).click();
    await page.getByText(`Saved: ${consumer}'s billing months now reset on the anchor 2026-01-31 09:00 UTC`).waitFor();
    const moved = await billingOf();
    expect([moved.billingAnchor, moved.anchorSet]).toEqual(['2026-01-31T09:00:00.000Z', true]);
    expect(await page.getByTestId('billing-anchor').innerText()).toBe('2026-01-31 09:00 UTC (its own)');
    expect(await page.getByLabel('Billing anchor (UTC)').inputValue()).toBe('2026-01-31 09:00');

    // A quota the admin API refuses (past its bound): its refusal by code, in the console's words.
    await page.getByLabel('Own monthly quota').fill('3000000000');
    await page.getByRole('button', { name: 'Save monthly quota' }).click();
    await page.getByRole('alert').filter({ hasText: 'This was not accepted' }).waitFor();
    expect(await page.locator('main').innerText()).not.toContain('perMonth must be');
    expect((await billingOf()).ownPerMonth).toBe(5000);

    await page.getByLabel('Own monthly quota').fill('7,000');
    await page.getByRole('button', { name: 'Save monthly quota' }).click();
    await page.getByText(`Saved: ${consumer} is held to 7,000 requests a billing month.`).waitFor();
    expect([(await billingOf()).ownPerMonth, (await billingOf()).perMonth]).toEqual([7000, 7000]);
    expect(await page.getByTestId('billing-quota').innerText()).toBe('7,000 requests (its own)');

    // Empty: back to the plan's (Free has none); the anchor back to the creation time.
    await page.getByLabel('Own monthly quota').fill('');
    await page.getByRole('button', { name: 'Save monthly quota' }).click();
    await page.getByText(`Saved: ${consumer} has no monthly quota.`).waitFor();
    expect((await billingOf()).perMonth).toBeNull();
    await page.getByLabel('Billing anchor (UTC)').fill('');
    await page.getByRole('button', { name: 'Save anchor' }).click();
    await page.getByText(`Saved: ${consumer}'s billing anchor is its creation time again`).waitFor();
    expect((await billingOf()).anchorSet).toBe(false);
  });

  it('a read-only token and a restricted write token see the billing and no billing form', async () => {
    for (const [name, scopes, extra] of [
      ['billing-reader', READ_SCOPES, {}],
      ['billing-free-only', WRITE_SCOPES, { plans: ['free'] }],
    ] as const) {
      const page = await newPage();
      await signInConsole(page, await createToken(name, [...scopes], extra));
      await page.goto(`${consoleApp.url}/consumers/${consumer}`);
      await page.getByTestId('billing-card').waitFor();
      expect([
        name,
        await page.getByRole('button', { name: 'Save anchor' }).count(),
        await page.getByRole('button', { name: 'Save monthly quota' }).count(),
        await page.getByRole('button', { name: 'Top up' }).count(),
      ]).toEqual([name, 0, 0, 0]);
      if (name === 'billing-reader') {
        await shot(page, 'console-read-only');
        await checkPage(page, 'billing-console-read-only');
      }
    }
  });
  withCredits.it(
    'credits: the console tops up, sets costs, balance and refill (read back through the admin API); the portal shows the same balance, history and dates',
    async () => {
      const operator = await newPage();
      await signInConsole(operator, await createToken('credits-writer', WRITE_SCOPES));
      await operator.goto(`${consoleApp.url}/consumers/${consumer}`);
      await operator.getByTestId('credits-none').waitFor();

      // Bad input: the console's sentence next to the form, typed kept, nothing sent.
      await operator.getByLabel('Credits to add').fill('lots');
      await operator.getByLabel('Reason for the top-up').fill('Invoice 42');
      await operator.getByRole('button', { name: 'Top up' }).click();
      await operator.getByRole('alert').filter({ hasText: 'Type a whole number of credits of at least 1.' }).waitFor();
      expect(await operator.getByLabel('Reason for the top-up').inputValue()).toBe('Invoice 42');
      expect((await billingOf()).credits).toBeNull();

      await operator.getByLabel('Credits to add').fill('500');
      await operator.getByRole('button', { name: 'Top up' }).click();
      await operator.getByText(`Saved: ${consumer}'s balance is 500 credits.`).waitFor();
      expect((await billingOf()).credits?.balance).toBe(500);
      const ledger = () =>
        adminCall(gateway, 'GET', `/consumers/${consumer}/credits/ledger?days=30`).then(
          (r) => r.body as AdminCreditLedger,
        );
      expect((await ledger()).entries.map((e) => [e.kind, e.amount, e.balanceAfter, e.reason])).toEqual([
        ['top-up', 500, 500, 'Invoice 42'],
      ]);

      await operator.getByLabel('Cost of createPet').fill('5');
      await operator.getByRole('button', { name: 'Save costs' }).click();
      await operator.getByText(`Saved: ${consumer}'s costs.`).waitFor();
      expect((await billingOf()).credits?.costs).toEqual({ createPet: 5, getPet: 1, listPets: 1 });

      await operator.getByLabel('New balance', { exact: true }).fill('200');
      await operator.getByLabel('Reason for the new balance').fill('Correction');
      await operator.getByRole('button', { name: 'Set balance' }).click();
      await operator.getByText(`Saved: ${consumer}'s balance is 200 credits.`).waitFor();
      expect((await billingOf()).credits?.balance).toBe(200);
      await shot(operator, 'console-credits');
      await checkPage(operator, 'billing-console-credits');

      // Three listPets at cost 1: the balance the admin API states is what both pages show.
      for (let i = 0; i < 3; i += 1)
        expect(
          (await call(`${gateway.url}/v1/pets?limit=1`, { headers: { authorization: `Bearer ${key}` } })).status,
        ).toBe(200);

      await operator.getByLabel('Refill up to').fill('1,000');
      await operator.getByLabel('Refill every').selectOption('day');
      await operator.getByRole('button', { name: 'Save refill' }).click();
      await operator
        .getByText(/^Saved: .* refill/)
        .first()
        .waitFor();
      expect((await billingOf()).credits).toMatchObject({ refill: { amount: 1000, every: 'day' }, refillSet: true });

      const developer = await newPage();
      await developer.goto(`${portal.url}/login`);
      await developer.getByLabel('Email').fill(email);
      await developer.getByLabel('Password').fill(PASSWORD);
      await developer.getByRole('button', { name: 'Sign in' }).click();
      await developer.getByRole('heading', { name: 'Credits', level: 2 }).waitFor();
      const credits = (await billingOf()).credits!;
      const history = await ledger();
      const number = async (id: string) => Number((await developer.getByTestId(id).innerText()).replace(/,/g, ''));
      expect([await number('credits-remaining'), await number('credits-balance')]).toEqual([
        credits.balance,
        credits.balance,
      ]);
      expect(await number('credits-used')).toBe(history.spendPerDay.at(-1)!.spent);
      expect(await developer.getByTestId('credits-resets-at').innerText()).toBe(formatUtc(credits.nextRefillAt));
      expect(await developer.getByTestId('credits-next-refill').innerText()).toBe(formatUtc(credits.nextRefillAt));
      expect(await developer.getByTestId('credits-exhaustion').innerText()).toContain(
        history.projectedExhaustionAt === null ? 'not expected' : formatUtc(history.projectedExhaustionAt),
      );
      const rows = await developer.getByTestId('credits-ledger').locator('tbody tr').allInnerTexts();
      expect(rows.map((row) => row.split('\t').slice(1, 5))).toEqual(
        history.entries.map((e) => [
          e.kind,
          e.amount.toLocaleString('en-US'),
          e.balanceAfter.toLocaleString('en-US'),
          e.reason ?? '',
        ]),
      );
      const spend = developer.getByRole('table', { name: 'Credits spent per day (UTC)' });
      expect(await spend.locator('tbody tr').last().locator('td').innerText()).toBe(
        String(history.spendPerDay.at(-1)!.spent),
      );
      await shot(developer, 'portal-credits');
      await checkPage(developer, 'billing-portal-credits');
    },
  );
});
