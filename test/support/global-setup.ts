import { mkdtempSync, writeFileSync } from 'node:fs';
import Module from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { recordDataFolder } from './data-folder';

const ROOT = join(__dirname, '../..');

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
  const { FIXTURES_DIR_VARIABLE, snapshotFile } = await import('./fixtures');
  const { makePgliteSnapshots, makeTemplateDatabases } = await import('./make-fixtures');
  // Workers are started after this, with this environment: they find the dumps there.
  const dir = mkdtempSync(join(tmpdir(), 'petstore-test-fixtures-'));
  process.env[FIXTURES_DIR_VARIABLE] = dir;
  const made = await makePgliteSnapshots((fixture, dump) => writeFileSync(snapshotFile(dir, fixture), dump));
  const templates = process.env.DATABASE_URL
    ? await makeTemplateDatabases(process.env.DATABASE_URL, (fixture, name) =>
        writeFileSync(join(dir, `${fixture}.template`), name),
      )
    : [];
  process.stderr.write(
    `\nfixtures made once in ${Math.round(performance.now() - started)} ms: PGlite snapshots ${made.join(', ')}` +
      `${templates.length ? `; template databases ${templates.join(', ')}` : ''} (${dir})\n`,
  );
}
