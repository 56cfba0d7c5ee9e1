/**
 * Whether `npm run build` has to run: the fingerprint of what it reads, and the stamp a successful build leaves.
 * Used by `npm start` (scripts/start.js), which skips the build when dist/ was built from the same sources.
 */
const { createHash } = require('node:crypto');
const { existsSync, readFileSync, readdirSync, statSync, writeFileSync } = require('node:fs');
const path = require('node:path');

/** What `npm run build` reads: the TypeScript under apps/ and libs/ (not specs), tsconfigs, nest-cli.json, the lockfile. */
const BUILD_INPUT_ROOTS = ['apps', 'libs'];
const BUILD_INPUT_FILES = ['package.json', 'package-lock.json', 'nest-cli.json', 'tsconfig.json'];
/** Written after a successful build, in dist/: the fingerprint of the inputs it was built from. */
const STAMP = path.join('dist', '.build-inputs');

/**
 * Path, size and modification time of every build input, hashed: a file changed, added, removed or restored from
 * another branch changes it (touching a file does too, which only costs a build). Reads directories, not files.
 */
function buildInputsFingerprint(root) {
  const hash = createHash('sha256');
  const visit = (relative) => {
    let stat;
    try {
      stat = statSync(path.join(root, relative));
    } catch {
      hash.update(`${relative}\0missing\n`);
      return;
    }
    if (stat.isDirectory()) {
      for (const entry of readdirSync(path.join(root, relative)).sort()) {
        if (entry === 'dist' || entry === 'node_modules') continue; // outputs and installed packages
        if (entry.endsWith('.spec.ts') || entry.endsWith('.e2e-spec.ts')) continue; // tests: the build excludes them
        visit(path.join(relative, entry));
      }
      return;
    }
    hash.update(`${relative}\0${stat.size}\0${stat.mtimeMs}\n`);
  };
  for (const file of BUILD_INPUT_FILES) visit(file);
  for (const directory of BUILD_INPUT_ROOTS) visit(directory);
  return hash.digest('hex');
}

/** Whether every output exists and the last successful build was made from inputs with this fingerprint. */
function buildIsCurrent(root, fingerprint, outputs) {
  if (!outputs.every((output) => existsSync(path.resolve(root, output)))) return false;
  try {
    return readFileSync(path.join(root, STAMP), 'utf8').trim() === fingerprint;
  } catch {
    return false;
  }
}

/** Records a successful build made from inputs with this fingerprint. */
function recordBuild(root, fingerprint) {
  writeFileSync(path.join(root, STAMP), `${fingerprint}\n`);
}

module.exports = { buildInputsFingerprint, buildIsCurrent, recordBuild };
