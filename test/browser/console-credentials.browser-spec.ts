import { Browser, Page } from 'playwright-core';
import { ConsoleUnderTest, startConsole } from '../support/console';
import { adminCall, GatewayUnderTest, startGateway } from '../support/gateway';
import { checkPage } from './page-checks';
import { launchChromium } from './launch-chromium';

const ISSUER = 'https://idp.example.test/realms/machines';
const CONSUMER = 'fenced-co';

/**
 * Where a consumer's credentials may come from and its OAuth clients, on the console's consumer page (issue #50):
 * the consumer's allowed addresses (consumers:write), a key's (keys:write), binding and unbinding a client
 * (keys:write), each through the admin API and answered in the console's own words; a read-only token sees the
 * lists without a form. By accessible names, with the page checks (axe, no sideways scroll) at both widths.
 */
describe('console: allowed addresses and OAuth clients (browser)', () => {
  let gateway: GatewayUnderTest;
  let consoleApp: ConsoleUnderTest;
  let browser: Browser;
  let page: Page;
  let keyHint: string;

  const consumer = async () =>
    (await adminCall(gateway, 'GET', `/consumers/${CONSUMER}`)).body as {
      allowedAddresses: string[] | null;
      keys: Array<{ hint: string; allowedAddresses: string[] | null }>;
    };

  /** A session of its own (a browser context per sign-in), on the consumer's page. */
  async function signIn(token: string): Promise<void> {
    await page?.close();
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await page.goto(`${consoleApp.url}/sign-in`);
    await page.getByLabel('Admin token').fill(token);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
    await page.goto(`${consoleApp.url}/consumers/${CONSUMER}`);
    await page.getByRole('heading', { level: 1, name: CONSUMER }).waitFor();
  }

  async function flash(role: 'status' | 'alert'): Promise<string> {
    const message = page.getByRole(role).filter({ hasText: /./ }).first();
    await message.waitFor();
    return message.innerText();
  }

  beforeAll(async () => {
    gateway = await startGateway({
      petsUrl: 'http://127.0.0.1:1',
      env: { OAUTH_ISSUERS: JSON.stringify([{ issuer: ISSUER, audience: 'https://api.petstore.test' }]) },
    });
    consoleApp = await startConsole(gateway.adminUrl);
    const created = await adminCall(gateway, 'POST', '/consumers', { name: CONSUMER, plan: 'pro' });
    expect(created.status).toBe(201);
    keyHint = (created.body as { key: { hint: string } }).key.hint;
    browser = await launchChromium();
    await signIn(gateway.adminToken);
  });

  afterAll(async () => {
    await browser?.close();
    await consoleApp?.close();
    await gateway?.close();
  });

  it("sets the consumer's allowed addresses; refuses what is no address in its own words", async () => {
    await page.getByLabel("Consumer's allowed addresses").fill('10.1.0.0/16, 2001:DB8::/32');
    await page.getByRole('button', { name: 'Save allowed addresses', exact: true }).click();
    expect(await flash('status')).toBe(
      `Saved: ${CONSUMER}'s keys and tokens may be used only from 10.1.0.0/16, 2001:db8::/32.`,
    );
    expect((await consumer()).allowedAddresses).toEqual(['10.1.0.0/16', '2001:db8::/32']);
    await expect(page.getByTestId('consumer-addresses').innerText()).resolves.toContain(
      'only from 10.1.0.0/16, 2001:db8::/32',
    );
    await expect(page.getByLabel("Consumer's allowed addresses").inputValue()).resolves.toBe(
      '10.1.0.0/16, 2001:db8::/32',
    );

    await page.getByLabel("Consumer's allowed addresses").fill('10.1');
    await page.getByRole('button', { name: 'Save allowed addresses', exact: true }).click();
    const refusal = await flash('alert');
    expect(refusal).toMatch(/^These addresses were not accepted: type IPv4 or IPv6 addresses or CIDR ranges/);
    expect(refusal).not.toMatch(/allowedAddresses must|VALIDATION_FAILED/);
    expect((await consumer()).allowedAddresses).toEqual(['10.1.0.0/16', '2001:db8::/32']);
  });

  it("sets a key's own addresses (an IPv4-mapped range as the IPv4 one)", async () => {
    const field = page.getByLabel(`Allowed addresses of key ${keyHint}`, { exact: true });
    await field.fill('::ffff:10.1.5.0/120');
    await page.getByRole('button', { name: `Save allowed addresses of key ${keyHint}` }).click();
    expect(await flash('status')).toBe(`Saved: key ${keyHint} may be used only from 10.1.5.0/24.`);
    expect((await consumer()).keys[0].allowedAddresses).toEqual(['10.1.5.0/24']);
    await expect(page.getByLabel(`Allowed addresses of key ${keyHint}`, { exact: true }).inputValue()).resolves.toBe(
      '10.1.5.0/24',
    );
  });

  it('binds a client of a configured issuer, lists it, refuses a second binding and an unknown issuer', async () => {
    await expect(page.getByRole('table', { name: 'OAuth clients' }).innerText()).resolves.toContain(
      'No client is bound to this consumer.',
    );
    await page.getByLabel('Issuer').fill(ISSUER);
    await page.getByLabel('Client id').fill('billing-service');
    await page.getByRole('button', { name: 'Bind client', exact: true }).click();
    expect(await flash('status')).toBe(
      `Bound: client billing-service of ${ISSUER} now calls the API as ${CONSUMER}, on its limits.`,
    );
    const clients = page.getByRole('table', { name: 'OAuth clients' });
    await expect(clients.getByRole('rowheader', { name: 'billing-service' }).isVisible()).resolves.toBe(true);
    await expect(clients.getByRole('cell', { name: 'anywhere the consumer allows' }).isVisible()).resolves.toBe(true);
    await checkPage(page, 'console-consumer-credentials');

    await page.getByLabel('Issuer').fill(ISSUER);
    await page.getByLabel('Client id').fill('billing-service');
    await page.getByRole('button', { name: 'Bind client', exact: true }).click();
    expect(await flash('alert')).toBe('This client is bound to a consumer already: unbind it there first.');

    await page.getByLabel('Issuer').fill('https://elsewhere.example.test');
    await page.getByLabel('Client id').fill('other-service');
    await page.getByRole('button', { name: 'Bind client', exact: true }).click();
    expect(await flash('alert')).toMatch(/^This client was not bound: the issuer must be one of the gateway's/);
    await expect(clients.getByRole('row').count()).resolves.toBe(2); // the header and the one binding
  });

  it('shows the lists without a form to a token that may only read', async () => {
    const reply = await adminCall(gateway, 'POST', '/tokens', { name: 'support-desk', scopes: ['consumers:read'] });
    expect(reply.status).toBe(201);
    await signIn((reply.body as { token: string }).token);
    await expect(page.getByTestId('consumer-addresses').innerText()).resolves.toContain('only from 10.1.0.0/16');
    await expect(page.getByRole('table', { name: 'Allowed addresses of each key' }).innerText()).resolves.toContain(
      '10.1.5.0/24',
    );
    await expect(
      page
        .getByRole('table', { name: 'OAuth clients' })
        .getByRole('rowheader', { name: 'billing-service' })
        .isVisible(),
    ).resolves.toBe(true);
    for (const name of ['Save allowed addresses', 'Bind client', 'Unbind client billing-service'])
      await expect(page.getByRole('button', { name, exact: true }).count()).resolves.toBe(0);
    await expect(page.getByRole('textbox').count()).resolves.toBe(0);
    await checkPage(page, 'console-consumer-credentials-read-only');
  });

  it("unbinds the client (its row is gone) and lifts the key's own addresses", async () => {
    await signIn(gateway.adminToken);
    await page.getByLabel(`Allowed addresses of key ${keyHint}`, { exact: true }).fill('');
    await page.getByRole('button', { name: `Save allowed addresses of key ${keyHint}` }).click();
    expect(await flash('status')).toBe(`Saved: key ${keyHint} may be used anywhere ${CONSUMER} allows.`);
    expect((await consumer()).keys[0].allowedAddresses).toBeNull();

    await page.getByRole('button', { name: 'Unbind client billing-service' }).click();
    expect(await flash('status')).toBe(
      `Unbound: client billing-service of ${ISSUER}; its tokens are refused from now on.`,
    );
    await expect(page.getByRole('table', { name: 'OAuth clients' }).innerText()).resolves.toContain(
      'No client is bound to this consumer.',
    );
    expect(((await adminCall(gateway, 'GET', `/consumers/${CONSUMER}/client-bindings`)).body as unknown[]).length).toBe(
      0,
    );
  });
});
