import { Browser, Page } from 'playwright-core';
import { ConsoleUnderTest, startConsole } from '../support/console';
import { adminCall, GatewayUnderTest, startGateway } from '../support/gateway';
import { RunningPets, startPetsService } from '../support/pets-service';
import { WebhookReceiver } from '../support/webhook-receiver';
import { checkPage } from './page-checks';
import { launchChromium } from './launch-chromium';

const CONSUMER = 'acme-hooks';
const OPERATOR_SCOPES = ['consumers:read', 'consumers:write', 'usage:read', 'webhooks:read', 'webhooks:write'];

/**
 * The console's Webhooks page in Chromium (issue #49, point 2; docs/console.md, "Webhooks"): a consumer's endpoint
 * whose receiver fails is listed among the failing endpoints with its consumer, URL, failing since and the last
 * error, and links to its deliveries; an operator adds a fleet-wide endpoint (its secret once) and deletes it; a
 * token without webhooks:read has no Webhooks page; a consumer's own alert thresholds are saved from its billing
 * form. Every page is scanned (axe) at both widths and saved to /tmp/pages-<name>.png.
 */
describe('the console’s Webhooks page (browser)', () => {
  let pets: RunningPets;
  let gateway: GatewayUnderTest;
  let consoleApp: ConsoleUnderTest;
  let browser: Browser;
  let page: Page;
  const receiver = new WebhookReceiver();

  const shot = (name: string) => page.screenshot({ path: `/tmp/pages-${name}.png`, fullPage: true });

  async function token(name: string, scopes: string[]): Promise<string> {
    const reply = await adminCall(gateway, 'POST', '/tokens', { name, scopes });
    expect(reply.status).toBe(201);
    return (reply.body as { token: string }).token;
  }

  async function signIn(as: string): Promise<void> {
    await page.goto(`${consoleApp.url}/sign-in`);
    await page.getByLabel('Admin token').fill(as);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
  }

  beforeAll(async () => {
    await receiver.start();
    pets = await startPetsService();
    gateway = await startGateway({
      petsUrl: pets.url,
      env: { OUTBOUND_ALLOW_LIST: '127.0.0.1/32', WEBHOOK_POLL_MS: '50' },
    });
    consoleApp = await startConsole(gateway.adminUrl);
    expect((await adminCall(gateway, 'POST', '/consumers', { name: CONSUMER, plan: 'free' })).status).toBe(201);
    browser = await launchChromium();
    page = await browser.newPage();
    page.setDefaultTimeout(15_000);
  });
  afterAll(async () => {
    await browser?.close();
    await consoleApp?.close();
    await gateway?.close();
    await pets?.close();
    await receiver.close();
  });

  it('lists a failing endpoint with its consumer, URL, failing since and last error, and its deliveries', async () => {
    const url = receiver.url('/acme');
    const created = await adminCall(gateway, 'POST', `/consumers/${CONSUMER}/webhook-endpoints`, { url });
    const endpoint = created.body as { id: string; secret: string };
    receiver.expect('/acme', endpoint.secret);
    receiver.answer({ kind: 'fail', status: 502 }, '/acme');
    await adminCall(gateway, 'POST', `/consumers/${CONSUMER}/webhook-endpoints/${endpoint.id}/test`);
    // The worker's first attempt fails: the endpoint is failing from then on.
    for (let tries = 0; tries < 100; tries += 1) {
      const read = await adminCall(gateway, 'GET', `/consumers/${CONSUMER}/webhook-endpoints/${endpoint.id}`);
      if ((read.body as { failingSince: string | null }).failingSince) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }

    await signIn(await token('hooks-operator', OPERATOR_SCOPES));
    await page.getByRole('link', { name: 'Webhooks' }).click();
    await page.getByRole('heading', { name: 'Failing webhook endpoints' }).waitFor();
    const row = page.getByTestId('failing-endpoints').locator(`tr[data-endpoint-id="${endpoint.id}"]`);
    expect(await row.getByRole('rowheader').innerText()).toBe(CONSUMER);
    expect(await row.getByText(url).count()).toBe(1);
    expect(await row.getByTestId('last-error').innerText()).toBe('HTTP 502');
    expect(await row.locator('td.when').innerText()).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d UTC$/);
    await shot('console-webhooks');
    await checkPage(page, 'console-webhooks');

    await row.getByRole('link', { name: 'Deliveries' }).click();
    await page.getByRole('heading', { name: 'Deliveries' }).waitFor();
    expect(await page.getByTestId('delivery').first().getByTestId('attempt').first().innerText()).toContain('502');
    expect(await page.getByRole('button', { name: 'Redeliver' }).count()).toBe(0);
    await shot('console-webhook-deliveries');
    await checkPage(page, 'console-webhook-deliveries');
  });

  it('adds a fleet-wide endpoint (its secret once), rotates its secret and deletes it', async () => {
    await page.goto(`${consoleApp.url}/webhooks`);
    await page.getByLabel('Endpoint URL').fill('http://10.1.2.3/fleet');
    await page.getByRole('button', { name: 'Add fleet-wide endpoint' }).click();
    await page.getByText('Webhooks are never sent to this address: it is a private network address.').waitFor();
    await page.getByLabel('Endpoint URL').fill(receiver.url('/fleet'));
    await page.getByLabel('Description (optional)').fill('Operations channel');
    await page.getByRole('button', { name: 'Add fleet-wide endpoint' }).click();
    const secret = (await page.getByTestId('webhook-secret').innerText()).trim();
    expect(secret).toMatch(/^whsec_/);
    await shot('console-webhook-secret');
    await checkPage(page, 'console-webhook-secret');
    await page.getByRole('link', { name: 'Back to the webhooks' }).click();
    await page.getByText('Operations channel').waitFor();
    expect(await page.getByText(secret).count()).toBe(0);
    await shot('console-webhooks-fleet');
    // Rotated with no overlap (a leaked secret): the new one once, the old one no longer signs.
    await page.getByRole('link', { name: `Rotate secret of ${receiver.url('/fleet')}` }).click();
    await page.getByLabel('The old secret keeps signing for').selectOption('none');
    await checkPage(page, 'console-webhook-rotate');
    await page.getByRole('button', { name: 'Rotate secret' }).click();
    await page.getByText('the old one no longer signs').waitFor();
    await checkPage(page, 'console-webhook-secret-rotated');
    const rotated = (await page.getByTestId('webhook-secret').innerText()).trim();
    expect(rotated).toMatch(/^whsec_/);
    expect(rotated).not.toBe(secret);
    const [listed] = (
      (await adminCall(gateway, 'GET', '/webhook-endpoints')).body as {
        items: Array<{ secret: string; previousSecretSignsUntil: string | null }>;
      }
    ).items;
    expect(listed).toMatchObject({ secret: `whsec_…${rotated.slice(-4)}`, previousSecretSignsUntil: null });
    await page.getByRole('link', { name: 'Back to the webhooks' }).click();
    await page.getByRole('link', { name: `Delete ${receiver.url('/fleet')}` }).click();
    await page.getByRole('button', { name: 'Delete endpoint' }).click();
    await page.getByText(`The fleet-wide endpoint ${receiver.url('/fleet')} is deleted.`).waitFor();
    expect(((await adminCall(gateway, 'GET', '/webhook-endpoints')).body as { items: unknown[] }).items).toEqual([]);
  });

  it('saves a consumer’s own alert thresholds from its billing form', async () => {
    await page.goto(`${consoleApp.url}/consumers/${CONSUMER}`);
    await page.getByLabel('Thresholds (%)').fill('90, 50');
    await page.getByRole('button', { name: 'Save alert thresholds' }).click();
    await page.getByText('Type up to 5 whole percents').waitFor();
    expect(await page.getByLabel('Thresholds (%)').inputValue()).toBe('90, 50');
    await page.getByLabel('Thresholds (%)').fill('50, 90, 100');
    await page.getByLabel('Credits low at').fill('500');
    await page.getByRole('button', { name: 'Save alert thresholds' }).click();
    await page.getByText(`Saved: ${CONSUMER}'s alerts at 50, 90, 100 %`).waitFor();
    const billing = await adminCall(gateway, 'GET', `/consumers/${CONSUMER}/billing`);
    expect((billing.body as { alerts: unknown }).alerts).toEqual({
      thresholdsPercent: [50, 90, 100],
      creditsLowBalance: 500,
    });
    expect(await page.getByTestId('billing-alerts').innerText()).toContain('50 %, 90 %, 100 %');
    await shot('console-consumer-alerts');
    await checkPage(page, 'console-consumer-alerts');
  });

  it('offers no Webhooks page to a token without webhooks:read', async () => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await signIn(await token('no-hooks', ['consumers:read']));
    expect(await page.getByRole('link', { name: 'Webhooks' }).count()).toBe(0);
    await page.goto(`${consoleApp.url}/webhooks`);
    expect(await page.getByRole('heading', { name: 'Failing webhook endpoints' }).count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Add fleet-wide endpoint' }).count()).toBe(0);
    await page.getByText("your token's scopes do not cover webhooks").waitFor();
  });
});
