#!/usr/bin/env node
/**
 * `npm start`: runs the built apps side by side (the pets service first, then the gateway) on their embedded
 * defaults, prefixes their output, and stops both when either exits or on Ctrl-C / SIGTERM.
 * `node scripts/start.js pets` or `... gateway` runs one of them.
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
  const wait = () => (children.size === 0 ? process.exit(code) : setTimeout(wait, 50));
  wait();
}

for (const name of names) {
  const child = spawn(process.execPath, [ENTRY[name]], { stdio: ['ignore', 'pipe', 'pipe'], env: process.env });
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

process.on('SIGINT', () => stopAll(0));
process.on('SIGTERM', () => stopAll(0));
