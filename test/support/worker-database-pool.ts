import { existsSync, readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { PGlite } from '@electric-sql/pglite';
import { PgliteWireServer } from '../../libs/database/src/pglite-wire-server';
import { Fixture, FIXTURES_DIR_VARIABLE, snapshotFile } from './fixture-files';

/** A database lent to one test file: its address for the apps (a `postgres://` URL), and how to hand it back. */
export interface PooledDatabase {
  url: string;
  release(): Promise<void>;
}

/**
 * PostgreSQL leaves its alarm timer armed when a timeout it no longer needs is disabled (cheaper than a system
 * call), and PGlite's setitimer is a setTimeout: a kept database holds the worker's event loop for up to ten
 * seconds, and Jest force-exits the worker ("failed to exit gracefully"). Those timers, and only those, are
 * unref'd here; the ones of each test file's own databases die with the file's sandbox as before.
 */
function unrefPostgresAlarms(): void {
  const setTimer = globalThis.setTimeout;
  const wrapped = ((callback: (...args: unknown[]) => void, delay?: number, ...args: unknown[]) => {
    const timer = setTimer(callback, delay, ...args);
    if (typeof callback === 'function' && callback.toString().includes('__emscripten_timeout')) timer.unref();
    return timer;
  }) as typeof setTimeout;
  Object.assign(wrapped, { [promisify.custom]: (setTimer as unknown as Record<symbol, unknown>)[promisify.custom] });
  globalThis.setTimeout = wrapped;
}
unrefPostgresAlarms();

/** Tables and migrations as a fixture was when it was loaded: what a reset must give back. */
interface Shape {
  tables: string;
  migrations: number;
}

interface Instance {
  fixture: Fixture;
  db: PGlite;
  shape: Shape;
  server?: PgliteWireServer;
}

/** Every table of the user's schemas, and the rows of the migration tables (how far the schema is migrated). */
async function shapeOf(db: PGlite): Promise<Shape> {
  const tables = await db.query<{ name: string }>(
    `SELECT schemaname || '.' || tablename AS name FROM pg_tables
      WHERE schemaname NOT IN ('pg_catalog', 'information_schema') ORDER BY 1`,
  );
  let migrations = 0;
  for (const { name } of tables.rows.filter((row) => row.name.endsWith('.migrations'))) {
    const count = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${name}`);
    migrations += count.rows[0].n;
  }
  return { tables: tables.rows.map((row) => row.name).join(','), migrations };
}

/**
 * On the embedded engine, PGlite databases kept for the life of a Jest worker and lent to one test file after
 * another, instead of a PGlite loaded from its dump for each database of each file (2-4 s of WebAssembly
 * start-up each on two busy cores, the larger part of an e2e file's set-up).
 *
 * A database goes back fresh: for `pets` and `gateway`, every table but the migrations' emptied (`TRUNCATE …
 * RESTART IDENTITY`), for `empty` every schema of the user's dropped; then `DISCARD ALL` (PGlite is one session:
 * prepared statements, LISTEN, advisory locks and settings are shared by every connection). A database whose
 * tables or migrations no longer match its fixture after that (a test reverted a migration) is closed, never
 * lent again. Each lease has a wire server of its own (PgliteWireServer, as the apps' embedded databases and the
 * shared test databases use), closed on release so that a client the test left connected is cut off.
 */
/**
 * Databases kept idle per fixture. Each PGlite holds ~256 MB (its 128 MB WebAssembly memory is the least it
 * takes): a worker that kept every database its busiest file needed held 6 at the end of a run, 3 GB in all, and
 * the kernel's teardown of that took longer than the 500 ms Jest waits for a worker to exit ("a worker process has
 * failed to exit gracefully"). A file that needs a second one of a kind loads it from the dump (0.3-0.5 s).
 */
const KEPT_PER_FIXTURE = 1;

export class WorkerDatabasePool {
  private readonly idle = new Map<Fixture, Instance[]>();
  private readonly leased = new Set<Instance>();
  private snapshots = new Map<Fixture, Blob>();

  /**
   * Whether the run's global set-up left the fixtures' dumps (without them, the helpers do as before), and the
   * pool is not switched off (TEST_DATABASE_POOL=off: every database loaded from its dump, as before the pool).
   */
  available(): boolean {
    if (process.env.TEST_DATABASE_POOL === 'off') return false;
    const dir = process.env[FIXTURES_DIR_VARIABLE];
    return dir !== undefined && existsSync(snapshotFile(dir, 'empty'));
  }

  async acquire(fixture: Fixture): Promise<PooledDatabase> {
    const instance = this.idle.get(fixture)?.pop() ?? (await this.create(fixture));
    this.leased.add(instance);
    const server = new PgliteWireServer(instance.db);
    instance.server = server;
    const address = await server.listen(0, '127.0.0.1');
    let released: Promise<void> | undefined;
    return {
      url: `postgres://postgres@${address}/postgres`,
      release: () => (released ??= this.giveBack(instance)),
    };
  }

  /** After a test file: whatever it did not release (a test that failed before its own clean-up). */
  async reclaimAll(): Promise<void> {
    await Promise.all([...this.leased].map((instance) => this.giveBack(instance)));
  }

  private async create(fixture: Fixture): Promise<Instance> {
    const db = await PGlite.create({
      dataDir: 'memory://',
      loadDataDir: this.snapshot(fixture),
    });
    return { fixture, db, shape: await shapeOf(db) };
  }

  private snapshot(fixture: Fixture): Blob {
    let blob = this.snapshots.get(fixture);
    if (!blob) {
      const file = snapshotFile(process.env[FIXTURES_DIR_VARIABLE]!, fixture);
      blob = new Blob([readFileSync(file)], { type: 'application/x-gzip' });
      this.snapshots.set(fixture, blob);
    }
    return blob;
  }

  private async giveBack(instance: Instance): Promise<void> {
    if (!this.leased.delete(instance)) return;
    const server = instance.server;
    instance.server = undefined;
    await server?.close();
    try {
      await this.reset(instance);
      const shape = await shapeOf(instance.db);
      if (shape.tables !== instance.shape.tables || shape.migrations !== instance.shape.migrations)
        throw new Error('not the fixture any more');
    } catch {
      await instance.db.close().catch(() => undefined);
      return;
    }
    const idle = this.idle.get(instance.fixture) ?? [];
    if (idle.length >= KEPT_PER_FIXTURE) {
      await instance.db.close().catch(() => undefined);
      return;
    }
    idle.push(instance);
    this.idle.set(instance.fixture, idle);
  }

  private async reset(instance: Instance): Promise<void> {
    const { db } = instance;
    if (db.isInTransaction()) await db.exec('ROLLBACK');
    await db.exec('DISCARD ALL');
    if (instance.fixture === 'empty') {
      const schemas = await db.query<{ name: string }>(
        `SELECT nspname AS name FROM pg_namespace
          WHERE nspname NOT IN ('pg_catalog', 'information_schema') AND nspname NOT LIKE 'pg\\_%'`,
      );
      for (const { name } of schemas.rows) await db.exec(`DROP SCHEMA "${name}" CASCADE`);
      await db.exec('CREATE SCHEMA public');
      return;
    }
    const tables = instance.shape.tables
      .split(',')
      .filter((name) => name !== '' && !name.endsWith('.migrations'))
      .map((name) => name.replace(/^([^.]+)\.(.+)$/, '"$1"."$2"'));
    if (tables.length > 0) await db.exec(`TRUNCATE ${tables.join(', ')} RESTART IDENTITY CASCADE`);
  }
}
