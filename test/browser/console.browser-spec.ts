import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { Browser, Page } from 'playwright-core';
import { ConsoleUnderTest, startConsole } from '../support/console';
import { adminCall, GatewayUnderTest, startGateway } from '../support/gateway';
import { call } from '../support/http';
import { RunningPets, startPetsService } from '../support/pets-service';
import { describeLimits, readPlanCatalogue, ROTATION_OVERLAPS } from '@app/contract';
import { checkPage, isCut } from './page-checks';
import { ARTIFACTS, launchChromium } from './launch-chromium';

const WRITE_SCOPES = [
  'consumers:read',
  'consumers:write',
  'keys:write',
  'usage:read',
  'audit:read',
  'tokens:admin',
  'plan-requests:read',
  'plan-requests:review',
];
const READ_SCOPES = ['consumers:read', 'usage:read', 'audit:read', 'plan-requests:read'];
/** The plans the gateway under test runs with: the pages must say the same, from the same file. */
const PLANS = readPlanCatalogue();

/**
 * The operator console in Chromium (issue #26): an operator signs in with their own token, finds a consumer, raises
 * its plan, rotates its key (both keys work during the overlap) and finds both changes in the audit log under the
 * token's name; a read-only token finds no write action anywhere; wrong and revoked tokens; CSRF; the chart's table
 * equals the usage-history API. Every page is saved to artifacts/console-*.png.
 */
describe('operator console (browser)', () => {
  let pets: RunningPets;
  let gateway: GatewayUnderTest;
  let consoleApp: ConsoleUnderTest;
  let browser: Browser;
  let consumerKey: string;
  const CONSUMER = 'acme-browser';

  async function createToken(name: string, scopes: string[]): Promise<{ token: string; id: string }> {
    const reply = await adminCall(gateway, 'POST', '/tokens', { name, scopes });
    expect(reply.status).toBe(201);
    const body = reply.body as { token: string; record: { id: string } };
    return { token: body.token, id: body.record.id };
  }

  const v1 = (key: string) => call(`${gateway.url}/v1/pets?limit=1`, { headers: { authorization: `Bearer ${key}` } });

  async function shot(page: Page, name: string): Promise<void> {
    await page.screenshot({ path: join(ARTIFACTS, `console-${name}.png`), fullPage: true });
  }

  /** Waits for a text; on a timeout the error names the page and what it shows instead (for a failure's diagnosis). */
  async function seeText(page: Page, text: string): Promise<void> {
    try {
      await page.getByText(text).first().waitFor({ timeout: 15_000 });
    } catch (error) {
      const main = await page
        .locator('main')
        .innerText()
        .catch(() => '(no main)');
      throw new Error(`"${text}" not seen on ${page.url()}: ${main.slice(0, 600)}`, { cause: error });
    }
  }

  async function signIn(page: Page, token: string): Promise<void> {
    await page.goto(`${consoleApp.url}/sign-in`);
    await page.getByLabel('Admin token').fill(token);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForLoadState('load');
  }

  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    pets = await startPetsService();
    gateway = await startGateway({ petsUrl: pets.url, env: { USAGE_FLUSH_MS: '200' } });
    consoleApp = await startConsole(gateway.adminUrl);
    const created = await adminCall(gateway, 'POST', '/consumers', { name: CONSUMER, plan: 'free' });
    consumerKey = (created.body as { key: { key: string } }).key.key;
    for (const name of ['acme-other', 'zeta-corp'])
      await adminCall(gateway, 'POST', '/consumers', { name, plan: 'free' });
    // Traffic for the charts: answers of every kind the day's row counts.
    for (let i = 0; i < 5; i += 1) expect((await v1(consumerKey)).status).toBe(200);
    await call(`${gateway.url}/v1/pets/not-a-number`, { headers: { authorization: `Bearer ${consumerKey}` } });
    expect(
      (
        await adminCall(gateway, 'POST', '/plan-requests', {
          consumer: 'zeta-corp',
          requestedPlan: 'business',
          expectedVolume: 'About 50,000 requests a day',
          message: 'Launching next week.',
        })
      ).status,
    ).toBe(201);
    await new Promise((resolve) => setTimeout(resolve, 600)); // a usage flush
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await consoleApp?.close();
    await gateway?.close();
    await pets?.close();
  });

  it('a write token: finds the consumer, raises its plan, rotates its key, sees both in the audit log under its name', async () => {
    const writer = await createToken('oncall-writer', WRITE_SCOPES);
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const pageErrors: string[] = [];
    page.on('pageerror', (error) => pageErrors.push(error.message));
    page.on('console', (message) => message.type() === 'error' && pageErrors.push(message.text()));

    await page.goto(`${consoleApp.url}/sign-in`);
    // Keyboard first: the skip link is the first stop, and it leads to the main content.
    await page.keyboard.press('Tab');
    await expect(
      page.evaluate(
        () =>
          (globalThis as unknown as { document: { activeElement: { textContent: string } } }).document.activeElement
            .textContent,
      ),
    ).resolves.toBe('Skip to content');
    await shot(page, 'sign-in');
    await checkPage(page, 'console-sign-in');
    await signIn(page, writer.token);
    await expect(page.getByRole('heading', { level: 1, name: 'Overview' }).isVisible()).resolves.toBe(true);
    await page.locator('[data-testid="usage-chart"][data-drawn="true"]').first().waitFor();
    await shot(page, 'overview');
    // The usage tables are whole (no column cut off inside their box), at a laptop's width and at a phone's.
    for (const width of [1280, 390]) {
      await page.setViewportSize({ width, height: 900 });
      expect([width, ...(await isCut(page, '.usage .table-scroll'))]).toEqual([width, false, false]);
    }
    await page.setViewportSize({ width: 1280, height: 900 });
    await checkPage(page, 'console-overview');

    await page.getByRole('link', { name: 'Consumers' }).click();
    await page.getByLabel('Search consumers').fill('acme-b');
    await page.getByRole('button', { name: 'Search' }).click();
    await expect(page.getByRole('link', { name: 'acme-other' }).count()).resolves.toBe(0);
    await shot(page, 'consumers-search');
    await checkPage(page, 'console-consumers');
    await page.getByRole('link', { name: CONSUMER }).click();
    await page.getByRole('heading', { level: 1, name: CONSUMER }).waitFor();

    // Raise the plan.
    // The plan and its limits in words, the plans offered with theirs: all from the same plans file.
    expect(await page.getByTestId('plan-limits').innerText()).toBe(`${describeLimits(PLANS.free)} (the plan's)`);
    expect(await page.getByLabel('Plan', { exact: true }).locator('option').allInnerTexts()).toEqual([
      `Free (${describeLimits(PLANS.free)})`,
      `Pro (${describeLimits(PLANS.pro)})`,
      `Business (${describeLimits(PLANS.business)})`,
      'Enterprise (its own limits)',
    ]);
    await page.getByLabel('Plan', { exact: true }).selectOption('pro');
    await page.getByRole('button', { name: 'Save plan and limits' }).click();
    await seeText(page, `Saved: ${CONSUMER} is on the Pro plan (${describeLimits(PLANS.pro)})`);
    expect(await page.getByTestId('plan-limits').innerText()).toBe(`${describeLimits(PLANS.pro)} (the plan's)`);
    // Bad input: the console's own sentence next to the form (never the API's message), what was typed kept.
    await page.getByLabel('Own limit per minute').fill('0');
    await page.getByLabel('Own limit per day').fill('1000');
    await page.getByRole('button', { name: 'Save plan and limits' }).click();
    await page.getByRole('alert').filter({ hasText: 'These limits were not accepted' }).waitFor();
    expect(await page.locator('main').innerText()).not.toContain('perMinute must be');
    await expect(page.getByLabel('Own limit per minute').inputValue()).resolves.toBe('0');
    await shot(page, 'consumer-plan-refused');
    await checkPage(page, 'console-consumer-plan-refused');
    await page.goto(`${consoleApp.url}/consumers/${CONSUMER}`);
    expect(((await adminCall(gateway, 'GET', `/consumers/${CONSUMER}`)).body as { plan: string }).plan).toBe('pro');
    await page.locator('[data-testid="usage-chart"][data-drawn="true"]').waitFor();
    // The windows' resets read as the portal's do: the instant (UTC), then the duration, never raw seconds.
    const dayRow = page.getByRole('row').filter({ has: page.getByRole('rowheader', { name: 'day', exact: true }) });
    const resets = dayRow.getByRole('cell').last();
    expect((await resets.innerText()).trim()).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC, in (1 d|23 h \d+ min)$/);
    const resetsAt = Date.parse((await resets.locator('time').getAttribute('datetime'))!);
    // The instant is the duration from now (within the day window and a minute of rendering).
    expect(resetsAt - Date.now()).toBeGreaterThan(23 * 3_600_000);
    expect(resetsAt - Date.now()).toBeLessThanOrEqual(86_400_000 + 60_000);
    await shot(page, 'consumer');
    await checkPage(page, 'console-consumer');

    // Rotate the key with an hour's overlap: both keys work meanwhile. The overlaps read as on the portal.
    expect(await page.getByLabel('Old key keeps working').locator('option').allInnerTexts()).toEqual(
      ROTATION_OVERLAPS.map((o) => o.label),
    );
    await page.getByLabel('Old key keeps working').selectOption({ label: '1 hour' });
    await page.getByRole('button', { name: /^Rotate / }).click();
    const newKey = (await page.getByTestId('new-key').textContent())!.trim();
    expect(newKey).toMatch(/^petk_/);
    await expect(page.getByText(/keeps working until/).isVisible()).resolves.toBe(true);
    // Post/Redirect/Get, with a Copy button; a reload says the key was shown once.
    expect(new URL(page.url()).pathname).toBe(`/consumers/${CONSUMER}/keys/new`);
    await page.getByRole('button', { name: 'Copy' }).waitFor();
    await shot(page, 'new-key');
    await checkPage(page, 'console-new-key');
    expect((await page.reload())?.status()).toBe(200);
    await page.getByText('This key was shown once').waitFor();
    expect(await page.getByTestId('new-key').count()).toBe(0);
    await checkPage(page, 'console-new-key-reloaded');
    expect((await v1(newKey)).status).toBe(200);
    expect((await v1(consumerKey)).status).toBe(200);

    // Both changes in the audit log, under the token's name.
    await page.getByRole('link', { name: `Back to ${CONSUMER}` }).click();
    // A refusal in the console's words, chosen by its code: the page offers to rotate a key rotated meanwhile elsewhere.
    const keys = (
      (await adminCall(gateway, 'GET', `/consumers/${CONSUMER}`)).body as {
        keys: Array<{ id: string; state: string; replacedBy: string | null }>;
      }
    ).keys;
    const current = keys.find((k) => k.state === 'active' && k.replacedBy === null)!;
    const elsewhere = await adminCall(gateway, 'POST', `/consumers/${CONSUMER}/keys/${current.id}/rotate`, {
      overlapSeconds: 3600,
    });
    expect(elsewhere.status).toBe(201);
    await page.getByRole('button', { name: /^Rotate / }).click();
    await page
      .getByRole('alert')
      .filter({ hasText: 'This key was rotated already: rotate its successor instead.' })
      .waitFor();
    expect(await page.locator('main').innerText()).not.toMatch(/KEY_ALREADY_ROTATED|was already rotated/);
    const trail = page.getByTestId('consumer-audit');
    await expect(
      trail.getByRole('row').filter({ hasText: 'oncall-writer' }).filter({ hasText: 'key.rotate' }).count(),
    ).resolves.toBe(1);
    await expect(
      trail.getByRole('row').filter({ hasText: 'oncall-writer' }).filter({ hasText: 'consumer.update' }).count(),
    ).resolves.toBe(1);
    await page.getByRole('link', { name: 'Audit log' }).click();
    await page.getByLabel('Actor').fill('oncall-writer');
    // Dates typed as every date in the console reads: YYYY-MM-DD (no locale's mm/dd/yyyy).
    for (const label of ['From (UTC)', 'To (UTC, inclusive)']) {
      expect(await page.getByLabel(label).getAttribute('type')).toBe('text');
      expect(await page.getByLabel(label).getAttribute('placeholder')).toBe('YYYY-MM-DD');
    }
    await page.getByLabel('From (UTC)').fill(new Date().toISOString().slice(0, 10));
    await page.getByRole('button', { name: 'Filter' }).click();
    const audit = page.getByTestId('audit-table');
    await expect(
      audit.getByRole('row').filter({ hasText: 'key.rotate' }).filter({ hasText: CONSUMER }).count(),
    ).resolves.toBe(1);
    await expect(
      audit.getByRole('row').filter({ hasText: 'consumer.update' }).filter({ hasText: 'plan: "free" → "pro"' }).count(),
    ).resolves.toBe(1);
    await shot(page, 'audit');
    await checkPage(page, 'console-audit');

    // The other pages an operator with every scope sees.
    await page.getByRole('link', { name: 'Plan requests' }).click();
    await page.getByRole('heading', { name: /zeta-corp: Free → Business/ }).waitFor();
    await shot(page, 'plan-requests');
    await checkPage(page, 'console-plan-requests');
    await page.getByRole('link', { name: 'Tokens' }).click();
    await page.getByRole('row').filter({ hasText: 'oncall-writer' }).first().waitFor();
    await shot(page, 'tokens');
    await checkPage(page, 'console-tokens');
    expect(await page.getByLabel('Expires (optional)').getAttribute('placeholder')).toBe('YYYY-MM-DD');
    await page.getByLabel('Token name').fill('ci-readonly');
    await page.getByRole('checkbox', { name: 'consumers:read' }).check();
    await page.getByRole('button', { name: 'Create token' }).click();
    const newToken = (await page.getByTestId('new-token').textContent())!.trim();
    expect(((await adminCall(gateway, 'GET', '/token', undefined, newToken)).body as { name: string }).name).toBe(
      'ci-readonly',
    );
    await page.getByRole('button', { name: 'Copy' }).waitFor();
    await shot(page, 'new-token');
    await checkPage(page, 'console-new-token');
    await page.reload();
    await page.getByText('This token was shown once').waitFor();
    await page.goto(`${consoleApp.url}/consumers/no-such-consumer`);
    await page.getByText('No consumer named "no-such-consumer"').waitFor();
    await shot(page, 'not-found');
    await checkPage(page, 'console-not-found');
    pageErrors.splice(0); // the 404 page's own status, reported by Chromium as a failed load
    await page.getByRole('link', { name: 'Consumers' }).click();
    await page.getByRole('link', { name: CONSUMER }).click();
    await page
      .getByRole('link', { name: /^Revoke / })
      .first()
      .click();
    await page.getByRole('button', { name: 'Revoke key' }).waitFor();
    await shot(page, 'revoke-confirm');
    await checkPage(page, 'console-revoke-confirm');
    expect(pageErrors).toEqual([]);
    await page.close();
  });

  it("the 30-day chart's table holds the numbers of GET /consumers/{name}/usage/history", async () => {
    const reader = await createToken('chart-reader', READ_SCOPES);
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await signIn(page, reader.token);
    await page.goto(`${consoleApp.url}/consumers/${CONSUMER}`);
    await page.locator('[data-testid="usage-chart"][data-drawn="true"]').waitFor();
    const rows = await page
      .getByTestId('usage-table')
      .locator('tbody tr')
      .evaluateAll((trs) =>
        trs.map((tr) => [
          tr.querySelector('time')!.getAttribute('datetime'),
          ...Array.from(tr.querySelectorAll('td')).map((td) =>
            Number((td as { textContent: string | null }).textContent),
          ),
        ]),
      );
    // Hovering the chart shows the day in UTC and in the browser's local time in its legend.
    const chart = page.getByTestId('usage-chart');
    const over = chart.locator('.u-over');
    const box = (await over.boundingBox())!;
    await over.hover({ position: { x: box.width / 2, y: box.height / 2 } });
    await over.hover({ position: { x: box.width - 3, y: box.height / 2 } });
    const legendTime = chart.locator('.u-legend .u-series').first().locator('.u-value');
    await page.waitForFunction(
      (el) => /UTC/.test((el as { textContent: string | null }).textContent ?? ''),
      await legendTime.elementHandle(),
      { timeout: 5000 },
    );
    await expect(legendTime.textContent()).resolves.toMatch(/^\d{4}-\d{2}-\d{2} UTC \(local .+\)$/);
    await chart.screenshot({ path: join(ARTIFACTS, 'console-chart-hover.png') });
    const firstDay = String(rows[0][0]).slice(0, 10);
    const api = (
      await adminCall(gateway, 'GET', `/consumers/${CONSUMER}/usage/history?granularity=day&from=${firstDay}`)
    ).body as {
      buckets: Array<{
        start: string;
        requests: number;
        ok: number;
        clientErrors: number;
        rateLimited: number;
        serverErrors: number;
      }>;
    };
    expect(rows).toEqual(
      api.buckets.map((b) => [
        new Date(b.start).toISOString(),
        b.requests,
        b.ok,
        b.clientErrors,
        b.rateLimited,
        b.serverErrors,
      ]),
    );
    expect(rows).toHaveLength(30);
    const today = rows[rows.length - 1];
    expect(today[1]).toBeGreaterThanOrEqual(6); // the traffic of this file: 5 ok, 1 client error (and the rotation's checks)
    await page.close();
  });

  it('a read-only token finds no write action on any page', async () => {
    const reader = await createToken('oncall-reader', READ_SCOPES);
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await signIn(page, reader.token);
    const visited: string[] = [];
    const check = async (name: string) => {
      await page.waitForLoadState('load');
      visited.push(new URL(page.url()).pathname);
      const postForms = await page
        .locator('form[method="post"]')
        .evaluateAll((forms) => forms.map((f) => f.getAttribute('action')));
      expect(`${name}: ${postForms.join(', ')}`).toBe(`${name}: /sign-out`);
      for (const label of [
        'Save',
        'Rotate',
        'Revoke',
        'Issue key',
        'Disable',
        'Enable',
        'Unban',
        'Approve',
        'Decline',
        'Create token',
      ]) {
        expect(`${name}: ${label} ${await page.getByRole('button', { name: label }).count()}`).toBe(
          `${name}: ${label} 0`,
        );
        expect(`${name}: ${label} ${await page.getByRole('link', { name: label, exact: true }).count()}`).toBe(
          `${name}: ${label} 0`,
        );
      }
    };
    await check('overview');
    await page.getByRole('link', { name: 'Consumers' }).click();
    await check('consumers');
    await page.getByRole('link', { name: CONSUMER }).click();
    await check('consumer');
    await shot(page, 'consumer-read-only');
    await checkPage(page, 'console-consumer-read-only');
    await page.getByRole('link', { name: 'Plan requests' }).click();
    await check('plan requests');
    await page.getByRole('link', { name: 'Audit log' }).click();
    await check('audit');
    await expect(page.getByRole('link', { name: 'Tokens' }).count()).resolves.toBe(0);
    expect(visited).toEqual(['/', '/consumers', `/consumers/${CONSUMER}`, '/plan-requests', '/audit']);
    await page.close();
  });

  it('a wrong token cannot sign in; a revoked token cannot, and its open session ends on its next request', async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 700 } });
    await signIn(page, 'adm_this-is-not-a-token');
    await page.getByText('This token was not accepted: it is wrong, revoked or expired.').waitFor();
    await expect(page.getByLabel('Admin token').getAttribute('aria-invalid')).resolves.toBe('true');
    await shot(page, 'sign-in-refused');
    await checkPage(page, 'console-sign-in-refused');

    const doomed = await createToken('doomed', READ_SCOPES);
    await signIn(page, doomed.token);
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
    expect((await adminCall(gateway, 'POST', `/tokens/${doomed.id}/revoke`)).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 1100)); // revocation reaches every instance within a second
    await page.getByRole('link', { name: 'Consumers' }).click();
    await page.getByText('Your session ended').waitFor();
    expect(new URL(page.url()).pathname).toBe('/sign-in');
    await shot(page, 'session-ended');
    await checkPage(page, 'console-session-ended');
    await signIn(page, doomed.token);
    await page.getByText('This token was not accepted').waitFor();
    await page.close();
  });

  it('refuses a form whose CSRF token is missing or forged (403 page, nothing changed)', async () => {
    const writer = await createToken('csrf-writer', WRITE_SCOPES);
    const page = await browser.newPage({ viewport: { width: 1280, height: 700 } });
    await signIn(page, writer.token);
    await page.goto(`${consoleApp.url}/consumers/${CONSUMER}`);
    await page
      .locator('form[action$="/plan"] input[name="_csrf"]')
      .evaluate((input) => ((input as unknown as { value: string }).value = 'forged'));
    await page.getByLabel('Plan', { exact: true }).selectOption('business');
    const [response] = await Promise.all([
      page.waitForResponse((r) => r.url().endsWith('/plan')),
      page.getByRole('button', { name: 'Save plan and limits' }).click(),
    ]);
    expect(response.status()).toBe(403);
    await page.getByRole('heading', { name: 'Form expired' }).waitFor();
    await shot(page, 'csrf-refused');
    await checkPage(page, 'console-csrf-refused');
    expect(((await adminCall(gateway, 'GET', `/consumers/${CONSUMER}`)).body as { plan: string }).plan).toBe('pro');
    await page.close();
  });
});
