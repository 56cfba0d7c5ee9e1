import { ChildProcess } from 'node:child_process';
import { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { freePort } from '../../scripts/free-port';
import { spawnBuiltGateway, waitUntilLive } from '../support/built-gateway';
import { createGatewayTestDatabase, GatewayTestDatabase, mintKey } from '../support/gateway';

/** The built gateway as a real process, sent SIGTERM while requests are in flight. */
describe('graceful shutdown', () => {
  let upstream: Server;
  let gateway: ChildProcess;
  let port: number;
  let key: string;
  let arrived = 0;
  let database: GatewayTestDatabase;

  beforeAll(async () => {
    // A pets service that takes 400 ms per answer, so that requests are surely in flight at SIGTERM.
    upstream = createServer((_req, res) => {
      arrived += 1;
      setTimeout(() => res.writeHead(200, { 'content-type': 'application/json' }).end('[]'), 400);
    });
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    database = await createGatewayTestDatabase();
    port = await freePort();
    const admin = {
      adminUrl: `http://127.0.0.1:${await freePort()}`,
      adminToken: 'graceful-shutdown-admin-token-0123456789',
    };
    gateway = spawnBuiltGateway({
      PORT: String(port),
      PETS_URL: `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`,
      GATEWAY_DATABASE_URL: database.url,
      ADMIN_PORT: new URL(admin.adminUrl).port,
      ADMIN_TOKEN: admin.adminToken,
      SHUTDOWN_GRACE_MS: '5000',
    });
    await waitUntilLive(gateway, `http://127.0.0.1:${port}/health/live`);
    key = await mintKey(admin, 'business');
  }, 90_000);
  afterAll(async () => {
    gateway?.kill('SIGKILL');
    await new Promise<void>((resolve) => upstream.close(() => resolve()));
    await database?.drop();
  });

  it('finishes every in-flight request, then exits 0 and takes no new connection', async () => {
    const inFlight = Array.from({ length: 30 }, () =>
      fetch(`http://127.0.0.1:${port}/v1/pets`, { headers: { authorization: `Bearer ${key}` } }).then(
        (response) => response.status,
        (error: Error) => `failed: ${error.message}`,
      ),
    );
    // SIGTERM once every request is in flight, i.e. the gateway has taken it and is waiting on the upstream. On a
    // loaded machine a fixed delay is not enough: a connection still in the kernel's accept queue is not in flight.
    const deadline = Date.now() + 20_000;
    while (arrived < 30 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(arrived).toBe(30);
    const exited = new Promise<number | null>((resolve) => gateway.once('exit', (code) => resolve(code)));
    gateway.kill('SIGTERM');

    expect(await Promise.all(inFlight)).toEqual(Array(30).fill(200));
    expect(await exited).toBe(0);
    await expect(fetch(`http://127.0.0.1:${port}/health/live`)).rejects.toThrow();
  });
});
