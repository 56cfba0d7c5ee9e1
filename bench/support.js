/**
 * What every bench script shares: options, the PostgreSQL and Redis it uses, a database of the run's own,
 * building and starting the apps pinned to the server core, waiting for them, minting a key, free ports, and
 * reading a process's memory and CPU time from /proc (Linux).
 */
const { spawn, spawnSync, execSync } = require('node:child_process');
const { existsSync, mkdirSync, readFileSync, writeFileSync } = require('node:fs');
const path = require('node:path');
const { appNodeOptions } = require('../scripts/app-node-options');
const { freePort } = require('../scripts/free-port');
const { LOCAL_POSTGRES_URL, ensureLocalServices } = require('../scripts/local-services');
const { createThrowawayDatabase } = require('../scripts/throwaway-database');
const { EventEmitter } = require('node:events');
const { until, waitForHttp: waitForUrl } = require('../scripts/wait');

const ROOT = path.join(__dirname, '..');
const SERVER_CORE = '0';
const LOAD_CORE = '1';
/** The PostgreSQL server of the runs' databases (any database of it may be named: they are created beside it). */
const PG_SERVER = process.env.BENCH_DATABASE_URL ?? LOCAL_POSTGRES_URL;
const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
/** The built apps' entry points, relative to ROOT. */
const PETS_MAIN = 'dist/apps/pets/apps/pets/src/main.js';
const GATEWAY_MAIN = 'dist/apps/gateway/apps/gateway/src/main.js';
const hasTaskset = spawnSync('taskset', ['-V']).status === 0;
/** Clock ticks per second of utime/stime in /proc/<pid>/stat (100 on nearly every Linux). */
const CLOCK_TICKS = (() => {
  const result = spawnSync('getconf', ['CLK_TCK']);
  return result.status === 0 ? Number(result.stdout.toString().trim()) || 100 : 100;
})();

function sh(command, env = {}) {
  return execSync(command, {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  }).toString();
}

/** The value after `name` on the command line (`--duration 5`), else `fallback`. */
function option(args, name, fallback) {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : fallback;
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Pins this process (every thread of it, and whatever it starts later unless told otherwise) to the load core; the
 * servers it starts are pinned to the server core. The process pins itself rather than running a pinned copy of
 * itself: a SIGTERM to the bench's pid (npm's, which `exec`s it) then reaches the process that owns the servers.
 */
function pinLoadGenerator() {
  if (!hasTaskset) return;
  spawnSync('taskset', ['-a', '-p', '-c', LOAD_CORE, String(process.pid)], { stdio: 'ignore' });
}

/**
 * Starts a server on `core` (the server core unless told). `taskset` execs the command, so the child's pid is the
 * server itself. The child is added to `children` (to be stopped at exit); its stderr is prefixed with `name`.
 */
function start(children, name, command, commandArgs, env, core = SERVER_CORE, { stdout = false } = {}) {
  const full = hasTaskset ? ['taskset', ['-c', core, command, ...commandArgs]] : [command, commandArgs];
  const child = spawn(full[0], full[1], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    // `stdout`: the caller reads it (child.stdout); BENCH_CHILD_STDOUT=1 shows it (e.g. V8's --trace-gc); else dropped.
    stdio: ['ignore', stdout || process.env.BENCH_CHILD_STDOUT === '1' ? 'pipe' : 'ignore', 'pipe'],
  });
  if (process.env.BENCH_CHILD_STDOUT === '1')
    child.stdout.on('data', (chunk) => process.stderr.write(`[${name}] ${chunk}`));
  child.stderr.on('data', (chunk) => process.stderr.write(`[${name}] ${chunk}`));
  // An exit the bench did not ask for (a refused flag, a crash at start): waitForHttp fails at once with it.
  child.once('exit', (code, signal) => {
    if (!child.killed && code !== 0)
      unexpectedExits.emit('exit', `${name} exited (${signal ?? `code ${code}`}) before the bench stopped it`);
  });
  children.push(child);
  return child;
}

/** Servers the bench started that exited unasked (see start). */
const unexpectedExits = new EventEmitter();

/** scripts/wait.js's waitForHttp, failing as soon as a server the bench started exits unasked. */
async function waitForHttp(url, timeoutMs) {
  let onExit;
  const exited = new Promise((_resolve, reject) => {
    onExit = (what) => reject(new Error(what));
    unexpectedExits.on('exit', onExit);
  });
  try {
    await Promise.race([waitForUrl(url, timeoutMs), exited]);
  } finally {
    unexpectedExits.off('exit', onExit);
  }
}

/**
 * Starts a built app (PETS_MAIN, GATEWAY_MAIN) on the server core (or `core`) with the Node flags every start of
 * this repository gives it (scripts/app-node-options.js), plus BENCH_APP_NODE_OPTIONS, which wins; `nodeArgs` go
 * on the command line before the script (flags NODE_OPTIONS refuses, such as the profiler's). Its metrics port
 * is one the OS picks unless `env` names one: the defaults may be taken (another app, another run).
 */
function startApp(children, name, main, env, { core = SERVER_CORE, nodeArgs = benchNodeArgs(), stdout = false } = {}) {
  const defaults = {
    NODE_OPTIONS: appNodeOptions(process.env.BENCH_APP_NODE_OPTIONS),
    METRICS_PORT: '0',
    PETS_METRICS_PORT: '0',
  };
  return start(children, name, process.execPath, [...nodeArgs, main], { ...defaults, ...env }, core, { stdout });
}

/** The lines bench/loop-probe.js wrote to `file` (one JSON object a second); [] when it wrote none. */
function probeLines(file) {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line));
}

/** BENCH_NODE_ARGS: flags NODE_OPTIONS refuses (--cpu-prof ...), given to every app a bench starts. */
function benchNodeArgs() {
  return (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean);
}

/**
 * Moves the machine's PostgreSQL and Redis (every process and thread of theirs, found by name) to `core` for the
 * rest of this run, and puts them back where they were at exit. For the scenarios that measure the servers' tail:
 * on a two-core machine, PostgreSQL and Redis otherwise share the servers' core and their work lands in its queue.
 * Backends PostgreSQL forks later inherit its postmaster's core. Returns what was moved ([] without taskset or
 * the right to move them).
 */
function pinServices(core) {
  if (!hasTaskset) return [];
  const pids = ['postgres', 'redis-server'].flatMap((name) => {
    const found = spawnSync('pgrep', ['-x', name]);
    return found.status === 0
      ? found.stdout
          .toString()
          .trim()
          .split('\n')
          .map((line) => ({ name, pid: line.trim() }))
      : [];
  });
  const moved = [];
  for (const one of pids) {
    const mask = spawnSync('taskset', ['-p', one.pid])
      .stdout?.toString()
      .match(/mask: ([0-9a-f]+)/)?.[1];
    if (!mask) continue;
    if (spawnSync('taskset', ['-a', '-p', '-c', String(core), one.pid]).status === 0) moved.push({ ...one, mask });
  }
  process.on('exit', () => {
    for (const one of moved) spawnSync('taskset', ['-a', '-p', one.mask, one.pid]);
  });
  return moved;
}

/** Sends `signal` to every child still running (at exit, or when a run ends). */
function stopAll(children, signal = 'SIGTERM') {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill(signal);
}

/**
 * Runs another bench script (`node <script> <args>`, its output on this terminal) as one of `children`, so that a
 * signal to this bench stops it too (it cleans up after itself: stopOnExit); resolves with its exit code.
 */
function runScript(children, script, args) {
  const child = spawn(process.execPath, [script, ...args], { cwd: ROOT, stdio: 'inherit', env: process.env });
  children.push(child);
  return new Promise((resolve) => child.once('exit', (code) => resolve(code)));
}

/** Stops one child and waits until it has exited (at most `timeoutMs`), e.g. to start it again on its port. */
async function stopAndWait(child, timeoutMs = 10_000) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await Promise.race([exited, sleep(timeoutMs)]);
}

/** Stops every child still running and waits until all have exited. */
function stopAllAndWait(children) {
  return Promise.all(children.map((child) => stopAndWait(child)));
}

/** The databases of the run (createRunDatabase) not dropped yet: a SIGINT or SIGTERM drops them before exiting. */
const runDatabases = new Set();
const EXIT_ON_SIGNAL = { SIGINT: 130, SIGTERM: 143 };

/**
 * Stops the children when the bench exits, however it exits. On SIGINT or SIGTERM (Ctrl-C, or a process manager
 * signalling npm's pid: every bench script is `exec`ed) it stops them and waits for them (10 s at most each), drops
 * the run's databases, then exits 130 or 143; a second signal meanwhile changes nothing.
 */
function stopOnExit(children, signal = 'SIGTERM') {
  process.on('exit', () => stopAll(children, signal));
  let stopping = false;
  for (const name of Object.keys(EXIT_ON_SIGNAL)) {
    process.on(name, () => {
      if (stopping) return;
      stopping = true;
      stopAll(children, signal);
      Promise.all(children.map((child) => stopAndWait(child)))
        .then(() => Promise.all([...runDatabases].map((database) => database.drop().catch(() => undefined))))
        .finally(() => process.exit(EXIT_ON_SIGNAL[name]));
    });
  }
}

/**
 * Runs a bench's main(): the children are stopped at exit however it ends (Ctrl-C too); the exit code is
 * process.exitCode (0 unless main set it) when main resolves, 1 with the error printed when it fails.
 */
function runBench(main, children, signal = 'SIGTERM') {
  stopOnExit(children, signal);
  main().then(
    () => process.exit(process.exitCode ?? 0),
    (error) => {
      console.error(error);
      process.exit(1);
    },
  );
}

/** A key minted through a gateway's admin API by the keys CLI (`flags`: its `create` options); the CLI prints it last. */
function mintKey(admin, flags) {
  return sh(`node scripts/keys.js create ${flags}`, { ADMIN_URL: admin.url, ADMIN_TOKEN: admin.token })
    .trim()
    .split('\n')
    .pop();
}

function childPids(pid) {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

function statusField(pid, field) {
  try {
    const match = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) / 1024 : 0;
  } catch {
    return 0; // gone
  }
}

/** Peak resident set (VmHWM) of a process and its children (the largest of them), in MB. */
function peakRssMb(pid) {
  return Math.round(Math.max(...[pid, ...childPids(pid)].map((p) => statusField(p, 'VmHWM'))));
}

/** Current resident set (VmRSS) of one process, in MB. */
function rssMb(pid) {
  return Math.round(statusField(pid, 'VmRSS'));
}

/**
 * CPU time (user + system, /proc/<pid>/stat fields 14 and 15) of a process and its direct children, in
 * microseconds. For nginx, the master's pid: its worker is a child.
 */
function cpuMicros(pid) {
  let ticks = 0;
  for (const p of [pid, ...childPids(pid)]) {
    try {
      const stat = readFileSync(`/proc/${p}/stat`, 'utf8');
      // The command name (field 2) is in parentheses and may hold spaces: count fields after the last ')'.
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      ticks += Number(fields[14 - 3]) + Number(fields[15 - 3]);
    } catch {
      /* gone */
    }
  }
  return (ticks * 1e6) / CLOCK_TICKS;
}

/** The command line of a process, as one string ('' once it has gone). */
function commandLine(pid) {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ');
  } catch {
    return '';
  }
}

/** Builds (`npm run -s build`, or only the Nest apps named in `apps`) unless the bench was given --no-build. */
function buildUnlessSkipped(args, apps) {
  if (args.includes('--no-build')) return;
  console.log('building...');
  sh(apps ? apps.map((app) => `npx nest build ${app}`).join(' && ') : 'npm run -s build');
}

const runIds = new Set();
/** Deletes the Redis keys of every run id (runId) of this process, synchronously (it runs at exit). */
function forgetRunKeys() {
  for (const run of runIds)
    spawnSync(
      'sh',
      ['-c', `redis-cli -u "$1" --scan --pattern "$2:*" | xargs -r -n 500 redis-cli -u "$1" del`, 'sh', REDIS_URL, run],
      {
        stdio: 'ignore',
      },
    );
  runIds.clear();
}

/**
 * The run's id, `<name>_<ms>`: the prefix of its databases' names and of its Redis keys (`<id>:`), which are
 * deleted when the process exits, however it exits (a run left ~10,000 keys a bench before).
 */
function runId(name) {
  const run = `${name}_${Date.now()}`;
  if (runIds.size === 0) process.on('exit', forgetRunKeys);
  runIds.add(run);
  return run;
}

/**
 * A database of the run's own on PG_SERVER (scripts/throwaway-database.js: `<prefix>_<pid>_<hex>`);
 * `drop()` removes it, forcing out any connection left.
 */
async function createRunDatabase(prefix) {
  const database = await createThrowawayDatabase(PG_SERVER, prefix);
  runDatabases.add(database);
  return {
    ...database,
    drop: async () => {
      await database.drop();
      runDatabases.delete(database);
    },
  };
}

/**
 * Runs `run(database)` on a database of the run's own (createRunDatabase), then, whatever happened, stops the
 * children (waiting for them, so that none is still connected) and drops it.
 */
async function withRunDatabase(prefix, children, run) {
  const database = await createRunDatabase(prefix);
  try {
    return await run(database);
  } finally {
    await stopAllAndWait(children);
    await database.drop();
  }
}

/**
 * The pets schema, by the service's own migration script, then `availablePets` available pets spread over the
 * ten seeded categories.
 */
async function preparePetsDatabase(databaseUrl, availablePets = 0) {
  sh('node dist/apps/pets/apps/pets/src/database/migrate.js', { DATABASE_URL: databaseUrl });
  if (availablePets === 0) return;
  const { Client } = require('pg');
  const db = new Client({ connectionString: databaseUrl });
  await db.connect();
  try {
    await db.query(
      `INSERT INTO pets (name, category_id, status) SELECT 'Pet ' || i, 1 + i % 10, 'available' FROM generate_series(1, $1) AS i`,
      [availablePets],
    );
  } finally {
    await db.end();
  }
}

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
};

/** The q-quantile (0 < q <= 1) of `values` by nearest rank (the smallest value with at least q of them at or below it); NaN when empty. */
const percentile = (values, q) => {
  if (values.length === 0) return NaN;
  const sorted = Array.from(values).sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];
};

/** Writes `report` as bench/results/<file> (not committed). */
function writeResults(file, report) {
  mkdirSync(path.join(__dirname, 'results'), { recursive: true });
  writeFileSync(path.join(__dirname, 'results', file), `${JSON.stringify(report, null, 2)}\n`);
}

/**
 * A stand-in for an OpenTelemetry collector: an OTLP/HTTP receiver on a free local port that accepts every export
 * and keeps nothing but the count of bytes it was sent (`receiver.exportedBytes`).
 */
async function startDroppingOtlpReceiver() {
  const { createServer } = require('node:http');
  const receiver = createServer((request, response) => {
    request.on('data', (chunk) => (receiver.exportedBytes += chunk.length));
    request.on('end', () => response.writeHead(200, { 'content-type': 'application/x-protobuf' }).end());
  });
  receiver.exportedBytes = 0;
  await new Promise((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  return receiver;
}

module.exports = {
  ROOT,
  pinServices,
  SERVER_CORE,
  LOAD_CORE,
  PG_SERVER,
  REDIS_URL,
  PETS_MAIN,
  GATEWAY_MAIN,
  CLOCK_TICKS,
  hasTaskset,
  sh,
  option,
  sleep,
  pinLoadGenerator,
  runScript,
  ensureLocalServices,
  buildUnlessSkipped,
  createRunDatabase,
  withRunDatabase,
  runId,
  preparePetsDatabase,
  start,
  startApp,
  stopAll,
  stopAndWait,
  stopAllAndWait,
  stopOnExit,
  runBench,
  until,
  waitForHttp,
  freePort,
  mintKey,
  startDroppingOtlpReceiver,
  percentile,
  childPids,
  peakRssMb,
  probeLines,
  rssMb,
  cpuMicros,
  commandLine,
  median,
  writeResults,
};
