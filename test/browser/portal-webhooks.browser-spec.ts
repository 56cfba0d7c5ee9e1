import { Browser, Page } from 'playwright-core';
import { adminCall } from '../support/gateway';
import { PortalStack, startPortalStack } from '../support/portal';
import { WebhookReceiver } from '../support/webhook-receiver';
import { checkPage } from './page-checks';
import { launchChromium } from './launch-chromium';

const PASSWORD = 'correct horse battery staple';

/**
 * The portal's webhook pages in Chromium, by accessible names (issue #49, point 2; docs/portal.md, "Webhooks"): a
 * developer adds an endpoint to a local receiver (the gateway's allow-list lets it reach loopback), sees its secret
 * once, sends a test event and sees it delivered (the receiver verified its signature with that secret); the receiver
 * fails, the next test event's delivery shows the failed attempt, and a Redeliver reaches the receiver once it is
 * back. Every page is scanned (axe) at both widths, and saved to /tmp/pages-<name>.png.
 */
describe('the portal’s webhook pages (browser)', () => {
  let stack: PortalStack;
  let browser: Browser;
  let page: Page;
  const receiver = new WebhookReceiver();
  const email = `hooks-${Date.now()}@example.com`;
  const path = '/petstore-hooks';
  const pageErrors: string[] = [];

  const shot = (name: string) => page.screenshot({ path: `/tmp/pages-${name}.png`, fullPage: true });

  beforeAll(async () => {
    await receiver.start();
    stack = await startPortalStack({ gatewayEnv: { OUTBOUND_ALLOW_LIST: '127.0.0.1/32', WEBHOOK_POLL_MS: '50' } });
    browser = await launchChromium();
    page = await browser.newPage();
    page.setDefaultTimeout(15_000);
    page.on('pageerror', (error) => pageErrors.push(error.message));
  });
  afterAll(async () => {
    await browser?.close();
    await stack?.close();
    await receiver.close();
  });

  /** Reloads the deliveries page until the newest delivery's state is `state` (the worker polls every 50 ms). */
  async function newestDeliveryIs(state: string): Promise<void> {
    for (let tries = 0; tries < 100; tries += 1) {
      const first = page.getByTestId('delivery-state').first();
      if ((await first.count()) > 0 && (await first.innerText()).trim() === state) return;
      await page.waitForTimeout(200);
      await page.reload();
    }
    throw new Error(`the newest delivery never became ${state}`);
  }

  it('signs a developer up and finds the Webhooks page from the dashboard', async () => {
    await page.goto(`${stack.portal.url}/signup`);
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.getByRole('heading', { name: 'Check your email' }).waitFor();
    const mail = await stack.smtp.next(email, /Verify/);
    await page.goto(/https?:\/\/\S+\/verify\?token=[A-Za-z0-9_-]+/.exec(mail.text)![0]);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Verify my email' }).click();
    await page.getByTestId('new-key').waitFor();
    await page.getByRole('link', { name: 'Go to your dashboard' }).click();
    await page.getByRole('link', { name: 'Manage your webhook endpoints' }).click();
    await page.getByRole('heading', { name: 'Webhooks', level: 1 }).waitFor();
    expect(await page.getByText('No webhook endpoints.').count()).toBe(1);
    await shot('portal-webhooks-empty');
    await checkPage(page, 'portal-webhooks-empty');
  });

  it('refuses a private address next to the field, keeping what was typed', async () => {
    await page.getByLabel('Endpoint URL').fill('http://192.168.1.20/hooks');
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    await page.getByText('Webhooks are never sent to this address: it is a private network address.').waitFor();
    expect(await page.getByLabel('Endpoint URL').inputValue()).toBe('http://192.168.1.20/hooks');
    expect(await page.getByLabel('Endpoint URL').getAttribute('aria-invalid')).toBe('true');
    await shot('portal-webhooks-refused-target');
    await checkPage(page, 'portal-webhooks-refused-target');
  });

  it('adds an endpoint and shows its secret once', async () => {
    await page.getByLabel('Endpoint URL').fill(receiver.url(path));
    await page.getByLabel('Description (optional)').fill('Billing alerts');
    await page.getByLabel(/Credits running low/).check();
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    await page.getByRole('heading', { name: 'Your webhook signing secret' }).waitFor();
    await page.getByText('Copy the secret now: it is shown only this once.').waitFor();
    const secret = (await page.getByTestId('webhook-secret').innerText()).trim();
    expect(secret).toMatch(/^whsec_/);
    receiver.expect(path, secret);
    await shot('portal-webhook-secret');
    await checkPage(page, 'portal-webhook-secret');
    // A reload shows it no more.
    await page.reload();
    await page.getByTestId('webhook-secret-gone').waitFor();
    expect(await page.getByText(secret).count()).toBe(0);
    await page.getByRole('link', { name: 'Back to your webhooks' }).click();
    await page.getByText(receiver.url(path)).first().waitFor();
    expect(await page.getByText(secret).count()).toBe(0);
    await page.getByText('Credits running low').first().waitFor();
    await shot('portal-webhooks');
    await checkPage(page, 'portal-webhooks');
  });

  it('sends a test event and shows it delivered, signed with that secret', async () => {
    await page.getByRole('button', { name: 'Send a test event' }).click();
    await page.getByRole('heading', { name: 'Deliveries' }).waitFor();
    await page.getByText('A test event (webhook.test) is on its way').waitFor();
    await newestDeliveryIs('delivered');
    expect(receiver.at(path).map((m) => m.body.type)).toEqual(['webhook.test']);
    expect(receiver.refused).toEqual([]);
    const delivered = page.getByTestId('delivery').first();
    expect(await delivered.getByRole('rowheader').innerText()).toContain('webhook.test');
    expect(await delivered.getByTestId('attempt').first().innerText()).toMatch(/204 in [\d,]+ ms/);
    await shot('portal-webhook-deliveries');
    await checkPage(page, 'portal-webhook-deliveries');
  });

  it('shows a failing receiver’s attempts, and redelivers once it is back', async () => {
    receiver.answer({ kind: 'fail', status: 503 }, path);
    await page.getByRole('button', { name: 'Send a test event' }).click();
    await page.getByText('A test event (webhook.test) is on its way').waitFor();
    // The first attempt failed: the delivery waits for its next one (5 s later), its attempt says why.
    for (let tries = 0; tries < 100; tries += 1) {
      if ((await page.getByTestId('delivery').first().getByText('503').count()) > 0) break;
      await page.waitForTimeout(200);
      await page.reload();
    }
    const failed = page.getByTestId('delivery').first();
    expect(await failed.getByTestId('delivery-state').innerText()).toBe('pending');
    expect(await failed.getByTestId('attempt').first().innerText()).toContain('503');
    await shot('portal-webhook-deliveries-failing');
    await checkPage(page, 'portal-webhook-deliveries-failing');
    const [consumer] = (
      (await adminCall(stack.gateway, 'GET', `/consumers?email=${encodeURIComponent(email)}`)).body as {
        items: Array<{ name: string }>;
      }
    ).items;
    const [endpoint] = (
      (await adminCall(stack.gateway, 'GET', `/consumers/${consumer.name}/webhook-endpoints`)).body as {
        items: Array<{ failingSince: string | null }>;
      }
    ).items;
    expect(endpoint.failingSince).not.toBeNull();

    // Back up: Redeliver the first (delivered) test event: a new delivery of the same message, delivered again.
    receiver.answer({ kind: 'up' }, path);
    const before = receiver.requestIds().length;
    const firstTest = page.getByTestId('delivery').last();
    const webhookId = (await firstTest.locator('code').innerText()).trim();
    await firstTest.getByRole('button', { name: 'Redeliver' }).click();
    await page.getByText('Sent again').waitFor();
    await newestDeliveryIs('delivered');
    expect(receiver.requestIds().slice(before)).toContain(webhookId);
    expect(receiver.refused).toEqual([]);
    await shot('portal-webhook-redelivered');
    expect(pageErrors).toEqual([]);
  });

  it('rotates the secret with an overlap: a receiver still on the old secret keeps verifying, then switches', async () => {
    await page.goto(`${stack.portal.url}/webhooks`);
    await page.getByRole('link', { name: `Rotate secret of ${receiver.url(path)}` }).click();
    await page.getByRole('heading', { name: `Give ${receiver.url(path)} a new secret?` }).waitFor();
    expect(await page.getByLabel('The old secret keeps signing for').inputValue()).toBe('24h');
    await checkPage(page, 'portal-webhook-rotate');
    await page.getByRole('button', { name: 'Rotate secret' }).click();
    await page.getByText('the old one also signs every delivery until').waitFor();
    const rotated = (await page.getByTestId('webhook-secret').innerText()).trim();
    await checkPage(page, 'portal-webhook-secret-rotated');

    // The receiver has not switched yet: every delivery also carries the old secret's signature. (It answers 400
    // to a signature it cannot verify: "delivered" is its 204.)
    await page.goto(`${stack.portal.url}/webhooks`);
    await page.getByRole('button', { name: 'Send a test event' }).click();
    await newestDeliveryIs('delivered');
    expect(receiver.refused).toEqual([]);
    // Switched: the new secret verifies too.
    receiver.expect(path, rotated);
    await page.goto(`${stack.portal.url}/webhooks`);
    await page.getByRole('button', { name: 'Send a test event' }).click();
    await newestDeliveryIs('delivered');
    expect(receiver.refused).toEqual([]);
    expect(pageErrors).toEqual([]);
  });
});
