import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { seedMemoryDataDir } from '@app/database';

/**
 * Databases made once per run (test/support/global-setup.ts) and copied per test file, instead of an initdb in
 * WebAssembly (2-8 s) and the migrations for every file:
 *
 * - embedded: a PGlite data directory per schema, dumped once (`dumpDataDir`) into TEST_FIXTURES_DIR and loaded
 *   per file (`loadDataDir`, under a second);
 * - PostgreSQL (DATABASE_URL): a template database per schema, migrated once, copied per file with
 *   `CREATE DATABASE … TEMPLATE` (scripts/throwaway-database.js).
 *
 * `empty` is a fresh cluster (for the portal's and the console's databases, which migrate their own schema),
 * `pets` and `gateway` have those apps' migrations applied. Without the global set-up (a config that has none)
 * the helpers fall back to a fresh database and the migrations, as before.
 */
export type Fixture = 'empty' | 'pets' | 'gateway';
export const FIXTURES: readonly Fixture[] = ['empty', 'pets', 'gateway'];

/** Where the global set-up leaves the dumps and names the templates (inherited by Jest's workers). */
export const FIXTURES_DIR_VARIABLE = 'TEST_FIXTURES_DIR';

export function snapshotFile(dir: string, fixture: Fixture): string {
  return join(dir, `${fixture}.tgz`);
}

const snapshots = new Map<Fixture, Blob | undefined>();

/** The dumped data directory of `fixture`, read once per test file; undefined without the global set-up. */
export function pgliteSnapshot(fixture: Fixture): Blob | undefined {
  if (!snapshots.has(fixture)) {
    const dir = process.env[FIXTURES_DIR_VARIABLE];
    const file = dir && snapshotFile(dir, fixture);
    snapshots.set(
      fixture,
      file && existsSync(file) ? new Blob([readFileSync(file)], { type: 'application/x-gzip' }) : undefined,
    );
  }
  return snapshots.get(fixture);
}

/** An in-memory PGlite holding `fixture`: loaded from its dump, or (without one) a fresh initdb. */
export function newPglite(fixture: Fixture): Promise<PGlite> {
  const snapshot = pgliteSnapshot(fixture);
  return snapshot ? PGlite.create({ dataDir: 'memory://', loadDataDir: snapshot }) : PGlite.create('memory://');
}

/**
 * The data directory an app under test opens for `fixture` (PETS' pgliteDataDir, GATEWAY_PGLITE_DATA_DIR): an
 * in-memory database that starts as a copy of the dump, or (without one) a fresh `memory://` database.
 */
export function pgliteDataDir(fixture: Fixture): string {
  const snapshot = pgliteSnapshot(fixture);
  if (!snapshot) return 'memory://';
  const dataDir = `memory://${fixture}-fixture`;
  seedMemoryDataDir(dataDir, snapshot);
  return dataDir;
}

/** The template database of `fixture` on DATABASE_URL's server, when the global set-up made one. */
export function templateDatabase(fixture: Fixture): string | undefined {
  const dir = process.env[FIXTURES_DIR_VARIABLE];
  const file = dir && join(dir, `${fixture}.template`);
  return file && existsSync(file) ? readFileSync(file, 'utf8').trim() : undefined;
}
