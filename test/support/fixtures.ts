import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { seedMemoryDataDir } from '@app/database';
import { Fixture, FIXTURES_DIR_VARIABLE, snapshotFile } from './fixture-files';

export { FIXTURES, FIXTURES_DIR_VARIABLE, snapshotFile } from './fixture-files';
export type { Fixture } from './fixture-files';

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

/** The worker's pool (test/support/database-pool-environment.ts), when the file runs in that environment. */
interface Pool {
  acquire(fixture: Fixture): Promise<{ url: string; release(): Promise<void> }>;
}

/**
 * On the embedded engine, a database of `fixture` lent by the worker's pool (test/support/worker-database-pool.ts:
 * already started, reset to the fixture after each use), served on a loopback port: its `postgres://` URL and
 * how to hand it back. Undefined with DATABASE_URL (a template copy serves) or outside the pool's environment.
 */
export function pooledDatabase(fixture: Fixture): Promise<{ url: string; release(): Promise<void> }> | undefined {
  if (process.env.DATABASE_URL) return undefined;
  return workerPool()?.acquire(fixture);
}

/** Whether pooledDatabase lends databases in this file. */
export function poolAvailable(): boolean {
  return !process.env.DATABASE_URL && workerPool() !== undefined;
}

function workerPool(): Pool | undefined {
  return (globalThis as { __workerDatabasePool?: Pool }).__workerDatabasePool;
}
