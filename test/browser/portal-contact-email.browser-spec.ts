import { Browser, Page } from 'playwright-core';
import {
  adminCall,
  createGatewayTestDatabase,
  GatewayTestDatabase,
  GatewayUnderTest,
  startGateway,
} from '../support/gateway';
import { createPortalToken, PortalUnderTest, startPortal } from '../support/portal';
import { SmtpSink, startSmtpSink } from '../support/smtp-sink';
import { launchChromium } from './launch-chromium';

const PASSWORD = 'correct horse battery staple';

interface AdminConsumerAnswer {
  name: string;
  email: string | null;
}

/**
 * The portal records the developer's email on their consumer (issue #37, point 3), so that an operator finds them
 * by it in the admin API and the console: at verification, and for a consumer made before (no email) on the next
 * dashboard view.
 */
describe('portal: the account’s email on its consumer', () => {
  let gateway: GatewayUnderTest;
  let database: GatewayTestDatabase;
  let smtp: SmtpSink;
  let portal: PortalUnderTest;
  let browser: Browser;
  let page: Page;
  const email = `Dev.${Date.now()}@Example.com`;

  const byEmail = async (address: string): Promise<AdminConsumerAnswer[]> => {
    const reply = await adminCall(gateway, 'GET', `/consumers?email=${encodeURIComponent(address)}`);
    expect(reply.status).toBe(200);
    return (reply.body as { items: AdminConsumerAnswer[] }).items;
  };

  beforeAll(async () => {
    gateway = await startGateway({ petsUrl: 'http://127.0.0.1:1' });
    database = await createGatewayTestDatabase();
    smtp = await startSmtpSink();
    portal = await startPortal({ gateway, token: await createPortalToken(gateway), database, smtpUrl: smtp.url });
    browser = await launchChromium();
    page = await browser.newPage();
    page.setDefaultTimeout(15_000);
  });
  afterAll(async () => {
    await browser?.close();
    await portal?.close();
    await smtp?.close();
    await database?.drop();
    await gateway?.close();
  });

  it('signs up and verifies: the consumer carries the account’s email, found by the admin API', async () => {
    await page.goto(`${portal.url}/signup`);
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.getByRole('heading', { name: 'Check your email' }).waitFor();
    const mail = await smtp.next(email.toLowerCase(), /Verify/);
    await page.goto(/https?:\/\/\S+\/verify\?token=[A-Za-z0-9_-]+/.exec(mail.text)![0]);
    // Verification asks for the sign-up's password (docs/portal.md).
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Verify my email' }).click();
    await page.getByTestId('new-key').waitFor();

    const found = await byEmail(email.toUpperCase());
    expect(found.map((c) => c.email)).toEqual([email.toLowerCase()]);
    expect(found[0].name).toMatch(/^portal-/);
  });

  it('sets the email on the next dashboard view of a consumer that has none', async () => {
    const [consumer] = await byEmail(email);
    expect((await adminCall(gateway, 'PATCH', `/consumers/${consumer.name}`, { email: null })).status).toBe(200);
    expect(await byEmail(email)).toEqual([]);

    await page.goto(`${portal.url}/dashboard`);
    await page.getByRole('heading', { level: 1 }).first().waitFor();
    const reread = await adminCall(gateway, 'GET', `/consumers/${consumer.name}`);
    expect((reread.body as AdminConsumerAnswer).email).toBe(email.toLowerCase());
  });
});
