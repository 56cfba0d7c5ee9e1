import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { Browser, Page } from 'playwright-core';
import { adminCall, GatewayUnderTest } from '../support/gateway';
import { call, postJson } from '../support/http';
import { PortalStack, PortalUnderTest, startPortalStack } from '../support/portal';
import type { SmtpSink } from '../support/smtp-sink';
import { describeLimits, readPlanCatalogue, ROTATION_OVERLAPS } from '@app/contract';
import { checkPage, wrapsOntoTwoLines } from './page-checks';
import { ARTIFACTS, launchChromium } from './launch-chromium';

const PASSWORD = 'correct horse battery staple';
/** The plans the gateway under test runs with: the pages must say the same, from the same file. */
const PLANS = readPlanCatalogue();

/**
 * The developer portal's main path (issue #25): sign up, verify by the mailed link, see the key once, call /v1 with
 * it, see the usage move, try listPets from the reference page with the key already authorised, manage keys, ask for
 * a higher plan and read the operator's answer. Screenshots of each page go to artifacts/portal-*.png.
 */
describe('developer portal', () => {
  let stack: PortalStack;
  let gateway: GatewayUnderTest;
  let smtp: SmtpSink;
  let portal: PortalUnderTest;
  let browser: Browser;
  let page: Page;
  const pageErrors: string[] = [];
  const email = `dev-${Date.now()}@example.com`;
  let key = '';

  const shot = (name: string) => page.screenshot({ path: join(ARTIFACTS, `portal-${name}.png`), fullPage: true });

  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    // Usage flushed to the history every 200 ms: the chart moves within a test.
    stack = await startPortalStack({ gatewayEnv: { CORS_ORIGINS: 'http://127.0.0.1:1', USAGE_FLUSH_MS: '200' } });
    ({ gateway, smtp, portal } = stack);
    // The reference page calls the gateway from the portal's origin: CORS must allow it.
    gateway.config.corsOrigins.push(portal.url);
    browser = await launchChromium();
    page = await browser.newPage();
    page.setDefaultTimeout(10_000);
    page.on('pageerror', (error) => pageErrors.push(error.message));
  });
  afterAll(async () => {
    await browser?.close();
    await stack?.close();
  });

  it('signs up, keeps what was typed on bad input, verifies by the mailed link and shows the key once', async () => {
    await page.goto(portal.url);
    await shot('home');
    await expect(page.getByText(`the Free plan allows ${describeLimits(PLANS.free)}`).count()).resolves.toBe(1);
    await checkPage(page, 'portal-home');
    await page.getByRole('link', { name: 'Create an account' }).first().click();
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill('too short');
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.getByText('Use at least 12 characters.').waitFor();
    expect(await page.getByLabel('Email').inputValue()).toBe(email);
    expect(await page.getByLabel('Password').getAttribute('aria-invalid')).toBe('true');
    await shot('signup-error');
    await checkPage(page, 'portal-signup-error');
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.getByRole('heading', { name: 'Check your email' }).waitFor();
    await shot('check-email');
    await checkPage(page, 'portal-check-email');

    const mail = await smtp.next(email, /Verify/);
    const link = /https?:\/\/\S+\/verify\?token=[A-Za-z0-9_-]+/.exec(mail.text)![0];
    expect(link.startsWith(portal.url)).toBe(true);
    await page.goto(link);
    await shot('verify');
    await checkPage(page, 'portal-verify');
    // Verification asks for the sign-up's password (a first registrant who is not the mailbox's owner gets nowhere).
    await page.getByLabel('Password').fill('not the password at all');
    await page.getByRole('button', { name: 'Verify my email' }).click();
    await page.getByText('Enter the password you chose when you signed up').waitFor();
    await shot('verify-wrong-password');
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Verify my email' }).click();
    key = (await page.getByTestId('new-key').innerText()).trim();
    expect(key).toMatch(/^petk_/);
    // Signed in by the verification: the header offers the dashboard and sign-out.
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
    await shot('new-key');
    await checkPage(page, 'portal-welcome-key');
    // Post/Redirect/Get (issue #48.6): the key's page is a GET, so a reload re-posts nothing ("Form expired") and
    // says the key was shown once, still signed in.
    expect(new URL(page.url()).pathname).toBe('/keys/new');
    await page.reload();
    await page.getByTestId('new-key-gone').waitFor();
    expect(await page.getByTestId('new-key').count()).toBe(0);
    expect(await page.getByText('Form expired').count()).toBe(0);
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
    await shot('new-key-reloaded');

    // The link is single-use.
    await page.goto(link);
    await page.getByRole('button', { name: 'Verify my email' }).click();
    await page.getByText('already used or has expired').waitFor();
  });

  it('works with the key on /v1, and the dashboard shows the usage move', async () => {
    await page.goto(`${portal.url}/dashboard`);
    await shot('dashboard-first');
    const before = Number((await page.getByTestId('minute-remaining').innerText()).replace(/,/g, ''));
    expect(before).toBe(60);
    for (let i = 0; i < 3; i += 1)
      expect(
        (await call(`${gateway.url}/v1/pets?limit=1`, { headers: { authorization: `Bearer ${key}` } })).status,
      ).toBe(200);
    await page.reload();
    expect(Number(await page.getByTestId('minute-remaining').innerText())).toBe(before - 3);
    // The plan and its limits, in words, from the admin API's answer (which the gateway takes from plans.json).
    expect(await page.getByTestId('plan-name').innerText()).toBe('Free');
    expect(await page.getByTestId('plan-limits').innerText()).toBe(describeLimits(PLANS.free));
    // The 24-hour window says what it counts and when it resets, in words, and why the table below may count more.
    const day = await page.getByTestId('day-card').innerText();
    expect(day).toContain('This 24-hour window');
    expect(await page.getByTestId('day-used').innerText()).toBe('3');
    expect(await page.getByTestId('day-resets').innerText()).toMatch(/^(1 d|23 h \d+ min)$/);
    expect(await page.locator('#counts-explained').innerText()).toContain('refusals (429) included');
    // The 30-day history (usage-history API, flushed): today's row counts the calls, the chart is drawn beside it.
    const table = page.getByTestId('usage-table');
    const rows = table.locator('tbody tr');
    expect(await rows.count()).toBe(30);
    const today = new Date().toISOString().slice(0, 10);
    const todayRow = rows.last();
    let cells: string[] = [];
    for (const deadline = Date.now() + 5000; Date.now() < deadline;) {
      cells = await todayRow.locator('th, td').allInnerTexts();
      if (Number(cells[1]) >= 3) break;
      await new Promise((resolve) => setTimeout(resolve, 300));
      await page.reload();
    }
    expect(cells[0]).toBe(today);
    expect(Number(cells[1])).toBe(3);
    await page.getByTestId('usage-chart').locator('canvas').first().waitFor();
    await shot('dashboard');
    await checkPage(page, 'portal-dashboard');
  });

  it('runs listPets from the API reference with the key already authorised', async () => {
    await postJson(`${gateway.url}/v1/pets`, { name: 'Portal Rex', categoryId: 1 }, { authorization: `Bearer ${key}` });
    await page.getByRole('link', { name: 'API reference' }).first().click();
    await page.getByText('Authorised with your key').waitFor();
    await page.locator('#operations-animals-listPets .opblock-summary').click();
    const operation = page.locator('#operations-animals-listPets');
    const tryIt = operation.getByRole('button', { name: /try it out/i });
    if (await tryIt.isVisible()) await tryIt.click();
    await operation.getByRole('button', { name: /execute/i }).click();
    const status = operation.locator('.live-responses-table .response .response-col_status').first();
    await status.waitFor({ timeout: 30_000 });
    expect((await status.innerText()).trim()).toBe('200');
    expect(await operation.locator('.live-responses-table').first().innerText()).toContain('Portal Rex');
    expect(await operation.locator('.curl-command').innerText()).toContain(`Bearer ${key}`);
    await operation.scrollIntoViewIfNeeded();
    await page.screenshot({ path: join(ARTIFACTS, 'portal-reference.png') });
  });

  it('creates, rotates (with an overlap) and revokes keys, each new key shown once', async () => {
    await page.goto(`${portal.url}/dashboard`);
    await page.getByRole('button', { name: 'Create key' }).click();
    const second = (await page.getByTestId('new-key').innerText()).trim();
    expect(second).toMatch(/^petk_/);
    // Post/Redirect/Get: the key is on a page of its own, with a Copy button and the plan's limits.
    expect(new URL(page.url()).pathname).toBe('/keys/new');
    await page.getByRole('button', { name: 'Copy' }).waitFor();
    expect(await page.getByTestId('plan-limits').innerText()).toBe(describeLimits(PLANS.free));
    await checkPage(page, 'portal-new-key');
    // A reload shows no key and no error: the page says the key was shown once.
    const reloaded = await page.reload();
    expect(reloaded?.status()).toBe(200);
    await page.getByText('This key was shown once').waitFor();
    expect(await page.getByTestId('new-key').count()).toBe(0);
    expect(await page.getByText('Form expired').count()).toBe(0);
    await checkPage(page, 'portal-new-key-reloaded');
    expect(
      (await call(`${gateway.url}/v1/pets?limit=1`, { headers: { authorization: `Bearer ${second}` } })).status,
    ).toBe(200);

    await page.goto(`${portal.url}/dashboard`);
    const firstHint = key.slice(0, 9);
    // Rotate and Revoke sit on one line, at a laptop's width and at a phone's (the table scrolls in its box there).
    for (const width of [1280, 390]) {
      await page.setViewportSize({ width, height: 900 });
      expect([width, ...(await wrapsOntoTwoLines(page, '.key-actions'))]).toEqual([width, false, false]);
      expect([width, ...(await wrapsOntoTwoLines(page, '.key-actions form'))]).toEqual([width, false, false]);
    }
    await page.setViewportSize({ width: 1280, height: 900 });
    await checkPage(page, 'portal-dashboard-keys');
    const row = page.locator('tr', { has: page.getByText(firstHint) });
    // The overlaps, in the one wording both apps use.
    expect(await row.getByLabel('Old key keeps working').locator('option').allInnerTexts()).toEqual(
      ROTATION_OVERLAPS.map((o) => o.label),
    );
    await row.getByLabel('Old key keeps working').selectOption({ label: '1 hour' });
    await row.getByRole('button', { name: /^Rotate/ }).click();
    const rotated = (await page.getByTestId('new-key').innerText()).trim();
    expect(rotated).not.toBe(key);
    await page.getByText('keeps working until').waitFor();
    await shot('rotated');
    await checkPage(page, 'portal-rotated');
    for (const k of [key, rotated])
      expect((await call(`${gateway.url}/v1/pets?limit=1`, { headers: { authorization: `Bearer ${k}` } })).status).toBe(
        200,
      );

    await page.goto(`${portal.url}/dashboard`);
    const secondRow = page.locator('tr', { has: page.getByText(second.slice(0, 9)) });
    await secondRow.getByRole('link', { name: /^Revoke/ }).click();
    await page.getByRole('heading', { name: /Revoke key/ }).waitFor();
    await shot('revoke-confirm');
    await checkPage(page, 'portal-revoke-confirm');
    await page.getByRole('button', { name: 'Revoke' }).click();
    await page.getByText('The key is revoked').waitFor();
    expect(
      (await call(`${gateway.url}/v1/pets?limit=1`, { headers: { authorization: `Bearer ${second}` } })).status,
    ).toBe(401);
    await shot('dashboard-keys');
  });

  it('asks for another plan: only other plans offered, a pending request instead of the form, refusals in its own words', async () => {
    await page.goto(`${portal.url}/plan`);
    // Only the plans the consumer is not on, each with its limits from the catalogue.
    const offered = await page.getByLabel('Plan').locator('option').allInnerTexts();
    expect(offered).toEqual([
      'Choose a plan',
      `Pro (${describeLimits(PLANS.pro)})`,
      `Business (${describeLimits(PLANS.business)})`,
      `Enterprise (${describeLimits(PLANS.enterprise)})`,
    ]);
    await checkPage(page, 'portal-plan');
    await page.getByLabel('Message').fill('A shelter app for the city.');
    await page.getByRole('button', { name: 'Send request' }).click();
    await page.getByText('Choose a plan.').waitFor();
    expect(await page.getByLabel('Message').inputValue()).toBe('A shelter app for the city.');
    await shot('plan-error');
    await checkPage(page, 'portal-plan-error');
    await page.getByLabel('Plan').selectOption('pro');
    await page.getByLabel('Expected volume').fill('5,000 requests a day');
    await page.getByRole('button', { name: 'Send request' }).click();
    await page.getByText('Your request was sent').waitFor();
    expect(await page.getByTestId('plan-request').innerText()).toContain('pending');
    // While it waits: no link to ask again on the dashboard, and the plan page shows the request, not the form.
    expect(await page.getByRole('main').getByRole('link', { name: 'Ask for another plan' }).count()).toBe(0);
    await page.goto(`${portal.url}/plan`);
    await page.getByText('is waiting for an operator').waitFor();
    expect(await page.getByRole('button', { name: 'Send request' }).count()).toBe(0);
    await checkPage(page, 'portal-plan-pending');

    const pending = (await adminCall(gateway, 'GET', '/plan-requests?status=pending')).body as {
      items: Array<{ id: string; expectedVolume: string; consumer: string }>;
    };
    expect(pending.items.map((r) => r.expectedVolume)).toContain('5,000 requests a day');
    const consumer = pending.items[0].consumer;
    await adminCall(gateway, 'POST', `/plan-requests/${pending.items[0].id}/decline`, {
      note: 'Pro needs a company address.',
    });
    await page.goto(`${portal.url}/dashboard`);
    expect(await page.getByTestId('plan-request').innerText()).toContain('declined');
    expect(await page.getByTestId('plan-request-note').innerText()).toBe('Pro needs a company address.');
    await shot('plan-declined');

    // A refusal of the admin API, chosen by its code: a request made elsewhere while this form was open.
    await page.goto(`${portal.url}/plan`);
    await page.getByLabel('Plan').selectOption('business');
    await page.getByLabel('Expected volume').fill('50,000 a day');
    const elsewhere = await adminCall(gateway, 'POST', '/plan-requests', {
      consumer,
      requestedPlan: 'pro',
      expectedVolume: '5,000 requests a day',
      message: '',
    });
    expect(elsewhere.status).toBe(201);
    const [refused] = await Promise.all([
      page.waitForResponse((r) => r.request().method() === 'POST' && r.url().endsWith('/plan')),
      page.getByRole('button', { name: 'Send request' }).click(),
    ]);
    expect(refused.status()).toBe(409);
    await page.getByText('is waiting for an operator').waitFor();
    expect(await page.locator('main').innerText()).not.toMatch(/requestedPlan|pending request for consumer/i);

    // Approved: every page now states Pro and its limits, the new-key page included.
    await adminCall(gateway, 'POST', `/plan-requests/${(elsewhere.body as { id: string }).id}/approve`, {});
    await page.goto(`${portal.url}/dashboard`);
    expect(await page.getByTestId('plan-name').innerText()).toBe('Pro');
    expect(await page.getByTestId('plan-limits').innerText()).toBe(describeLimits(PLANS.pro));
    await page.getByRole('button', { name: 'Create key' }).click();
    expect(await page.getByTestId('plan-limits').innerText()).toBe(describeLimits(PLANS.pro));
    await expect(page.getByText(`Your Pro plan allows ${describeLimits(PLANS.pro)}`).count()).resolves.toBe(1);
    await page.goto(`${portal.url}/plan`);
    expect(await page.getByLabel('Plan').locator('option').allInnerTexts()).toEqual([
      'Choose a plan',
      `Free (${describeLimits(PLANS.free)})`,
      `Business (${describeLimits(PLANS.business)})`,
      `Enterprise (${describeLimits(PLANS.enterprise)})`,
    ]);
    expect(pageErrors).toEqual([]);
  });

  it('works from the keyboard alone: skip link, sign out and back in with Tab and Enter', async () => {
    await page.goto(`${portal.url}/dashboard`);
    await page.keyboard.press('Tab');
    expect(await page.evaluate<string | null>('document.activeElement && document.activeElement.textContent')).toBe(
      'Skip to content',
    );
    // Tab through the header to "Sign out" and press it.
    for (
      let i = 0;
      i < 10 &&
      (await page.evaluate<string | null>('document.activeElement && document.activeElement.textContent')) !==
        'Sign out';
      i += 1
    )
      await page.keyboard.press('Tab');
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    // The page a sign-out leads to says so (issue #37.9).
    expect(await page.getByRole('status').filter({ hasText: 'You are signed out.' }).count()).toBe(1);
    await shot('signed-out');
    await page.getByLabel('Email').focus();
    await page.keyboard.type(email);
    await page.keyboard.press('Tab');
    expect(await page.evaluate<string | null>('document.activeElement && document.activeElement.id')).toBe(
      'field-password',
    );
    await page.keyboard.type(PASSWORD);
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Your dashboard' }).waitFor();
    await shot('login-keyboard');
  });

  it('shows the sign-in and reset pages, and their refusals, readable at both widths and with no serious axe finding', async () => {
    const visitor = await browser.newPage();
    const swap = page;
    page = visitor;
    try {
      await page.goto(`${portal.url}/login`);
      await checkPage(page, 'portal-login');
      await page.getByLabel('Email').fill(email);
      await page.getByLabel('Password').fill('not the password at all');
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('alert').filter({ hasText: 'Wrong email or password' }).waitFor();
      await checkPage(page, 'portal-login-refused');
      await page.goto(`${portal.url}/reset`);
      await checkPage(page, 'portal-reset');
      await page.getByLabel('Email').fill('not an address');
      await page.getByRole('button', { name: 'Send reset link' }).click();
      await page.getByText('Enter an email address such as name@example.com.').waitFor();
      expect(await page.getByLabel('Email').inputValue()).toBe('not an address');
      await checkPage(page, 'portal-reset-error');
      await page.goto(`${portal.url}/reset/confirm?token=no-such-link`);
      await page.getByRole('alert').filter({ hasText: 'already used or has expired' }).waitFor();
      await checkPage(page, 'portal-reset-confirm-expired');
    } finally {
      page = swap;
      await visitor.close();
    }
  });
});
