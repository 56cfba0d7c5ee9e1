import { ChildProcess, execFileSync, spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';

const ROOT = join(__dirname, '../..');

/** nginx is what `npm run stack` puts in front of the gateways; without it there is no stack to test. */
export const hasNginx = spawnSync('nginx', ['-v']).status === 0 || spawnSync('/usr/sbin/nginx', ['-v']).status === 0;

/** The stack runs the built apps: build them once when this checkout has not. */
export function buildAppsIfMissing(): void {
  for (const app of ['pets', 'gateway', 'portal']) {
    if (!existsSync(join(ROOT, `dist/apps/${app}/apps/${app}/src/main.js`)))
      execFileSync('npx', ['nest', 'build', app], { cwd: ROOT, stdio: 'ignore' });
  }
}

/**
 * Every port variable of the stack, from one random base in 20000-31900: below Linux's ephemeral range (32768 and
 * up), where the local end of any outgoing connection may sit, and two runs are unlikely to meet.
 */
const BASES = 120;
/** Jest workers get disjoint bases (one stack at a time per worker): two files of one run never draw the same. */
const WORKER_SLOTS = 8;
export interface StackPorts {
  base: number;
  env: Record<string, string>;
  nginx: number;
  pets: number;
  petsMetrics: number;
  gateway: (instance: number) => { port: number; adminPort: number; metricsPort: number };
  /** Every port the stack listens on with `instances` gateways. */
  all: (instances: number) => number[];
}

export function randomStackPorts(): StackPorts {
  const slot = (Number(process.env.JEST_WORKER_ID ?? 1) - 1) % WORKER_SLOTS;
  const base = 20000 + 100 * (slot + WORKER_SLOTS * Math.floor(Math.random() * (BASES / WORKER_SLOTS)));
  const gateway = (i: number) => ({
    port: base + 10 + i - 1,
    adminPort: base + 20 + i - 1,
    metricsPort: base + 30 + i - 1,
  });
  return {
    base,
    env: {
      STACK_PORT: String(base),
      STACK_PETS_PORT: String(base + 1),
      STACK_PETS_METRICS_PORT: String(base + 2),
      STACK_GATEWAY_PORT_BASE: String(base + 10),
      STACK_ADMIN_PORT_BASE: String(base + 20),
      STACK_METRICS_PORT_BASE: String(base + 30),
      STACK_PORTAL_PORT: String(base + 3),
    },
    nginx: base,
    pets: base + 1,
    petsMetrics: base + 2,
    gateway,
    all: (instances) => [
      base,
      base + 1,
      base + 2,
      base + 3,
      ...Array.from({ length: instances }, (_, i) => Object.values(gateway(i + 1))).flat(),
    ],
  };
}

/** Random stack ports that are free right now (a few tries), for a test whose point is not a taken port. */
export async function freeStackPorts(instances: number): Promise<StackPorts> {
  for (let attempt = 0; ; attempt += 1) {
    const ports = randomStackPorts();
    if (attempt === 9 || (await portsInUse(ports.all(instances))).length === 0) return ports;
  }
}

/** App variables the stack refuses (it sets them per instance): never passed on from the test's own environment. */
const SET_BY_THE_STACK = [
  'PORT',
  'ADMIN_PORT',
  'METRICS_PORT',
  'PETS_PORT',
  'PETS_METRICS_PORT',
  'PETS_URL',
  'HOST',
  'ADMIN_HOST',
  'PETS_HOST',
  'PORTAL_PORT',
  'PORTAL_HOST',
];

/** `node scripts/stack.js` running as a user runs it, with a marker in its environment that its children inherit. */
export interface StackRun {
  child: ChildProcess;
  /** In the environment of every app the stack starts (they inherit it): how leftovers are found. */
  marker: string;
  /** STACK_DIR: on nginx's command line (nginx writes its process title over its environment). */
  dir: string;
  /** Everything printed so far, stdout and stderr. */
  output(): string;
  /** Resolves when the CLI exits, with its exit code and how long it ran. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; ms: number }>;
  /** Resolves when the output matches `pattern`; rejects if the CLI exits first or after `timeoutMs`. */
  waitFor(pattern: RegExp, timeoutMs: number): Promise<string>;
}

export function runStackCli(env: Record<string, string | undefined>): StackRun {
  const marker = `stack-test-${randomBytes(8).toString('hex')}`;
  const dir = mkdtempSync(join(tmpdir(), 'petstore-stack-'));
  const inherited = { ...process.env };
  for (const name of SET_BY_THE_STACK) delete inherited[name];
  const child = spawn(process.execPath, [join(ROOT, 'scripts/stack.js')], {
    cwd: ROOT,
    env: {
      ...inherited,
      STACK_DIR: dir,
      REDIS_KEY_PREFIX: `${process.env.REDIS_KEY_PREFIX ?? 'test:'}stack-${randomBytes(4).toString('hex')}:`,
      STACK_TEST_MARKER: marker,
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const started = Date.now();
  let text = '';
  const listeners = new Set<() => void>();
  const append = (chunk: Buffer) => {
    text += chunk.toString();
    for (const listener of listeners) listener();
  };
  child.stdout!.on('data', append);
  child.stderr!.on('data', append);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; ms: number }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal, ms: Date.now() - started })),
  );
  const waitFor = (pattern: RegExp, timeoutMs: number) =>
    new Promise<string>((resolve, reject) => {
      const check = () => {
        const match = pattern.exec(text);
        if (!match) return false;
        done();
        resolve(match[0]);
        return true;
      };
      const timer = setTimeout(() => {
        done();
        reject(new Error(`no ${pattern} in the stack's output within ${timeoutMs} ms:\n${text}`));
      }, timeoutMs);
      const done = () => {
        clearTimeout(timer);
        listeners.delete(listener);
      };
      const listener = () => void check();
      if (check()) return;
      listeners.add(listener);
      void exited.then(() => {
        if (!check()) {
          done();
          reject(new Error(`the stack exited before printing ${pattern}:\n${text}`));
        }
      });
    });
  return { child, marker, dir, output: () => text, exited, waitFor };
}

/** Waits for the CLI to exit; past `timeoutMs` kills it (and what it started) and fails, saying so. */
export async function exitWithin(run: StackRun, timeoutMs: number): Promise<{ code: number | null; ms: number }> {
  const timer = new Promise<'late'>((resolve) => setTimeout(() => resolve('late'), timeoutMs).unref());
  const outcome = await Promise.race([run.exited, timer]);
  if (outcome === 'late') {
    run.child.kill('SIGKILL');
    killLeftovers(run);
    throw new Error(`the stack did not exit within ${timeoutMs} ms; its output:\n${run.output()}`);
  }
  return outcome;
}

/**
 * Processes of the run still running: the apps by the marker in their environment, nginx by its STACK_DIR on its
 * command line. What the stack started and left behind.
 */
export function leftoverProcesses(run: Pick<StackRun, 'marker' | 'dir'>): Array<{ pid: number; command: string }> {
  const found: Array<{ pid: number; command: string }> = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const command = readFileSync(`/proc/${entry}/cmdline`, 'latin1').split('\0').join(' ').trim();
      // A zombie has no command line left: it holds no port and runs nothing.
      if (!command) continue;
      const marked = readFileSync(`/proc/${entry}/environ`, 'latin1')
        .split('\0')
        .includes(`STACK_TEST_MARKER=${run.marker}`);
      if (marked || command.includes(run.dir)) found.push({ pid: Number(entry), command });
    } catch {
      /* gone meanwhile, or not ours to read */
    }
  }
  return found;
}

/** Clean-up after a failed test, so that one broken run does not hold ports for the next: only the run's own pids. */
export function killLeftovers(run: Pick<StackRun, 'marker' | 'dir'>): void {
  for (const { pid } of leftoverProcesses(run)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      /* already gone */
    }
  }
}

/** The ports among `ports` that cannot be bound on 127.0.0.1 (someone listens there). */
export async function portsInUse(ports: number[]): Promise<number[]> {
  const busy: number[] = [];
  for (const port of ports) {
    const free = await new Promise<boolean>((resolve) => {
      const server = createServer();
      server.once('error', () => resolve(false));
      server.listen({ host: '127.0.0.1', port, exclusive: true }, () => server.close(() => resolve(true)));
    });
    if (!free) busy.push(port);
  }
  return busy;
}

/** The stack's default PostgreSQL server (STACK_POSTGRES_URL's default). */
const LOCAL_POSTGRES = 'postgres://postgres@127.0.0.1:5432/postgres';

/** Databases the run created on `serverUrl` and left: the stack names them stack_<time>_<its pid>. */
export async function databasesLeftBy(run: Pick<StackRun, 'child'>, serverUrl = LOCAL_POSTGRES): Promise<string[]> {
  const client = new Client({ connectionString: serverUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ datname: string }>('SELECT datname FROM pg_database WHERE datname LIKE $1', [
      `stack\\_%\\_${run.child.pid}`,
    ]);
    return rows.map((row) => row.datname);
  } finally {
    await client.end();
  }
}

/** Clean-up after a failed test: drops what databasesLeftBy finds. */
export async function dropDatabasesLeftBy(run: Pick<StackRun, 'child'>, serverUrl = LOCAL_POSTGRES): Promise<void> {
  const names = await databasesLeftBy(run, serverUrl);
  if (names.length === 0) return;
  const client = new Client({ connectionString: serverUrl });
  await client.connect();
  try {
    for (const name of names) await client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  } finally {
    await client.end();
  }
}
