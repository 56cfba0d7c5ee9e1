import { ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Browser } from 'playwright-core';
import { freePort } from '../../scripts/free-port';
import { createGatewayTestDatabase, GatewayTestDatabase, GatewayUnderTest, startGateway } from '../support/gateway';
import { RunningPets, startPetsService } from '../support/pets-service';
import { createPortalToken, PortalUnderTest, startPortal } from '../support/portal';
import { SmtpSink, startSmtpSink } from '../support/smtp-sink';
import { runIf } from '../support/skip';
import { launchChromium } from './launch-chromium';

const ROOT = join(__dirname, '../..');
const ARTIFACTS = join(ROOT, 'artifacts');
const hasNginx = spawnSync('nginx', ['-v']).status === 0;

/**
 * gateway/nginx.conf as compose runs it, on this machine: the gateway upstream is a local gateway, the portal upstream
 * two local portal instances (PORTAL_BASE_PATH=/portal), one database for both. Every other line is the file's own.
 */
const ifNginx = runIf(hasNginx, 'nginx on PATH');
ifNginx.describe('developer portal behind nginx at /portal/, two instances', () => {
  const dir = mkdtempSync(join(tmpdir(), 'petstore-portal-nginx-'));
  let pets: RunningPets;
  let gateway: GatewayUnderTest;
  let database: GatewayTestDatabase;
  let smtp: SmtpSink;
  const portals: PortalUnderTest[] = [];
  let nginx: ChildProcess;
  let url: string;
  let browser: Browser;

  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    pets = await startPetsService();
    gateway = await startGateway({ petsUrl: pets.url });
    database = await createGatewayTestDatabase();
    smtp = await startSmtpSink();
    const listenPort = await freePort();
    url = `http://127.0.0.1:${listenPort}`;
    const token = await createPortalToken(gateway);
    const env = { PORTAL_BASE_PATH: '/portal', PORTAL_PUBLIC_URL: url, PORTAL_API_URL: `${url}/v1` };
    for (let i = 0; i < 2; i += 1)
      portals.push(await startPortal({ gateway, token, database, smtpUrl: smtp.url, env }));
    for (const portal of portals) portal.config.publicUrl = url;
    const gatewayPort = new URL(gateway.url).port;
    const conf = readFileSync(join(ROOT, 'gateway/nginx.conf'), 'utf8')
      .replace(/^\s*resolver .*;$/m, '')
      .replace(/server gateway:3000( resolve)?/, `server 127.0.0.1:${gatewayPort}`)
      .replace(
        /server portal:3003 resolve[^;]*;/,
        portals.map((p) => `server 127.0.0.1:${new URL(p.url).port};`).join('\n    '),
      )
      .replace(/listen 8080;/, `listen 127.0.0.1:${listenPort};`);
    expect(conf).toContain(`server 127.0.0.1:${new URL(portals[1].url).port};`);
    writeFileSync(join(dir, 'nginx.conf'), conf);
    nginx = spawn(
      'nginx',
      ['-p', dir, '-c', join(dir, 'nginx.conf'), '-g', `daemon off; pid ${dir}/nginx.pid; error_log ${dir}/error.log;`],
      { stdio: 'ignore' },
    );
    const deadline = Date.now() + 10_000;
    while (
      !(await fetch(`${url}/portal/login`).then(
        (r) => r.ok,
        () => false,
      ))
    ) {
      if (Date.now() > deadline)
        throw new Error(`nginx did not start: ${readFileSync(join(dir, 'error.log'), 'utf8')}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    if (nginx && nginx.exitCode === null) {
      const exited = new Promise((resolve) => nginx.once('exit', resolve));
      nginx.kill('SIGTERM');
      await exited;
    }
    for (const portal of portals) await portal.close().catch(() => undefined);
    await smtp?.close();
    await database?.drop();
    await gateway?.close();
    await pets?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('signs up and works through /portal/, links and cookies carry the prefix, and either instance serves the session', async () => {
    const page = await browser.newPage();
    page.setDefaultTimeout(10_000);
    const email = `nginx-${Date.now()}@example.com`;
    await page.goto(`${url}/portal`);
    expect(new URL(page.url()).pathname).toBe('/portal/');
    await page.getByRole('link', { name: 'Create an account' }).first().click();
    expect(new URL(page.url()).pathname).toBe('/portal/signup');
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill('a long enough passphrase');
    await page.getByRole('button', { name: 'Create account' }).click();
    const mail = await smtp.next(email, /Verify/);
    const link = /https?:\/\/\S+\/verify\?token=[A-Za-z0-9_-]+/.exec(mail.text)![0];
    expect(link.startsWith(`${url}/portal/verify?token=`)).toBe(true);
    await page.goto(link);
    await page.getByLabel('Password').fill('a long enough passphrase');
    await page.getByRole('button', { name: 'Verify my email' }).click();
    await page.getByTestId('new-key').waitFor();
    const cookie = (await page.context().cookies()).find((c) => c.name === 'portal.sid')!;
    expect(cookie.path).toBe('/portal');
    // Round robin: several pages in a row, each instance serves some; every one sees the session.
    for (let i = 0; i < 4; i += 1) {
      await page.goto(`${url}/portal/dashboard`);
      await page.getByRole('heading', { name: 'Your dashboard' }).waitFor();
      await page.getByRole('button', { name: 'Create key' }).click();
      await page.getByTestId('new-key').waitFor();
    }
    // One instance gone: the other still knows the session (it lives in PostgreSQL, not in either process).
    await portals[0].close();
    await page.goto(`${url}/portal/dashboard`);
    await page.getByRole('heading', { name: 'Your dashboard' }).waitFor();
    expect(await page.locator('main').innerText()).toContain(email);
    await page.screenshot({ path: join(ARTIFACTS, 'portal-behind-nginx.png'), fullPage: true });
    // The reference page calls /v1 on the same origin: no CORS needed.
    await page.goto(`${url}/portal/reference`);
    await page.getByText('Authorised with your key').waitFor();
    await page.close();
  });
});
