import { createServer as createHttpServer, Server as HttpServer } from 'node:http';
import { connect, createServer, Server, Socket } from 'node:net';
import {
  buildAppsIfMissing,
  databasesLeftBy,
  dropDatabasesLeftBy,
  exitWithin,
  hasNginx,
  killLeftovers,
  leftoverProcesses,
  portsInUse,
  freeStackPorts,
  runStackCli,
  StackRun,
} from '../support/stack';
import { runIf } from '../support/skip';

/** The lines the CLI wrote about itself (the apps' own output aside). */
function stackLines(run: StackRun): string[] {
  return run
    .output()
    .split('\n')
    .filter((line) => line.startsWith('stack:'));
}

/** A server that accepts connections and never says a word. */
async function silentServer(port: number): Promise<{ server: Server; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server = createServer((socket) => sockets.add(socket));
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return {
    server,
    close: () => {
      for (const socket of sockets) socket.destroy();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

async function httpServer(port: number): Promise<HttpServer> {
  const server = createHttpServer((_request, response) => response.end('not the stack'));
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return server;
}

/** Resolves once something accepts connections on `port` (the stack has got that far); connects, never binds. */
async function listening(port: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const accepts = () =>
    new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
  while (!(await accepts())) {
    if (Date.now() > deadline) throw new Error(`nothing listened on ${port} within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * `npm run stack` that cannot start: it exits non-zero with one line saying why, having stopped everything it had
 * started (pets, gateways, nginx) and dropped the database it had created, and no wait of it is endless.
 * Needs nginx and Redis, like test/system/stack.e2e-spec.ts (CI runs both in its Redis pass).
 */
const ifNginxAndRedis = runIf(hasNginx && process.env.REDIS_URL, 'nginx on PATH and REDIS_URL (a Redis server)');
ifNginxAndRedis.describe('a failed start of the stack', () => {
  const runs: StackRun[] = [];
  const start = (env: Record<string, string | undefined>) => {
    const run = runStackCli({ GATEWAY_INSTANCES: '1', DATABASE_URL: undefined, ...env });
    runs.push(run);
    return run;
  };

  beforeAll(() => buildAppsIfMissing(), 120_000);
  afterEach(async () => {
    for (const run of runs.splice(0)) {
      killLeftovers(run);
      await dropDatabasesLeftBy(run);
    }
  });

  it('refuses a STACK_PORT another HTTP server holds, before starting anything', async () => {
    const ports = await freeStackPorts(2);
    const other = await httpServer(ports.nginx);
    try {
      const run = start(ports.env);
      const { code, ms } = await exitWithin(run, 45_000);
      expect(code).toBe(1);
      expect(stackLines(run)).toEqual([
        `stack: STACK_PORT: port ${ports.nginx} (nginx, the stack's entry) is already in use on 127.0.0.1: set STACK_PORT to a free port`,
      ]);
      expect(ms).toBeLessThan(5000);
      expect(leftoverProcesses(run)).toEqual([]);
      expect(await portsInUse(ports.all(1).filter((port) => port !== ports.nginx))).toEqual([]);
    } finally {
      await new Promise((resolve) => other.close(resolve));
    }
  });

  it('refuses a STACK_PORT held by a server that never answers, well within its deadline', async () => {
    const ports = await freeStackPorts(2);
    const silent = await silentServer(ports.nginx);
    try {
      const run = start({ ...ports.env, STACK_READY_TIMEOUT_MS: '10000' });
      const { code, ms } = await exitWithin(run, 45_000);
      expect(code).toBe(1);
      expect(stackLines(run)).toEqual([
        expect.stringMatching(new RegExp(`^stack: STACK_PORT: port ${ports.nginx} .* already in use`)),
      ]);
      expect(ms).toBeLessThan(10_000);
      expect(leftoverProcesses(run)).toEqual([]);
    } finally {
      await silent.close();
    }
  });

  it('stops the pets service, the gateway, the portal and nginx when nginx cannot bind STACK_PORT (taken after the check)', async () => {
    const ports = await freeStackPorts(2);
    const run = start(ports.env);
    // The port check is over once the pets service listens: take STACK_PORT then, as a late-starting server would.
    await listening(ports.pets, 30_000);
    const other = await httpServer(ports.nginx);
    try {
      const { code } = await exitWithin(run, 60_000);
      expect(code).toBe(1);
      const lines = stackLines(run);
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(
        new RegExp(
          `^stack: nginx exited \\(code 1\\) during the start, .*bind\\(\\) to 127\\.0\\.0\\.1:${ports.nginx} failed.*; stopped everything it had started \\(pets, gateway-1, portal, nginx\\)$`,
        ),
      );
      expect(leftoverProcesses(run)).toEqual([]);
      expect(await portsInUse(ports.all(1).filter((port) => port !== ports.nginx))).toEqual([]);
      expect(await databasesLeftBy(run)).toEqual([]);
    } finally {
      await new Promise((resolve) => other.close(resolve));
    }
  }, 90_000);

  it('gives up on a gateway that never gets ready at STACK_READY_TIMEOUT_MS, saying what it waited for, and stops everything', async () => {
    const ports = await freeStackPorts(2);
    // A Redis that accepts and never answers: the gateway starts but is never ready.
    const redis = await silentServer(0);
    const redisPort = (redis.server.address() as { port: number }).port;
    try {
      const run = start({ ...ports.env, REDIS_URL: `redis://127.0.0.1:${redisPort}`, STACK_READY_TIMEOUT_MS: '12000' });
      const { code, ms } = await exitWithin(run, 60_000);
      expect(code).toBe(1);
      const lines = stackLines(run);
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(
        new RegExp(
          `^stack: gateway-1 \\(port ${ports.gateway(1).port}, STACK_GATEWAY_PORT_BASE\\) was not ready within 12 s: GET http://127\\.0\\.0\\.1:${ports.gateway(1).port}/health/ready (answered 503|failed \\(ECONNREFUSED\\)|got no answer within \\d+ ms) \\(STACK_READY_TIMEOUT_MS sets the wait\\); stopped everything it had started \\(pets, gateway-1\\)$`,
        ),
      );
      // The pets service's start, the gateway's 12 s and the stop: under the old fixed 30 s wait alone. (8 s was too
      // short for the pets service itself to be ready on a 2-core machine running two test passes at once.)
      expect(ms).toBeLessThan(30_000);
      expect(leftoverProcesses(run)).toEqual([]);
      expect(await portsInUse(ports.all(1))).toEqual([]);
      expect(await databasesLeftBy(run)).toEqual([]);
    } finally {
      await redis.close();
    }
  });
});
