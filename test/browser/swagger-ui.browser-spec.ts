import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { Browser } from 'playwright-core';
import { GatewayUnderTest, mintKey, startGateway } from '../support/gateway';
import { postJson } from '../support/http';
import { RunningPets, startPetsService } from '../support/pets-service';
import { ARTIFACTS, launchChromium } from './launch-chromium';

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
    await postJson(
      `${gateway.url}/v1/pets`,
      { name: 'Browser Rex', categoryId: 1 },
      { authorization: `Bearer ${key}` },
    );
    browser = await launchChromium();
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

    await page
      .getByRole('button', { name: /authorize/i })
      .first()
      .click();
    await page.locator('.modal-ux input[type=text], .modal-ux input[type=password]').first().fill(key);
    await page.locator('.modal-ux button.modal-btn.authorize').click();
    await page.locator('.modal-ux button.btn-done').click();

    await page.locator('#operations-animals-listPets .opblock-summary').click();
    await page
      .locator('#operations-animals-listPets')
      .getByRole('button', { name: /try it out/i })
      .click();
    await page
      .locator('#operations-animals-listPets')
      .getByRole('button', { name: /execute/i })
      .click();

    const status = page
      .locator('#operations-animals-listPets .live-responses-table .response .response-col_status')
      .first();
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

  it('shows each error status with its own example and the rate-limit headers, on an operation a few screens long', async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await page.goto(`${gateway.url}/docs`);
    const operation = page.locator('#operations-animals-createPet');
    await operation.locator('.opblock-summary').click();
    const row = (status: number) => operation.locator(`tr.response[data-code="${status}"]`);
    await row(201).waitFor();

    const expected: Array<[number, string]> = [
      [400, 'VALIDATION_FAILED'],
      [401, 'UNAUTHORIZED'],
      [408, 'REQUEST_TIMEOUT'],
      [413, 'PAYLOAD_TOO_LARGE'],
      [415, 'UNSUPPORTED_MEDIA_TYPE'],
      [429, 'RATE_LIMITED'],
      [431, 'HEADERS_TOO_LARGE'],
      [500, 'INTERNAL_ERROR'],
      [502, 'BAD_GATEWAY'],
      [503, 'SERVICE_UNAVAILABLE'],
      [504, 'GATEWAY_TIMEOUT'],
    ];
    for (const [status, code] of expected) {
      const shown = await row(status).locator('.response-col_description').innerText();
      expect(shown).toContain(`"code": "${code}"`);
      expect(shown).toContain(`"status": ${status}`);
    }
    // The rate-limit headers are in the success answer's header table, marked as always sent.
    const success = await row(201).locator('.response-col_description').innerText();
    for (const header of ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset'])
      expect(success).toContain(header);

    mkdirSync(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: join(ARTIFACTS, 'swagger-ui-create-pet.png'), fullPage: true });
    // Shared header components, three rate-limit rows per error: each error answer stays under 500 px
    // (with the six header rows repeated inline they took 520 to 600 px, the operation 6,600 px).
    const heights = await Promise.all(expected.map(async ([status]) => (await row(status).boundingBox())!.height));
    console.log(
      `createPet expanded: ${Math.round((await operation.boundingBox())!.height)} px; error rows: ${heights.map(Math.round).join(', ')} px`,
    );
    // The 429 answer says more (Retry-After, and which policy refused it: RateLimit, RateLimit-Policy): under 700 px.
    expected.forEach(([status], i) => expect(heights[i]).toBeLessThan(status === 429 ? 700 : 500));
  });
});
