import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer, Server } from 'node:net';
import { join } from 'node:path';
import { unsupportedNodeLine } from '@app/platform/supported-node';
import { GatewayUnderTest, startGateway } from '../support/gateway';
import { call } from '../support/http';
import { olderNode } from '../support/older-node';
import { runIf } from '../support/skip';
import { RunningPets, startPetsService } from '../support/pets-service';

const ROOT = join(__dirname, '../..');
const MAIN = {
  pets: join(ROOT, 'dist/apps/pets/apps/pets/src/main.js'),
  gateway: join(ROOT, 'dist/apps/gateway/apps/gateway/src/main.js'),
};

/**
 * What a spawned gateway needs besides the variable under test: a throwaway consumers database of its own (never
 * the embedded one under .data/), its admin API on a free port, and a token (else it would create .data/admin-token).
 */
const GATEWAY_ENV = {
  GATEWAY_PGLITE_DATA_DIR: 'memory://',
  ADMIN_PORT: '0',
  ADMIN_TOKEN: 'startup-test-admin-token-0123456789abcdef',
  DEMO_KEY: 'false',
};

async function occupyPort(): Promise<{ server: Server; port: number }> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as { port: number }).port };
}

/** Runs a built app until it exits; resolves with its exit code and what it printed on stderr. */
function runApp(
  app: keyof typeof MAIN,
  env: Record<string, string>,
  node = process.execPath,
): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(node, [MAIN[app]], {
      cwd: ROOT,
      env: { PATH: process.env.PATH, NODE_ENV: 'test', LOG_LEVEL: 'error', ...env },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${app} did not exit: ${stderr}`));
    }, 30_000);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stderr });
    });
  });
}

/** What the apps say when they refuse to start: one line naming the variable, never a stack or a secret. */
describe('start-up refusals', () => {
  let pets: RunningPets;
  let gateway: GatewayUnderTest | undefined;
  let taken: { server: Server; port: number };

  beforeAll(async () => {
    for (const app of ['pets', 'gateway'] as const) {
      if (!existsSync(MAIN[app])) execFileSync('npx', ['nest', 'build', app], { cwd: ROOT, stdio: 'ignore' });
    }
    pets = await startPetsService();
    taken = await occupyPort();
  }, 120_000);
  afterAll(async () => {
    await gateway?.close();
    await pets?.close();
    taken?.server.close();
  });

  it('sends the gateway to PETS_PORT when PETS_URL is unset', async () => {
    const petsPort = new URL(pets.url).port;
    gateway = await startGateway({ petsUrl: '', env: { PETS_URL: '', PETS_PORT: petsPort } });
    expect(gateway.config.petsUrl).toBe(`http://127.0.0.1:${petsPort}`);
    expect((await call(`${gateway.url}/health/ready`)).status).toBe(200);
  });

  it('stops the gateway with one line naming PORT when its port is taken', async () => {
    const { code, stderr } = await runApp('gateway', {
      ...GATEWAY_ENV,
      PORT: String(taken.port),
      HOST: '127.0.0.1',
      METRICS_PORT: '0',
      PETS_URL: pets.url,
    });
    expect(code).toBe(1);
    expect(stderr.trim().split('\n')).toEqual([
      `PORT=${taken.port} on 127.0.0.1 is already in use (EADDRINUSE): set PORT to a free port`,
    ]);
  });

  it('stops the pets service with one line naming PETS_METRICS_PORT when its metrics port is taken', async () => {
    const { code, stderr } = await runApp('pets', {
      PETS_PORT: '0',
      PETS_METRICS_PORT: String(taken.port),
      PGLITE_DATA_DIR: 'memory://',
    });
    expect(code).toBe(1);
    expect(stderr.trim().split('\n')).toEqual([
      `PETS_METRICS_PORT=${taken.port} on 127.0.0.1 is already in use (EADDRINUSE): set PETS_METRICS_PORT to a free port`,
    ]);
  });

  it('refuses a published placeholder secret in production without printing it', async () => {
    const { code, stderr } = await runApp('pets', {
      NODE_ENV: 'production',
      INTERNAL_SECRET: 'change-me-internal-secret',
      PETS_PORT: '0',
      PETS_METRICS_PORT: '0',
      PGLITE_DATA_DIR: 'memory://',
    });
    expect(code).toBe(1);
    expect(stderr.trim().split('\n')).toEqual([
      'Invalid configuration: INTERNAL_SECRET is a published placeholder, refused in production: set a random secret (openssl rand -hex 32) (value hidden)',
    ]);
  });

  it('refuses to start the pets service in production without CURSOR_SECRET, with one line', async () => {
    const { code, stderr } = await runApp('pets', {
      NODE_ENV: 'production',
      PETS_PORT: '0',
      PETS_METRICS_PORT: '0',
      PGLITE_DATA_DIR: 'memory://',
    });
    expect(code).toBe(1);
    expect(stderr.trim().split('\n')).toEqual([
      'Invalid configuration: CURSOR_SECRET must be set in production (32+ characters, the same on every pets instance, e.g. openssl rand -hex 32): without it paging cursors are signed with a key published in the source',
    ]);
  });

  const older = olderNode();
  runIf(older, 'a Node older than the supported one on PATH, outside node_modules').it(
    'refuses a Node older than the supported one with one line, in npm start and in the built apps',
    async () => {
      const line = unsupportedNodeLine(older!.version);
      const start = spawnSync(older!.node, ['scripts/start.js'], { cwd: ROOT, encoding: 'utf8', timeout: 30_000 });
      expect([start.status, start.stdout, start.stderr]).toEqual([1, '', `${line}\n`]);
      for (const app of ['pets', 'gateway'] as const) {
        const { code, stderr } = await runApp(app, GATEWAY_ENV, older!.node);
        expect([app, code, stderr]).toEqual([app, 1, `${line}\n`]);
      }
    },
  );

  it('never echoes a rejected secret', async () => {
    const { code, stderr } = await runApp('gateway', { ...GATEWAY_ENV, INTERNAL_SECRET: 'short-secret-15' });
    expect(code).toBe(1);
    expect(stderr).not.toContain('short-secret-15');
    expect(stderr.trim()).toBe(
      'Invalid configuration: INTERNAL_SECRET must be at least 16 characters long (value hidden)',
    );
  });
});
