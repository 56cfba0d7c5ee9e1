#!/usr/bin/env node
/**
 * `npm start`: builds (with --build, unless the last successful build was made from the same sources), then runs
 * the built apps side by side (the pets service first, then the gateway) on their embedded defaults, prefixes
 * their output, prints one "Ready" line once every app answers its readiness, and stops everything when either
 * app exits or on SIGINT / SIGTERM.
 * `node scripts/start.js pets` or `... gateway` runs one of them.
 *
 * Signals: npm runs a script under `sh -c`, which does not pass signals on, so package.json `exec`s this script:
 * a SIGTERM sent to npm reaches npm, then this process, which stops the build or the apps and exits when they have.
 * A signal sent to one app stops it, and its exit stops the other.
 *
 * Without DATABASE_URL and GATEWAY_DATABASE_URL, one embedded PGlite (PGLITE_DATA_DIR, .data/pglite), hosted here
 * and served over the wire protocol, holds both apps' tables (the gateway's in its own schema): one database
 * engine in memory, not one per app.
 */
const { spawn } = require('node:child_process');
const { existsSync } = require('node:fs');
const path = require('node:path');
const { appNodeOptions } = require('./app-node-options');
const { buildInputsFingerprint, buildIsCurrent, recordBuild } = require('./build-inputs');

const ROOT = path.join(__dirname, '..');
const ENTRY = {
  pets: path.join(ROOT, 'dist/apps/pets/apps/pets/src/main.js'),
  gateway: path.join(ROOT, 'dist/apps/gateway/apps/gateway/src/main.js'),
};

const args = process.argv.slice(2);
const build = args.includes('--build');
const wanted = args.filter((arg) => arg !== '--build');
for (const name of wanted) {
  if (!ENTRY[name]) {
    console.error(`Unknown app "${name}": expected one of ${Object.keys(ENTRY).join(', ')}`);
    process.exit(2);
  }
}

function appEnvironment(databaseEnv) {
  return { ...process.env, ...databaseEnv, NODE_OPTIONS: appNodeOptions() };
}

const children = new Map();
let stopping = false;
let exitCode = 0;

function prefixLines(name, stream, target) {
  let rest = '';
  stream.on('data', (chunk) => {
    const lines = (rest + chunk.toString()).split('\n');
    rest = lines.pop();
    for (const line of lines) target.write(`${name.padEnd(7)} | ${line}\n`);
  });
  stream.on('end', () => rest && target.write(`${name.padEnd(7)} | ${rest}\n`));
}

/** Stops every child (the build's whole process group, or the apps) and exits once they have all gone. */
function stopAll(code) {
  exitCode = code;
  if (stopping) return;
  stopping = true;
  for (const child of children.values()) {
    try {
      // The build runs in a process group of its own (npm, sh, nest, tsc): signal all of it.
      if (child.group) process.kill(-child.pid, 'SIGTERM');
      else child.kill('SIGTERM');
    } catch {
      /* already gone */
    }
  }
  // Past the apps' own grace period (SHUTDOWN_GRACE_MS, 10 s by default), force them.
  setTimeout(() => {
    for (const child of children.values()) child.kill('SIGKILL');
    exit(code || 1);
  }, 15_000).unref();
  const wait = () => (children.size === 0 ? exit(exitCode) : setTimeout(wait, 50));
  wait();
}

/** Both apps' embedded database, or undefined when servers are configured. */
let sharedDatabase;

async function startSharedDatabase() {
  if (process.env.DATABASE_URL || process.env.GATEWAY_DATABASE_URL) return {};
  const { startSharedPglite } = require(path.join(__dirname, 'shared-pglite.js'));
  sharedDatabase = await startSharedPglite(process.env.PGLITE_DATA_DIR || '.data/pglite');
  return { DATABASE_URL: sharedDatabase.url, DB_MIGRATE_ON_START: 'true', DB_POOL_SIZE: '4', GATEWAY_DATABASE_URL: sharedDatabase.url };
}

function exit(code) {
  if (!sharedDatabase) process.exit(code);
  sharedDatabase.close().finally(() => process.exit(code));
}

process.on('SIGINT', () => stopAll(0));
process.on('SIGTERM', () => stopAll(0));

/** What the build writes (the stamp aside): a missing output means a build to run. */
const BUILD_OUTPUTS = [...Object.values(ENTRY), path.join(ROOT, 'libs/client/dist/index.js')];

/** `npm run build`, skipped when dist/ is current (FORCE_BUILD=true builds anyway). */
async function buildIfChanged() {
  const fingerprint = buildInputsFingerprint(ROOT);
  if (process.env.FORCE_BUILD !== 'true' && buildIsCurrent(ROOT, fingerprint, BUILD_OUTPUTS)) {
    console.log('build   | dist/ is up to date with apps/, libs/ and the configuration: not rebuilt (FORCE_BUILD=true to rebuild)');
    return;
  }
  await runBuild();
  if (stopping) return;
  // Fingerprinted before the build: a file edited while it ran makes the next start build again.
  recordBuild(ROOT, fingerprint);
}

function runBuild() {
  return new Promise((resolve) => {
    const child = spawn('npm', ['run', '-s', 'build'], { cwd: ROOT, stdio: 'inherit', detached: true });
    child.group = true;
    children.set('build', child);
    child.on('exit', (code, signal) => {
      children.delete('build');
      if (stopping) return;
      if (code !== 0) {
        console.error(`build failed (${signal ?? code})`);
        stopAll(1);
        return;
      }
      resolve();
    });
  });
}

function readinessUrl(name) {
  const env = process.env;
  if (name === 'pets') return `http://127.0.0.1:${env.PETS_PORT || 3001}/health/ready`;
  const host = !env.HOST || env.HOST === '0.0.0.0' || env.HOST === '::' ? '127.0.0.1' : env.HOST;
  return `http://${host.includes(':') ? `[${host}]` : host}:${env.PORT || 3000}/health/ready`;
}

async function waitUntilReady(names) {
  for (const name of names) {
    while (!stopping) {
      const ok = await fetch(readinessUrl(name), { signal: globalThis.AbortSignal.timeout(2000) }).then((r) => r.ok, () => false);
      if (ok) break;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
  if (stopping) return;
  const port = process.env.PORT || 3000;
  const parts = [];
  if (names.includes('gateway')) {
    parts.push(`gateway on http://localhost:${port}/v1, Swagger UI on http://localhost:${port}/docs`);
    parts.push(`admin API (private) on http://127.0.0.1:${process.env.ADMIN_PORT || 3002}/docs`);
  }
  if (names.includes('pets')) parts.push(`pets service on http://127.0.0.1:${process.env.PETS_PORT || 3001}`);
  process.stdout.write(`\nReady: ${parts.join('; ')}\n\n`);
}

async function main() {
  if (build) await buildIfChanged();
  if (stopping) return;
  const names = wanted.length ? wanted : Object.keys(ENTRY).filter((name) => existsSync(ENTRY[name]));
  let databaseEnv;
  try {
    databaseEnv = await startSharedDatabase();
  } catch (error) {
    console.error(`Cannot start the embedded database: ${error.message}`);
    exit(1);
    return;
  }
  if (stopping) return;
  for (const name of names) {
    const child = spawn(process.execPath, [ENTRY[name]], { stdio: ['ignore', 'pipe', 'pipe'], env: appEnvironment(databaseEnv) });
    children.set(name, child);
    prefixLines(name, child.stdout, process.stdout);
    prefixLines(name, child.stderr, process.stderr);
    child.on('exit', (code, signal) => {
      children.delete(name);
      if (!stopping) {
        console.error(`${name} exited (${signal ?? code}); stopping the others.`);
        stopAll(code || 1);
      }
    });
  }
  await waitUntilReady(names);
}

main().catch((error) => {
  console.error(error);
  stopAll(1);
});
