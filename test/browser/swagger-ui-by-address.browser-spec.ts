import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { Browser, Page } from 'playwright-core';
import { GatewayUnderTest, startGateway } from '../support/gateway';
import { RunningPets, startPetsService } from '../support/pets-service';
import { ARTIFACTS, launchChromium } from './launch-chromium';

/** A second loopback address, and a name for it that is not `localhost`: browsers exempt localhost from upgrades. */
const ADDRESS = '127.0.0.2';
const HOST_NAME = 'petstore.test';

/**
 * Swagger UI opened the way a colleague opens it: by a name over plain HTTP, not on localhost. A CSP with
 * `upgrade-insecure-requests` made the browser fetch its stylesheet and scripts over https, which the apps do not
 * speak: a blank page (#22).
 */
describe('Swagger UI opened by a host name over plain HTTP', () => {
  let pets: RunningPets;
  let gateway: GatewayUnderTest;
  let browser: Browser;

  beforeAll(async () => {
    pets = await startPetsService();
    // The name it is opened by is one of its allowed hosts (a name it is not configured for gets 400).
    gateway = await startGateway({
      petsUrl: pets.url,
      host: ADDRESS,
      env: { ALLOWED_HOSTS: HOST_NAME, ADMIN_ALLOWED_HOSTS: HOST_NAME },
    });
    browser = await launchChromium([`--host-resolver-rules=MAP ${HOST_NAME} ${ADDRESS}`]);
  });
  afterAll(async () => {
    await browser?.close();
    await gateway?.close();
    await pets?.close();
  });

  /** Opens `url`'s /docs by the host name; returns the page and every request that failed or left plain HTTP. */
  async function openDocs(url: string): Promise<{ page: Page; failed: string[]; notPlainHttp: string[] }> {
    const port = new URL(url).port;
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const failed: string[] = [];
    const notPlainHttp: string[] = [];
    page.on('requestfailed', (request) => failed.push(`${request.url()}: ${request.failure()?.errorText}`));
    page.on('request', (request) => {
      if (!request.url().startsWith(`http://${HOST_NAME}:${port}/`)) notPlainHttp.push(request.url());
    });
    await page.goto(`http://${HOST_NAME}:${port}/docs`);
    return { page, failed, notPlainHttp };
  }

  it("renders the public API's operations", async () => {
    const { page, failed, notPlainHttp } = await openDocs(gateway.url);
    await page
      .getByRole('heading', { name: /Pet adoption store: animals API/ })
      .waitFor({ timeout: 10_000 })
      .catch(() => undefined);
    mkdirSync(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: join(ARTIFACTS, 'swagger-ui-by-address-gateway.png'), fullPage: true });

    expect(failed).toEqual([]);
    expect(notPlainHttp).toEqual([]);
    await expect(page.getByRole('heading', { name: /Pet adoption store: animals API/ }).isVisible()).resolves.toBe(
      true,
    );
    // listPets' summary button: method, path under the server's /v1, summary.
    await expect(
      page.getByRole('button', { name: 'GET /pets List all animals', exact: true }).isVisible(),
    ).resolves.toBe(true);
  });

  it("renders the admin API's operations", async () => {
    const { page, failed, notPlainHttp } = await openDocs(gateway.adminUrl);
    await page
      .getByRole('heading', { name: /gateway admin API/ })
      .waitFor({ timeout: 10_000 })
      .catch(() => undefined);
    mkdirSync(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: join(ARTIFACTS, 'swagger-ui-by-address-admin.png'), fullPage: true });

    expect(failed).toEqual([]);
    expect(notPlainHttp).toEqual([]);
    await expect(
      page.getByRole('heading', { name: /Pet adoption store: gateway admin API/ }).isVisible(),
    ).resolves.toBe(true);
    // Each operation with its summary.
    await expect(
      page.getByRole('button', { name: 'GET /consumers List consumers, a page at a time', exact: true }).isVisible(),
    ).resolves.toBe(true);
    await expect(
      page
        .getByRole('button', { name: 'POST /consumers Create a consumer and its first key', exact: true })
        .isVisible(),
    ).resolves.toBe(true);
  });
});
