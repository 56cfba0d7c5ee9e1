#!/usr/bin/env node
/**
 * The identity-provider image's node_modules (Dockerfile, stage identity-provider): oidc-provider and jose with the
 * packages they load, copied out of the build stage's full install (the lock file's versions) into `target`, so the
 * stand-in's image carries neither the apps' nor the dev tools' packages. Resolution as Node's: a dependency is looked
 * for in the requiring package's node_modules, then in each folder above.
 *   node docker/identity-provider-modules.js /idp/node_modules
 */
const { cpSync, existsSync, readFileSync, realpathSync } = require('node:fs');
const path = require('node:path');

const ROOTS = ['oidc-provider', 'jose'];
const source = path.resolve('node_modules');
const target = path.resolve(process.argv[2] ?? 'idp/node_modules');

/** The folder `name` resolves to from the package in `from`, or undefined (an optional dependency not installed). */
function resolveFrom(from, name) {
  for (let dir = from; dir.startsWith(source) || dir === path.dirname(source); dir = path.dirname(dir)) {
    const candidate = path.join(dir, path.basename(dir) === 'node_modules' ? '' : 'node_modules', name);
    if (existsSync(path.join(candidate, 'package.json'))) return candidate;
    if (dir === path.dirname(source)) break;
  }
  return undefined;
}

const copied = new Set();
const pending = ROOTS.map((name) => resolveFrom(path.dirname(source), name));
while (pending.length > 0) {
  const dir = pending.pop();
  if (!dir || copied.has(realpathSync(dir))) continue;
  copied.add(realpathSync(dir));
  cpSync(dir, path.join(target, path.relative(source, dir)), { recursive: true, dereference: true });
  const manifest = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8'));
  for (const name of Object.keys({ ...manifest.dependencies, ...manifest.optionalDependencies }))
    pending.push(resolveFrom(dir, name));
}
console.log(`identity provider: ${copied.size} packages copied to ${target}`);
