import { ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, IncomingHttpHeaders, Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../scripts/free-port';
import { runIf } from '../support/skip';

const ROOT = join(__dirname, '../..');
const hasNginx = spawnSync('nginx', ['-v']).status === 0;

/**
 * gateway/nginx.conf as compose runs it, made to run on this machine: its upstream (the compose service `gateway`,
 * found through Docker's DNS) becomes a local port, and it listens on a free port. Every other line, the
 * proxy_set_header lines above all, is the file's own.
 */
function localNginxConf(upstreamPort: number, listenPort: number): string {
  const conf = readFileSync(join(ROOT, 'gateway/nginx.conf'), 'utf8');
  const local = conf
    .replace(/^\s*resolver .*;$/m, '')
    .replace(/server gateway:3000( resolve)?/, `server 127.0.0.1:${upstreamPort}`)
    .replace(/server portal:3003 resolve/, `server 127.0.0.1:${upstreamPort}`)
    .replace(/listen 8080;/, `listen 127.0.0.1:${listenPort};`);
  expect(local).toContain(`server 127.0.0.1:${upstreamPort}`);
  expect(local).toContain(`listen 127.0.0.1:${listenPort};`);
  return local;
}

/**
 * Issue #21 (7): the balancer must not pass the client's Host on as X-Forwarded-Host, a header that a gateway
 * trusting the balancer (TRUST_PROXY) would believe. The real gateway/nginx.conf runs in front of a server of the
 * test's own that records the headers it receives.
 */
const ifNginx = runIf(hasNginx, 'nginx on PATH');
ifNginx.describe('gateway/nginx.conf', () => {
  const dir = mkdtempSync(join(tmpdir(), 'petstore-balancer-'));
  let upstream: Server;
  let nginx: ChildProcess;
  let url: string;
  const received: IncomingHttpHeaders[] = [];

  beforeAll(async () => {
    upstream = createServer((request, response) => {
      received.push(request.headers);
      response.writeHead(200, { 'content-type': 'application/json' }).end('[]');
    });
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    const upstreamPort = (upstream.address() as { port: number }).port;
    const listenPort = await freePort();
    writeFileSync(join(dir, 'nginx.conf'), localNginxConf(upstreamPort, listenPort));
    nginx = spawn(
      'nginx',
      ['-p', dir, '-c', join(dir, 'nginx.conf'), '-g', `daemon off; pid ${dir}/nginx.pid; error_log ${dir}/error.log;`],
      { stdio: 'ignore' },
    );
    url = `http://127.0.0.1:${listenPort}`;
    const deadline = Date.now() + 10_000;
    for (;;) {
      const up = await fetch(`${url}/v1/pets`).then(
        () => true,
        () => false,
      );
      if (up) break;
      if (Date.now() > deadline)
        throw new Error(`nginx did not start: ${readFileSync(join(dir, 'error.log'), 'utf8')}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  });
  afterAll(async () => {
    if (nginx && nginx.exitCode === null) {
      const exited = new Promise((resolve) => nginx.once('exit', resolve));
      nginx.kill('SIGTERM');
      await exited;
    }
    await new Promise((resolve) => upstream?.close(resolve));
    rmSync(dir, { recursive: true, force: true });
  });

  it("passes the client's Host on as Host only, never as X-Forwarded-Host, and adds X-Forwarded-For", async () => {
    received.length = 0;
    const { request } = await import('node:http');
    const { hostname, port } = new URL(url);
    await new Promise<void>((resolve, reject) => {
      const sent = request(
        {
          host: hostname,
          port,
          path: '/v1/pets?limit=1',
          headers: { host: 'evil.example:8443', 'x-forwarded-host': 'evil.example' },
        },
        (reply) => {
          reply.resume();
          reply.on('end', resolve);
        },
      );
      sent.on('error', reject);
      sent.end();
    });
    expect(received).toHaveLength(1);
    const [headers] = received;
    expect(headers['x-forwarded-host']).toBeUndefined();
    expect(headers['x-forwarded-for']).toBe('127.0.0.1');
    expect(headers.host).toBe('evil.example');
  });

  it("sets X-Forwarded-For to the address it saw, never appending to the client's own", async () => {
    received.length = 0;
    await fetch(`${url}/v1/pets?limit=1`, { headers: { 'x-forwarded-for': '203.0.113.9, 198.51.100.1' } }).then((r) =>
      r.text(),
    );
    expect(received.map((headers) => headers['x-forwarded-for'])).toEqual(['127.0.0.1']);
  });

  it("refuses a body over 16 KiB with the gateway's JSON Error body, never nginx's page, and forwards nothing", async () => {
    received.length = 0;
    const answer = await fetch(`${url}/v1/pets`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: 'x'.repeat(16 * 1024 + 1),
    });
    expect(answer.status).toBe(413);
    expect(answer.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(await answer.json()).toEqual({
      code: 'PAYLOAD_TOO_LARGE',
      message: 'The request body exceeds the limit of 16384 bytes.',
      status: 413,
    });
    expect(received).toHaveLength(0);
  });
});
