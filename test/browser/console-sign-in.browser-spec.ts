import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { Browser, Page } from 'playwright-core';
import { ConsoleUnderTest, startConsole } from '../support/console';
import { GatewayUnderTest, startGateway } from '../support/gateway';
import { ARTIFACTS, launchChromium } from './launch-chromium';

/** The console's sign-in slowed after refused tokens (issue #36 finding 6), as an operator sees it. */
describe('console sign-in throttle in the browser', () => {
  let gateway: GatewayUnderTest;
  let console_: ConsoleUnderTest;
  let browser: Browser;
  let page: Page;
  const shot = (name: string) => page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });

  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    gateway = await startGateway({ petsUrl: 'http://127.0.0.1:1' });
    console_ = await startConsole(gateway.adminUrl);
    browser = await launchChromium();
    page = await (await browser.newContext()).newPage();
    page.setDefaultTimeout(10_000);
  }, 300_000); // a gateway, a console and Chromium: slow on a loaded 2-core runner
  afterAll(async () => {
    await browser?.close();
    await console_?.close();
    await gateway?.close();
  });

  it('slows console sign-in after refused tokens, saying how long to wait', async () => {
    for (let i = 0; i < 4; i += 1) {
      await page.goto(`${console_.url}/sign-in`);
      await page.getByLabel('Admin token').fill(`adm_wrong-${i}`);
      await page.getByRole('button', { name: 'Sign in' }).click();
    }
    await page.getByText(/Too many refused tokens from your address\. Wait \d+ seconds? and try again\./).waitFor();
    await shot('console-sign-in-slowed');
  });
});
