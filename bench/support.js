/**
 * Helpers shared by bench/run.js and bench/soak.js: starting pinned servers, waiting for them, and reading a
 * process's memory and CPU time from /proc (Linux).
 */
const { spawn, spawnSync, execSync } = require('node:child_process');
const { readFileSync } = require('node:fs');
const path = require('node:path');

const ROOT = path.join(__dirname, '..');
const SERVER_CORE = '0';
const LOAD_CORE = '1';
const hasTaskset = spawnSync('taskset', ['-V']).status === 0;
/** Clock ticks per second of utime/stime in /proc/<pid>/stat (100 on nearly every Linux). */
const CLOCK_TICKS = (() => {
  const result = spawnSync('getconf', ['CLK_TCK']);
  return result.status === 0 ? Number(result.stdout.toString().trim()) || 100 : 100;
})();

function sh(command, env = {}) {
  return execSync(command, { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] }).toString();
}

/**
 * Re-runs the calling script pinned to the load core, once (the servers it starts are pinned to the server core).
 * Returns only in the pinned process (or where taskset is missing).
 */
function pinLoadGenerator(script, args) {
  if (!hasTaskset || process.env.BENCH_PINNED) return;
  const child = spawnSync('taskset', ['-c', LOAD_CORE, process.execPath, script, ...args], {
    stdio: 'inherit',
    env: { ...process.env, BENCH_PINNED: '1' },
  });
  process.exit(child.status ?? 1);
}

function ensureServices() {
  if (spawnSync('pg_isready', ['-h', '127.0.0.1', '-p', '5432', '-q']).status !== 0) {
    sh('pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql)" main start');
  }
  if (spawnSync('redis-cli', ['-h', '127.0.0.1', 'ping']).status !== 0) {
    sh('redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no');
  }
}

/**
 * Starts a server on the server core. `taskset` execs the command, so the child's pid is the server itself.
 * The child is added to `children` (to be stopped at exit); its stderr is prefixed with `name`.
 */
function start(children, name, command, commandArgs, env) {
  const full = hasTaskset ? ['taskset', ['-c', SERVER_CORE, command, ...commandArgs]] : [command, commandArgs];
  const child = spawn(full[0], full[1], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
  child.stderr.on('data', (chunk) => process.stderr.write(`[${name}] ${chunk}`));
  children.push(child);
  return child;
}

async function waitForHttp(url, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    try {
      const response = await fetch(url);
      if (response.status < 500) return;
    } catch {
      /* not up yet */
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`${url} did not come up`);
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

/** Builds both apps (`npm run -s build`) unless the bench was given --no-build. */
function buildUnlessSkipped(args) {
  if (args.includes('--no-build')) return;
  console.log('building...');
  sh('npm run -s build');
}

/**
 * A database of the run's own on the server of `pgBase` (a URL); `drop()` removes it (forcing out any
 * connection left) and closes the admin connection.
 */
async function createRunDatabase(pgBase, name) {
  const { Client } = require('pg');
  const admin = new Client({ connectionString: pgBase });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  const url = new URL(pgBase);
  url.pathname = `/${name}`;
  const drop = async () => {
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => undefined);
    await admin.end();
  };
  return { url: url.toString(), drop };
}

module.exports = {
  ROOT,
  buildUnlessSkipped,
  createRunDatabase,
  SERVER_CORE,
  LOAD_CORE,
  CLOCK_TICKS,
  hasTaskset,
  sh,
  pinLoadGenerator,
  ensureServices,
  start,
  waitForHttp,
  childPids,
  peakRssMb,
  rssMb,
  cpuMicros,
  commandLine,
};
