import { ChildProcess, execFile, execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from '../../scripts/free-port';

const ROOT = join(__dirname, '../..');
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Whether something accepts connections on the port. */
function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

interface Started {
  process: ChildProcess;
  ports: { gateway: number; pets: number; admin: number; portal: number; console: number };
  /** ADMIN_TOKEN_FILE, in a folder of its own. */
  tokenFile: string;
  output: () => string;
  exited: Promise<number | null>;
}

/** Every process a test started: a failing test must not leave `npm start` (and its apps) running. */
const spawned: ChildProcess[] = [];

/**
 * Starts `command` with the apps on free ports and an in-memory database; resolves once it prints its Ready block.
 * `overrides`: variables to set otherwise ('' unsets one, as the apps read an empty variable as unset).
 */
async function start(command: string, args: string[], overrides: Record<string, string> = {}): Promise<Started> {
  const ports = {
    gateway: await freePort(),
    pets: await freePort(),
    admin: await freePort(),
    portal: await freePort(),
    console: await freePort(),
  };
  const tokenFile = join(mkdtempSync(join(tmpdir(), 'petstore-start-')), 'admin-token');
  const child = spawn(command, args, {
    cwd: ROOT,
    env: {
      ...process.env,
      PORT: String(ports.gateway),
      HOST: '127.0.0.1',
      PETS_PORT: String(ports.pets),
      METRICS_PORT: '0',
      PETS_METRICS_PORT: '0',
      PGLITE_DATA_DIR: 'memory://',
      ADMIN_PORT: String(ports.admin),
      ADMIN_TOKEN_FILE: tokenFile,
      PORTAL_PORT: String(ports.portal),
      GATEWAY_DATABASE_URL: '',
      CONSOLE_PORT: String(ports.console),
      CONSOLE_SESSION_SECRET_FILE: join(dirname(tokenFile), 'console-session-secret'),
      // The portal's development session secret (portal-session-secret), beside the token: never the checkout's .data/.
      PORTAL_DATA_DIR: dirname(tokenFile),
      CONSOLE_DATABASE_URL: '',
      ADMIN_URL: '',
      RATE_LIMIT_STATE_FILE: join(dirname(tokenFile), 'rate-limits.json'),
      DEMO_KEY: 'false',
      LOG_LEVEL: 'warn',
      NODE_ENV: 'development',
      DATABASE_URL: '',
      REDIS_URL: '',
      SHUTDOWN_GRACE_MS: '2000',
      ...overrides,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
    // A group of its own, so that a failed test can stop npm, the script and both apps at once.
    detached: true,
  });
  spawned.push(child);
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const deadline = Date.now() + 240_000;
  while (!/^Ready in \d+ s:$/m.test(output)) {
    if (Date.now() > deadline || child.exitCode !== null) throw new Error(`no Ready block:\n${output}`);
    await sleep(200);
  }
  return { process: child, ports, tokenFile, output: () => output, exited };
}

async function portsReleased(ports: number[], withinMs: number): Promise<boolean> {
  const deadline = Date.now() + withinMs;
  while (Date.now() < deadline) {
    if (!(await Promise.all(ports.map(listening))).some(Boolean)) return true;
    await sleep(100);
  }
  return false;
}

/**
 * `npm start` under a process manager: one "Ready" line once both apps answer, and a SIGTERM (or SIGINT) to
 * whichever process gets it stops everything and frees the ports.
 */
describe('npm start', () => {
  afterEach(() => {
    for (const child of spawned.splice(0)) {
      try {
        process.kill(-child.pid!, 'SIGKILL'); // the whole group, even when npm itself has exited
      } catch {
        /* already gone */
      }
    }
  });

  it('says Ready once both apps answer, and stops everything on SIGTERM to npm', async () => {
    // As a newcomer runs it: the default log level, and a demo key minted on the first start (and the metrics on,
    // which say the Node each app runs on).
    const metricsPorts = { gateway: await freePort(), pets: await freePort() };
    const started = await start('npm', ['start'], {
      LOG_LEVEL: '',
      DEMO_KEY: '',
      METRICS_PORT: String(metricsPorts.gateway),
      PETS_METRICS_PORT: String(metricsPorts.pets),
    });
    const output = started.output();
    const lines = output.split('\n');
    const { gateway, admin, pets, portal, console: consoleUi } = started.ports;
    const key = /^ {2}demo API key \(Free plan\) +(petk_\S+) \(shown once, kept in .*demo-api-key\)$/m.exec(
      output,
    )?.[1];
    expect(key).toBeDefined();
    // The closing block names every address and the demo key, aligned, one per line.
    const block = output
      .slice(output.search(/^Ready in \d+ s:$/m))
      .trim()
      .split('\n')
      .slice(1);
    expect(block.map((line) => line.trim().replace(/  +/g, ' | '))).toEqual([
      `Swagger UI (try the API) | http://localhost:${gateway}/docs`,
      `gateway (public API) | http://localhost:${gateway}/v1`,
      `admin API (private) | http://127.0.0.1:${admin}/docs (token in ${started.tokenFile})`,
      `pets service (internal) | http://127.0.0.1:${pets}`,
      `developer portal | http://localhost:${portal}/`,
      `operator console (private) | http://127.0.0.1:${consoleUi}`,
      `rate-limit counters | in-process, kept across restarts in ${join(dirname(started.tokenFile), 'rate-limits.json')}`,
      `demo API key (Free plan) | ${key} (shown once, kept in ${join(dirname(started.tokenFile), 'demo-api-key')})`,
    ]);
    // The key is printed once, in the block, not also in the gateway's own lines above it.
    expect(output.split(key!).length - 1).toBe(1);
    // One line per phase of npm start's own, then the apps' lines, all in one human format: no framework route
    // dump, no debug line at the default level, no JSON and no Nest-coloured text.
    const startLines = lines.filter((line) => line.startsWith('start    | ')).map((line) => line.replace(/:.*/, ''));
    const buildLines = startLines.slice(0, startLines.indexOf('start    | database'));
    // The build phase: one line when dist/ is current, else a line per build step and the time it took in all.
    if (buildLines.length === 1) expect(buildLines).toEqual(['start    | build']);
    else
      expect(buildLines).toEqual([
        ...Array.from(
          { length: buildLines.length - 1 },
          (_, i) => `start    | building ${i + 1}/${buildLines.length - 1}`,
        ),
        expect.stringMatching(/^start {4}\| built in \d+ s$/),
      ]);
    expect(startLines.slice(buildLines.length)).toEqual([
      'start    | database',
      'start    | starting pets, gateway, portal, console (each applies its pending migrations first)',
    ]);
    const appLines = lines.filter((line) => /^(pets|gateway|portal|console) +\| /.test(line));
    expect(appLines.length).toBeGreaterThan(0);
    expect(appLines.filter((line) => !/^\w+ +\| \d\d:\d\d:\d\d (info |warn |error|fatal) /.test(line))).toEqual([]);
    expect(
      lines.filter((line) => /RoutesResolver|RouterExplorer|Mapped \{|InstanceLoader|DEBUG|\[Nest\]/.test(line)),
    ).toEqual([]);
    // Each app's migrations are named as they are applied (the "migrating" phase, per app).
    expect(appLines.filter((line) => /Migrations: Applied/.test(line)).map((line) => line.split(' ')[0])).toEqual(
      expect.arrayContaining(['pets', 'gateway', 'portal']),
    );
    // "Ready" means ready: both answer their readiness at that moment.
    expect((await fetch(`http://127.0.0.1:${started.ports.gateway}/health/ready`)).status).toBe(200);
    expect((await fetch(`http://127.0.0.1:${started.ports.pets}/health/ready`)).status).toBe(200);
    expect((await fetch(`http://127.0.0.1:${started.ports.portal}/health/ready`)).status).toBe(200);
    // npm start runs the apps on the project's Node (node_modules/.bin/node, first on npm's PATH), not the machine's.
    const brought = join(ROOT, 'node_modules/.bin/node');
    const projectNode = existsSync(brought)
      ? execFileSync(brought, ['-v'], { encoding: 'utf8' }).trim()
      : process.version;
    for (const port of Object.values(metricsPorts)) {
      const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
      expect(/^nodejs_version_info\{version="(v[\d.]+)"/m.exec(metrics)?.[1]).toBe(projectNode);
    }
    // The console answers its sign-in page, on the embedded database npm start serves (its sessions' schema).
    const signIn = await fetch(`http://127.0.0.1:${started.ports.console}/sign-in`);
    expect([signIn.status, (await signIn.text()).includes('Admin token')]).toEqual([200, true]);
    // Its sign-ins reach the admin audit by default: npm start minted a CONSOLE_AUDIT_TOKEN that acts for users.
    const auditToken = readFileSync(join(dirname(started.tokenFile), 'console-audit-token'), 'utf8').trim();
    const audit = await fetch(`http://127.0.0.1:${started.ports.admin}/token`, {
      headers: { authorization: `Bearer ${auditToken}` },
    });
    expect(((await audit.json()) as { actsForUsers: boolean }).actsForUsers).toBe(true);

    // The keys CLI finds the admin API of the npm start it runs beside (on a port it was not told): the gateway
    // wrote its address beside the admin token (ADMIN_TOKEN_FILE's folder, .data/ by default).
    const urlFile = join(dirname(started.tokenFile), 'admin-url');
    expect(readFileSync(urlFile, 'utf8').trim()).toBe(`http://127.0.0.1:${started.ports.admin}`);
    const env = Object.fromEntries(
      Object.entries(process.env).filter(([name]) => !['ADMIN_URL', 'ADMIN_PORT', 'ADMIN_TOKEN'].includes(name)),
    );
    const keys = (...args: string[]) =>
      promisify(execFile)(process.execPath, ['scripts/keys.js', ...args], {
        cwd: ROOT,
        env: { ...env, ADMIN_TOKEN_FILE: started.tokenFile },
      });
    expect((await keys('list')).stdout).toMatch(/^demo\b/m);

    started.process.kill('SIGTERM');
    await started.exited;
    expect(
      await portsReleased(
        [started.ports.gateway, started.ports.pets, started.ports.admin, started.ports.portal, started.ports.console],
        15_000,
      ),
    ).toBe(true);
    // Gone with the gateway: the CLI does not send the token to whatever takes the port next.
    expect(existsSync(urlFile)).toBe(false);
    // The in-process counters were written as the gateway stopped, for the next start to resume.
    expect(JSON.parse(readFileSync(join(dirname(started.tokenFile), 'rate-limits.json'), 'utf8'))).toMatchObject({
      version: 1,
    });
  }, 300_000);

  it('stops every app on SIGINT to npm, as on SIGTERM', async () => {
    const started = await start('npm', ['start']);
    started.process.kill('SIGINT');
    expect(await started.exited).toBe(0);
    expect(
      await portsReleased(
        [started.ports.gateway, started.ports.pets, started.ports.admin, started.ports.portal, started.ports.console],
        15_000,
      ),
    ).toBe(true);
  }, 300_000);

  it('stops both apps on SIGINT to the start script itself', async () => {
    const started = await start(process.execPath, ['scripts/start.js']);
    started.process.kill('SIGINT');
    expect(await started.exited).toBe(0);
    expect(
      await portsReleased(
        [started.ports.gateway, started.ports.pets, started.ports.admin, started.ports.portal, started.ports.console],
        15_000,
      ),
    ).toBe(true);
  }, 120_000);
});
