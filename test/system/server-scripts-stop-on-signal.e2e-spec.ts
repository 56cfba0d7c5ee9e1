import { ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { runIf } from '../support/skip';
import {
  buildAppsIfMissing,
  freeStackPorts,
  hasNginx,
  killLeftovers,
  leftoverProcesses,
  portsInUse,
} from '../support/stack';

const ROOT = join(__dirname, '../..');
const LOCAL_POSTGRES = 'postgres://postgres@127.0.0.1:5432/postgres';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** App variables a server script sets itself (the stack refuses them): never passed on from the test's environment. */
const SET_BY_THE_SCRIPTS = ['PORT', 'ADMIN_PORT', 'METRICS_PORT', 'PETS_PORT', 'PETS_METRICS_PORT', 'PETS_URL'];

/** `npm run <script>` as a process manager runs it: npm's pid is the one it knows and signals. */
interface NpmRun {
  npm: ChildProcess;
  /** In the environment of everything the script starts (they inherit it): how leftovers are found. */
  marker: string;
  /** STACK_DIR: on nginx's command line (nginx writes its process title over its environment). */
  dir: string;
  output(): string;
  exited: Promise<number | null>;
}

const runs: NpmRun[] = [];

function npmRun(script: string, args: string[], env: Record<string, string | undefined>): NpmRun {
  const marker = `signal-test-${randomBytes(8).toString('hex')}`;
  const dir = mkdtempSync(join(tmpdir(), 'petstore-signal-'));
  const inherited = { ...process.env };
  for (const name of SET_BY_THE_SCRIPTS) delete inherited[name];
  const npm = spawn('npm', ['run', script, ...(args.length ? ['--', ...args] : [])], {
    cwd: ROOT,
    env: { ...inherited, STACK_TEST_MARKER: marker, STACK_DIR: dir, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let text = '';
  npm.stdout!.on('data', (chunk: Buffer) => (text += chunk.toString()));
  npm.stderr!.on('data', (chunk: Buffer) => (text += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => npm.once('exit', (code) => resolve(code)));
  const run = { npm, marker, dir, output: () => text, exited };
  runs.push(run);
  return run;
}

async function waitForOutput(run: NpmRun, pattern: RegExp, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!pattern.test(run.output())) {
    if (run.npm.exitCode !== null) throw new Error(`npm exited before printing ${pattern}:\n${run.output()}`);
    if (Date.now() > deadline) throw new Error(`no ${pattern} within ${timeoutMs} ms:\n${run.output()}`);
    await sleep(200);
  }
}

/** npm's exit code once it has exited; fails (saying what was printed) past `timeoutMs`. */
async function npmExit(run: NpmRun, timeoutMs: number): Promise<number | null> {
  const late = new Promise<'late'>((resolve) => setTimeout(() => resolve('late'), timeoutMs).unref());
  const outcome = await Promise.race([run.exited, late]);
  if (outcome === 'late') throw new Error(`npm did not exit within ${timeoutMs} ms:\n${run.output()}`);
  return outcome;
}

/** Names of the databases on the local server whose name starts with `prefix`. */
async function databases(prefix: string): Promise<string[]> {
  const client = new Client({ connectionString: LOCAL_POSTGRES });
  await client.connect();
  try {
    const { rows } = await client.query<{ datname: string }>(
      'SELECT datname FROM pg_database WHERE datname LIKE $1 ORDER BY 1',
      [`${prefix.replace(/_/g, '\\_')}%`],
    );
    return rows.map((row) => row.datname);
  } finally {
    await client.end();
  }
}

afterEach(() => {
  for (const run of runs.splice(0)) {
    if (run.npm.exitCode === null) run.npm.kill('SIGKILL');
    killLeftovers(run);
  }
});

/**
 * Every npm script that starts servers runs its script in npm's stead (`exec`): npm passes SIGINT and SIGTERM on to
 * its child, the `sh -c` running the script, and a shell that is not replaced dies of SIGTERM (orphaning what the
 * script started) and waits through SIGINT (changing nothing).
 */
describe('npm scripts that start servers', () => {
  it('exec the script, so that a signal to npm reaches it', () => {
    const scripts = (
      JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }
    ).scripts;
    const serverScripts = Object.entries(scripts).filter(([, command]) =>
      /\b(scripts\/start\.js|scripts\/stack\.js|bench\/[\w-]+\.js)\b/.test(command),
    );
    expect(serverScripts.map(([name]) => name)).toEqual(
      expect.arrayContaining(['start', 'start:gateway', 'stack', 'bench', 'bench:admission', 'bench:soak']),
    );
    expect(
      serverScripts.filter(
        ([, command]) => !/^exec node (scripts|bench)\/[\w-]+\.js( --?[\w-]+)*( \w+)?$/.test(command),
      ),
    ).toEqual([]);
  });
});

const ifNginxAndRedis = runIf(hasNginx && process.env.REDIS_URL, 'nginx on PATH and REDIS_URL (a Redis server)');
ifNginxAndRedis.describe('npm run stack, signalled through npm', () => {
  beforeAll(() => buildAppsIfMissing(), 180_000);

  it.each(['SIGTERM', 'SIGINT'] as const)(
    'stops every process, frees every port and drops its database on %s to npm, and exits 0',
    async (signal) => {
      const ports = await freeStackPorts(1);
      const before = await databases('stack_');
      const run = npmRun('stack', [], {
        ...ports.env,
        GATEWAY_INSTANCES: '1',
        DATABASE_URL: undefined,
        REDIS_KEY_PREFIX: undefined,
      });
      await waitForOutput(run, /^Ctrl-C stops everything\.$/m, 120_000);
      const processes = leftoverProcesses(run);
      expect(processes.length).toBeGreaterThan(3); // the stack, pets, a gateway, the portal, nginx
      // Its database is named after the stack's process (stack_<ms>_<pid>); a stack file in another worker makes
      // one of its own meanwhile.
      const stack = processes.filter(({ command }) => /scripts\/stack\.js/.test(command)).map(({ pid }) => pid);
      expect(stack).toHaveLength(1);
      const started = (await databases('stack_')).filter(
        (name) => !before.includes(name) && name.endsWith(`_${stack[0]}`),
      );
      expect(started).toHaveLength(1);

      run.npm.kill(signal);
      expect(await npmExit(run, 30_000)).toBe(0);
      expect(leftoverProcesses(run)).toEqual([]);
      expect(await portsInUse(ports.all(1))).toEqual([]);
      expect(await databases(started[0])).toEqual([]);
    },
    180_000,
  );
});

const ifRedis = runIf(process.env.REDIS_URL, 'REDIS_URL (a Redis server) and the local PostgreSQL');
ifRedis.describe('a bench, signalled through npm', () => {
  beforeAll(() => buildAppsIfMissing(), 180_000);

  it('npm run bench:admission stops its servers and drops its database on SIGTERM to npm', async () => {
    const before = await databases('bench_admission_');
    const run = npmRun('bench:admission', ['--no-build', '--rounds', '1'], {
      BENCH_REDIS_URL: process.env.REDIS_URL,
      BENCH_DATABASE_URL: LOCAL_POSTGRES,
    });
    // Printed once its pets service and both gateways answer and the keys are minted: the load starts.
    await waitForOutput(run, /^admission: 1,000 concurrent requests/m, 120_000);
    const started = (await databases('bench_admission_')).filter((name) => !before.includes(name));
    expect(started).toHaveLength(1);
    expect(leftoverProcesses(run).length).toBeGreaterThanOrEqual(4); // the bench, pets, two gateways

    run.npm.kill('SIGTERM');
    await npmExit(run, 30_000);
    expect(leftoverProcesses(run)).toEqual([]);
    expect(await databases(started[0])).toEqual([]);
  }, 180_000);
});
