#!/usr/bin/env node
/**
 * `npm start`: runs the built apps side by side (the pets service first, then the gateway) on their embedded
 * defaults, prefixes their output, and stops both when either exits or on Ctrl-C / SIGTERM.
 * `node scripts/start.js pets` or `... gateway` runs one of them.
 * Without DATABASE_URL and GATEWAY_DATABASE_URL, one embedded PGlite (PGLITE_DATA_DIR, .data/pglite), hosted here
 * and served over the wire protocol, holds both apps' tables (the gateway's in its own schema): one database
 * engine in memory, not one per app.
 */
const { spawn } = require('node:child_process');
const path = require('node:path');

const ENTRY = {
  pets: path.join(__dirname, '..', 'dist/apps/pets/apps/pets/src/main.js'),
  gateway: path.join(__dirname, '..', 'dist/apps/gateway/apps/gateway/src/main.js'),
};

const wanted = process.argv.slice(2);
const names = wanted.length ? wanted : Object.keys(ENTRY).filter((name) => require('node:fs').existsSync(ENTRY[name]));
for (const name of names) {
  if (!ENTRY[name]) {
    console.error(`Unknown app "${name}": expected one of ${Object.keys(ENTRY).join(', ')}`);
    process.exit(2);
  }
}

const children = new Map();
let stopping = false;

function prefixLines(name, stream, target) {
  let rest = '';
  stream.on('data', (chunk) => {
    const lines = (rest + chunk.toString()).split('\n');
    rest = lines.pop();
    for (const line of lines) target.write(`${name.padEnd(7)} | ${line}\n`);
  });
  stream.on('end', () => rest && target.write(`${name.padEnd(7)} | ${rest}\n`));
}

function stopAll(code) {
  if (stopping) return;
  stopping = true;
  for (const child of children.values()) child.kill('SIGTERM');
  setTimeout(() => process.exit(code), 10_000).unref();
  const wait = () => (children.size === 0 ? exit(code) : setTimeout(wait, 50));
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

async function main() {
  const databaseEnv = await startSharedDatabase();
  for (const name of names) {
    const child = spawn(process.execPath, [ENTRY[name]], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...databaseEnv } });
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
}

main().catch((error) => {
  console.error(`Cannot start the embedded database: ${error.message}`);
  exit(1);
});

process.on('SIGINT', () => stopAll(0));
process.on('SIGTERM', () => stopAll(0));
