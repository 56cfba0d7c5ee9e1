import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { mintKey } from '../support/gateway';
import { openSocket, readReply } from '../support/raw-http';
import { buildAppsIfMissing, freeStackPorts, hasNginx } from '../support/stack';
import { runIf } from '../support/skip';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const { startStack } = require('../../scripts/stack.js') as {
  startStack(options: object): Promise<{
    url: string;
    gateways: Array<{
      port: number;
      metricsPort: number;
      adminPort: number;
      process: import('node:child_process').ChildProcess;
    }>;
    admin: { adminUrl: string; adminToken: string };
    dir: string;
    stop(): Promise<void>;
  }>;
};

async function requestsServed(metricsPort: number): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
  return [...text.matchAll(/^http_requests_total\{method="GET",route="\/v1\/pets",[^}]*\} (\d+)/gm)].reduce(
    (sum, m) => sum + Number(m[1]),
    0,
  );
}

/**
 * The balanced topology of docker-compose, without Docker (`npm run stack`): nginx in front of two gateway
 * instances sharing Redis. Needs nginx and Redis: CI installs nginx and runs this file in its Redis pass.
 */
const ifNginxAndRedis = runIf(hasNginx && process.env.REDIS_URL, 'nginx on PATH and REDIS_URL (a Redis server)');
ifNginxAndRedis.describe('the stack behind nginx', () => {
  let stack: Awaited<ReturnType<typeof startStack>>;
  let freeKey: string;
  let businessKey: string;
  let dir: string;

  beforeAll(async () => {
    buildAppsIfMissing();
    dir = mkdtempSync(join(tmpdir(), 'petstore-stack-'));
    const ports = await freeStackPorts(2);
    stack = await startStack({
      env: {
        ...ports.env,
        GATEWAY_INSTANCES: '2',
        STACK_DIR: dir,
        REDIS_KEY_PREFIX: `${process.env.REDIS_KEY_PREFIX ?? 'test:'}stack-${Date.now()}:`,
      },
    });
    // Unique names: with DATABASE_URL set, the stack's consumers live in that (long-lived) database.
    const run = Date.now().toString(36);
    freeKey = await mintKey(stack.admin, 'free', `stack-free-${run}`);
    businessKey = await mintKey(stack.admin, 'business', `stack-business-${run}`);
  }, 120_000);
  afterAll(async () => {
    await stack?.stop();
  }, 60_000);

  it('never routes the admin API through nginx: not by path, not in the upstreams', async () => {
    const auth = { authorization: `Bearer ${stack.admin.adminToken}` };
    expect((await fetch(`${stack.admin.adminUrl}/consumers?limit=1`, { headers: auth })).status).toBe(200);
    for (const path of ['/consumers', '/consumers/demo', '/export', '/import']) {
      const reply = await fetch(`${stack.url}${path}`, { headers: auth });
      expect(reply.status).toBe(404);
      // The public gateway's own "no such route", never an admin answer (no consumer data, no plan).
      const body = (await reply.json()) as Record<string, unknown>;
      expect(Object.keys(body).sort()).toEqual(['code', 'message', 'status']);
      expect(body.code).toBe('NOT_FOUND');
    }
    const docs = (await (await fetch(`${stack.url}/docs-json`)).json()) as { info: { title: string } };
    expect(docs.info.title).not.toMatch(/admin/i);
    const conf = readFileSync(join(stack.dir, 'nginx.conf'), 'utf8');
    for (const gateway of stack.gateways) expect(conf).not.toContain(`:${gateway.adminPort}`);
  });

  it('publishes the developer portal at /portal/ beside /v1, never its health route', async () => {
    const login = await fetch(`${stack.url}/portal/login`);
    expect(login.status).toBe(200);
    expect(await login.text()).toContain('action="/portal/login"');
    expect((await fetch(`${stack.url}/portal/health/ready`)).status).toBe(404);
    expect((await fetch(`${stack.url}/portal`, { redirect: 'manual' })).headers.get('location')).toMatch(/\/portal\/$/);
  });

  it('spreads requests over both gateway instances', async () => {
    for (let i = 0; i < 20; i += 1) {
      const reply = await fetch(`${stack.url}/v1/pets?limit=1`, {
        headers: { authorization: `Bearer ${businessKey}` },
      });
      expect(reply.status).toBe(200);
    }
    const served = await Promise.all(stack.gateways.map((g) => requestsServed(g.metricsPort)));
    for (const count of served) expect(count).toBeGreaterThan(0);
    expect(served.reduce((a, b) => a + b, 0)).toBe(20);
  });

  it('holds a Free key to 60 requests a minute across the instances', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 70; i += 1) {
      statuses.push(
        (await fetch(`${stack.url}/v1/pets?limit=1`, { headers: { authorization: `Bearer ${freeKey}` } })).status,
      );
    }
    expect(statuses.filter((s) => s === 200)).toHaveLength(60);
    expect(statuses.slice(60)).toEqual(Array(10).fill(429));
  });

  it("links the next page under the balancer's origin, and the link works through it", async () => {
    const auth = { authorization: `Bearer ${businessKey}`, 'content-type': 'application/json' };
    for (let i = 0; i < 3; i += 1) {
      await fetch(`${stack.url}/v1/pets`, {
        method: 'POST',
        headers: auth,
        body: JSON.stringify({ name: `Stack ${i}`, categoryId: 1 }),
      });
    }
    const first = await fetch(`${stack.url}/v1/pets?limit=1`, { headers: auth });
    const next = /^<([^>]+)>; rel="next"$/.exec(first.headers.get('link') ?? '')?.[1];
    expect(next).toMatch(new RegExp(`^${stack.url}/v1/pets\\?limit=1&after=[A-Za-z0-9_-]+$`));
    const second = await fetch(next!, { headers: auth });
    expect(second.status).toBe(200);
    expect(((await second.json()) as Array<{ id: number }>)[0].id).toBeGreaterThan(
      ((await first.json()) as Array<{ id: number }>)[0].id,
    );
  });

  it('answers every POST sent on upstream connections left idle for longer than 5 s (keep-alive race)', async () => {
    // Node's default keep-alive (5 s) is shorter than nginx's upstream idle timeout (60 s): nginx then reuses a
    // connection the gateway is closing, and a POST, which nginx does not retry, fails with 502. The gateways
    // keep idle connections for KEEP_ALIVE_TIMEOUT_MS (75 s), above nginx's 60 s, so nginx always closes first.
    const statuses: number[] = [];
    const burst = async (size: number) => {
      const replies = await Promise.all(
        Array.from({ length: size }, (_, i) =>
          fetch(`${stack.url}/v1/pets`, {
            method: 'POST',
            headers: { authorization: `Bearer ${businessKey}`, 'content-type': 'application/json' },
            body: JSON.stringify({ name: `Idle ${i}`, categoryId: 1 }),
          }).then(
            (r) => r.status,
            () => -1,
          ),
        ),
      );
      statuses.push(...replies);
    };
    await burst(16);
    // Straddle the old 5 s timeout, then go past it: the race sits right at the gateway's idle timeout.
    for (const idleMs of [5000, 5010, 6000]) {
      await new Promise((resolve) => setTimeout(resolve, idleMs));
      await burst(16);
    }
    expect(statuses).toHaveLength(16 * 4);
    expect(statuses.filter((s) => s !== 201)).toEqual([]);
  }, 90_000);

  it('has each gateway keep an idle connection open longer than nginx does', async () => {
    const nginxIdleSeconds = Number(
      /keepalive_timeout (\d+)s;/.exec(readFileSync(join(dir, 'nginx.conf'), 'utf8'))![1],
    );
    const gateway = `http://127.0.0.1:${stack.gateways[1].port}`;
    const socket = await openSocket(gateway);
    const request = `GET /v1/pets?limit=1 HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${businessKey}\r\n\r\n`;
    let reply = readReply(socket);
    socket.write(request);
    const first = await reply;
    expect(first.status).toBe(200);
    // Node announces its idle timeout: it must outlast the balancer's, or the balancer reuses a closing connection.
    const gatewayIdleSeconds = Number(/timeout=(\d+)/.exec(first.headers['keep-alive'] ?? '')?.[1]);
    expect(gatewayIdleSeconds).toBeGreaterThan(nginxIdleSeconds);
    await new Promise((resolve) => setTimeout(resolve, 6000));
    reply = readReply(socket);
    socket.write(request);
    expect((await reply).status).toBe(200);
    socket.destroy();
  }, 30_000);

  it('loses no request when one gateway instance stops', async () => {
    const results: number[] = [];
    let sent = 0;
    const worker = async () => {
      while (sent < 300) {
        sent += 1;
        const status = await fetch(`${stack.url}/v1/pets?limit=1`, {
          headers: { authorization: `Bearer ${businessKey}` },
        }).then(
          (r) => r.status,
          () => -1,
        );
        results.push(status);
      }
    };
    const workers = Array.from({ length: 8 }, worker);
    await new Promise((resolve) => setTimeout(resolve, 150));
    const first = stack.gateways[0].process;
    const exited = new Promise((resolve) => first.once('exit', resolve));
    first.kill('SIGTERM');
    await Promise.all(workers);
    await exited;
    expect(results).toHaveLength(300);
    expect(results.filter((s) => s !== 200)).toEqual([]);
  });
});
