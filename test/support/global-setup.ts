import { createHash } from 'node:crypto';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import Module from 'node:module';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { recordDataFolder } from './data-folder';
import { FIXTURES, snapshotFile } from './fixture-files';

const ROOT = join(__dirname, '../..');

/** What the PGlite snapshots are made from: a change to any of these makes them again. */
const SNAPSHOT_INPUTS = [
  'apps/pets/src/database',
  'apps/gateway/src/database',
  'libs/database/src',
  'test/support/make-fixtures.ts',
  'node_modules/@electric-sql/pglite/package.json',
];

function filesUnder(path: string): string[] {
  const full = join(ROOT, path);
  if (!statSync(full).isDirectory()) return [path];
  return readdirSync(full, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && !entry.name.endsWith('.spec.ts'))
    .map((entry) => relative(ROOT, join(entry.parentPath, entry.name)));
}

/**
 * The snapshots' cache folder, named by a hash of their inputs: a run after the first finds them there instead of
 * running initdb and every migration again (7-10 s of the set-up, before any worker starts).
 */
function snapshotCache(): string {
  const hash = createHash('sha256');
  for (const file of SNAPSHOT_INPUTS.flatMap(filesUnder).sort())
    hash.update(file).update(readFileSync(join(ROOT, file)));
  return join(ROOT, 'node_modules/.cache/petstore-test-fixtures', hash.digest('hex').slice(0, 16));
}

/**
 * Jest's moduleNameMapper does not reach a global set-up (Node resolves its requires; Jest only transforms them):
 * the `@app/<lib>` aliases of jest.config.js and tsconfig.json, by hand.
 */
function resolveAliases(): void {
  const resolver = Module as unknown as { _resolveFilename: (request: string, ...rest: unknown[]) => string };
  const resolve = resolver._resolveFilename;
  resolver._resolveFilename = (request: string, ...rest: unknown[]) => {
    const alias = /^@app\/(contract|database|errors|platform|web)(\/.*)?$/.exec(request);
    return resolve(alias ? join(ROOT, 'libs', alias[1], 'src', alias[2] ?? '') : request, ...rest);
  };
}

/**
 * Once per run, before any worker starts (test/support/fixtures.ts says what for): the databases every test file
 * copies, and a fingerprint of the checkout's `.data/` that the teardown compares.
 */
export default async function globalSetup(): Promise<void> {
  const started = performance.now();
  resolveAliases();
  recordDataFolder();
  const { FIXTURES_DIR_VARIABLE } = await import('./fixtures');
  // Workers are started after this, with this environment: they find the dumps there.
  const dir = mkdtempSync(join(tmpdir(), 'petstore-test-fixtures-'));
  process.env[FIXTURES_DIR_VARIABLE] = dir;
  const cache = snapshotCache();
  let made: string[];
  if (FIXTURES.every((fixture) => existsSync(snapshotFile(cache, fixture)))) {
    for (const fixture of FIXTURES) copyFileSync(snapshotFile(cache, fixture), snapshotFile(dir, fixture));
    made = [`${FIXTURES.join(', ')} (from ${relative(ROOT, cache)})`];
  } else {
    const { makePgliteSnapshots } = await import('./make-fixtures');
    made = await makePgliteSnapshots((fixture, dump) => writeFileSync(snapshotFile(dir, fixture), dump));
    // Into the cache whole or not at all: a concurrent run sees either no folder or a complete one.
    const staging = `${cache}.${process.pid}`;
    mkdirSync(staging, { recursive: true });
    for (const fixture of FIXTURES) copyFileSync(snapshotFile(dir, fixture), snapshotFile(staging, fixture));
    try {
      renameSync(staging, cache);
    } catch {
      rmSync(staging, { recursive: true, force: true }); // another run put it there first
    }
    // Dumps of inputs that have changed since are never read again.
    const parent = join(cache, '..');
    for (const name of readdirSync(parent))
      if (join(parent, name) !== cache && /^[0-9a-f]{16}$/.test(name))
        rmSync(join(parent, name), { recursive: true, force: true });
  }
  const serverUrl = process.env.DATABASE_URL;
  const templates = serverUrl
    ? await (
        await import('./make-fixtures')
      ).makeTemplateDatabases(serverUrl, (fixture, name) => writeFileSync(join(dir, `${fixture}.template`), name))
    : [];
  process.stderr.write(
    `\nfixtures ready in ${Math.round(performance.now() - started)} ms: PGlite snapshots ${made.join(', ')}` +
      `${templates.length ? `; template databases ${templates.join(', ')}` : ''} (${dir})\n`,
  );
}
