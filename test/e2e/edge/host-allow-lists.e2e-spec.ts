import { request } from 'node:http';
import { loadConsoleConfig } from '../../../apps/console/src/config/console.config';
import { loadGatewayConfig } from '../../../apps/gateway/src/config/gateway.config';
import { loadPetsConfig } from '../../../apps/pets/src/config/pets.config';
import { loadPortalConfig } from '../../../apps/portal/src/config/portal.config';
import { startConsole, ConsoleUnderTest } from '../../support/console';
import { RunningPets, startPetsService } from '../../support/pets-service';
import { PortalStack, startPortalStack } from '../../support/portal';

interface Reply {
  status: number;
  type: string;
  body: string;
}

/** GET `path` from the server at `url`, with `host` as the Host header (fetch may not set it). */
function get(url: string, path: string, host: string): Promise<Reply> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const sent = request({ hostname, port, path, headers: { host } }, (reply) => {
      let body = '';
      reply.setEncoding('utf8');
      reply.on('data', (chunk: string) => (body += chunk));
      reply.on('end', () =>
        resolve({ status: reply.statusCode ?? 0, type: reply.headers['content-type'] ?? '', body }),
      );
    });
    sent.on('error', reject);
    sent.end();
  });
}

/** A request line in absolute form (`GET http://name/path`), which names its host in place of Host. */
function getAbsolute(url: string, target: string, host: string): Promise<Reply> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const sent = request({ hostname, port, path: target, headers: { host } }, (reply) => {
      reply.resume();
      reply.on('end', () =>
        resolve({ status: reply.statusCode ?? 0, type: reply.headers['content-type'] ?? '', body: '' }),
      );
    });
    sent.on('error', reject);
    sent.end();
  });
}

/** Names a DNS-rebinding page would send: the attacker's own, re-pointed at this server. */
const FOREIGN = ['rebind.attacker.example', 'rebind.attacker.example:8080', '10.0.0.5', '0.0.0.0'];

function expectErrorBody(reply: Reply): void {
  expect(reply.status).toBe(400);
  expect(reply.type).toMatch(/^application\/json/);
  expect(JSON.parse(reply.body)).toEqual({
    code: 'MALFORMED_REQUEST',
    message: 'This server does not answer for that host name.',
    status: 400,
  });
}

function expectPlainPage(reply: Reply): void {
  expect(reply.status).toBe(400);
  expect(reply.type).toMatch(/^text\/html/);
  expect(reply.body).toContain('<h1>Unknown host</h1>');
}

/**
 * Each app answers only its configured host names (and loopback ones): any other Host, the name of a page an
 * attacker re-pointed at the server by DNS (rebinding), is refused before the app, its health and docs included.
 */
describe('host allow-lists: each app answers only its own host names', () => {
  let stack: PortalStack;
  let pets: RunningPets;
  let console_: ConsoleUnderTest;

  beforeAll(async () => {
    stack = await startPortalStack({
      gatewayEnv: { ALLOWED_HOSTS: 'api.petstore.test,*.api.petstore.test', ADMIN_ALLOWED_HOSTS: 'gateway' },
      portalEnv: { PORTAL_ALLOWED_HOSTS: 'portal', PORTAL_PUBLIC_URL: 'https://developers.petstore.test' },
    });
    pets = await startPetsService({ allowedHosts: ['pets'] });
    console_ = await startConsole(stack.gateway.adminUrl, { CONSOLE_ALLOWED_HOSTS: 'console.petstore.test' });
  }, 180_000); // several servers to start: slow on a loaded 2-core runner
  afterAll(async () => {
    await console_?.close();
    await pets?.close();
    await stack?.close();
  });

  it('gateway public port: the configured names and their subdomains, loopback names; others get the Error body', async () => {
    const url = stack.gateway.url;
    const port = new URL(url).port;
    for (const host of [
      'api.petstore.test',
      `API.petstore.test:${port}`,
      'eu.api.petstore.test',
      `127.0.0.1:${port}`,
      'localhost',
    ])
      expect([host, (await get(url, '/docs-json', host)).status]).toEqual([host, 200]);
    for (const host of [...FOREIGN, 'petstore.test', 'api.petstore.test.attacker.example']) {
      for (const path of ['/docs-json', '/health/ready', '/v1/pets']) expectErrorBody(await get(url, path, host));
    }
    // A request line in absolute form names its host in place of Host: that name is checked too.
    expect((await getAbsolute(url, 'http://rebind.attacker.example/docs-json', 'api.petstore.test')).status).toBe(400);
    expect((await getAbsolute(url, 'http://api.petstore.test/docs-json', 'api.petstore.test')).status).toBe(200);
  });

  it('gateway admin API: its own name on the private network and loopback names, nothing else', async () => {
    const url = stack.gateway.adminUrl;
    for (const host of ['gateway:3002', `127.0.0.1:${new URL(url).port}`, '[::1]:3002'])
      expect([host, (await get(url, '/docs-json', host)).status]).toEqual([host, 200]);
    // The public port's names are not the admin API's.
    for (const host of [...FOREIGN, 'api.petstore.test']) expectErrorBody(await get(url, '/docs-json', host));
  });

  it('pets service: the name the gateways reach it by and loopback names', async () => {
    for (const host of ['pets:3001', 'localhost:3001'])
      expect((await get(pets.url, '/health/live', host)).status).toBe(200);
    for (const host of FOREIGN) expectErrorBody(await get(pets.url, '/health/live', host));
  });

  it("developer portal: PORTAL_ALLOWED_HOSTS, PORTAL_PUBLIC_URL's host and loopback names; others get a plain page", async () => {
    const url = stack.portal.url;
    for (const host of ['portal:3003', 'developers.petstore.test', `127.0.0.1:${new URL(url).port}`])
      expect([host, (await get(url, '/login', host)).status]).toEqual([host, 200]);
    for (const host of FOREIGN) {
      for (const path of ['/login', '/health/ready']) expectPlainPage(await get(url, path, host));
    }
  });

  it('operator console: CONSOLE_ALLOWED_HOSTS and loopback names; others get a plain page', async () => {
    const url = console_.url;
    for (const host of ['console.petstore.test', `localhost:${new URL(url).port}`])
      expect([host, (await get(url, '/sign-in', host)).status]).toEqual([host, 200]);
    for (const host of FOREIGN) {
      for (const path of ['/sign-in', '/health/ready']) expectPlainPage(await get(url, path, host));
    }
  });

  it('reads each list once at start-up, and stops an app on a wrong entry with one line naming the variable', () => {
    const portal = { NODE_ENV: 'test', PORTAL_ADMIN_TOKEN: 'adm_0123456789abcdef0123456789abcdef0123456789a' };
    const loads: Array<[string, (value: string) => { allowedHosts?: readonly string[] }]> = [
      ['ALLOWED_HOSTS', (value) => loadGatewayConfig({ ALLOWED_HOSTS: value })],
      ['ADMIN_ALLOWED_HOSTS', (value) => loadGatewayConfig({ ADMIN_ALLOWED_HOSTS: value }).admin],
      ['PETS_ALLOWED_HOSTS', (value) => loadPetsConfig({ PETS_ALLOWED_HOSTS: value })],
      ['PORTAL_ALLOWED_HOSTS', (value) => loadPortalConfig({ ...portal, PORTAL_ALLOWED_HOSTS: value })],
      [
        'CONSOLE_ALLOWED_HOSTS',
        (value) => loadConsoleConfig({ CONSOLE_SESSION_SECRET: 'x'.repeat(32), CONSOLE_ALLOWED_HOSTS: value }),
      ],
    ];
    for (const [name, load] of loads) {
      expect(load('Api.Example.com, *.example.org').allowedHosts).toEqual(
        expect.arrayContaining(['api.example.com', '*.example.org']),
      );
      expect(() => load('https://api.example.com')).toThrow(
        `${name} must be a comma-separated list of host names (api.example.com, *.example.com) or IP addresses, without scheme, port or path: "https://api.example.com" is not one`,
      );
    }
    // The public address an app already knows is one of its names.
    expect(loadGatewayConfig({ PUBLIC_ORIGIN: 'https://api.example.net' }).allowedHosts).toEqual(['api.example.net']);
    expect(loadPortalConfig({ ...portal, PORTAL_PUBLIC_URL: 'https://dev.example.net' }).allowedHosts).toEqual([
      'dev.example.net',
    ]);
  });
});
