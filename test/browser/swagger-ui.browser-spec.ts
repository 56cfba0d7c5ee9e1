import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { Browser, chromium } from 'playwright-core';
import { GatewayUnderTest, mintKey, startGateway } from '../support/gateway';
import { postJson } from '../support/http';
import { RunningPets, startPetsService } from '../support/pets-service';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const ARTIFACTS = join(__dirname, '../../artifacts');

/** A newcomer's path: open /docs, authorize with a key, "Try it out" on listPets, see 200. */
describe('Swagger UI', () => {
  let pets: RunningPets;
  let gateway: GatewayUnderTest;
  let browser: Browser;
  let key: string;

  beforeAll(async () => {
    pets = await startPetsService();
    gateway = await startGateway({ petsUrl: pets.url });
    key = await mintKey(gateway, 'free', 'browser');
    await postJson(`${gateway.url}/v1/pets`, { name: 'Browser Rex', categoryId: 1 }, { authorization: `Bearer ${key}` });
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
  });
  afterAll(async () => {
    await browser?.close();
    await gateway?.close();
    await pets?.close();
  });

  it('authorizes with an API key and runs listPets from "Try it out"', async () => {
    const page = await browser.newPage();
    const pageErrors: string[] = [];
    page.on('pageerror', (error) => pageErrors.push(error.message));
    await page.goto(`${gateway.url}/docs`);

    await page.getByRole('button', { name: /authorize/i }).first().click();
    await page.locator('.modal-ux input[type=text], .modal-ux input[type=password]').first().fill(key);
    await page.locator('.modal-ux button.modal-btn.authorize').click();
    await page.locator('.modal-ux button.btn-done').click();

    await page.locator('#operations-animals-listPets .opblock-summary').click();
    await page.locator('#operations-animals-listPets').getByRole('button', { name: /try it out/i }).click();
    await page.locator('#operations-animals-listPets').getByRole('button', { name: /execute/i }).click();

    const status = page.locator('#operations-animals-listPets .live-responses-table .response .response-col_status').first();
    await status.waitFor({ timeout: 30_000 });
    expect((await status.innerText()).trim()).toBe('200');
    const responseBody = await page.locator('#operations-animals-listPets .live-responses-table').first().innerText();
    expect(responseBody).toContain('Browser Rex');
    const curl = await page.locator('#operations-animals-listPets .curl-command').innerText();
    expect(curl).toContain('/v1/pets');
    expect(curl).toContain(`Bearer ${key}`);

    mkdirSync(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: join(ARTIFACTS, 'swagger-ui-list-pets.png'), fullPage: true });
    expect(pageErrors).toEqual([]);
  });
});
