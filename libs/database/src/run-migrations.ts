import { Logger } from '@nestjs/common';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { DatabaseEndpoint } from './database-endpoint';

export interface MigrationLock {
  /** Arbitrary, fixed key of the advisory lock that serialises one app's migrations across instances. */
  key: number;
  /** application_name of the lock's connection, as seen in pg_stat_activity. */
  applicationName: string;
}

/**
 * Applies pending migrations, after creating `schema` when the app's tables live in one. On a shared server, a
 * session-level advisory lock held on a connection of its own makes a second instance wait until the first has
 * finished, then find nothing left to do.
 */
export async function runMigrations(
  dataSource: DataSource,
  endpoint: DatabaseEndpoint,
  lockOn: MigrationLock,
  schema?: string,
): Promise<string[]> {
  const logger = new Logger('Migrations');
  let lock: Client | undefined;
  if (endpoint.shared) {
    lock = new Client({ connectionString: endpoint.url, application_name: lockOn.applicationName });
    lock.on('error', () => undefined); // a dropped lock connection fails the query below, not the process
    await lock.connect();
    await lock.query('SELECT pg_advisory_lock($1)', [lockOn.key]);
  }
  try {
    // The migrations table lives in the schema, so the schema comes first (the name is validated at start-up).
    if (schema) await dataSource.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
    const applied = await dataSource.runMigrations({ transaction: 'all' });
    for (const migration of applied) logger.log(`Applied ${migration.name}`);
    return applied.map((migration) => migration.name);
  } finally {
    if (lock) {
      await lock.query('SELECT pg_advisory_unlock($1)', [lockOn.key]).catch(() => undefined);
      await lock.end();
    }
  }
}

/**
 * The migrations the code knows and the database has not applied, read without writing anything (TypeORM's
 * showMigrations would create its table): a service without DDL rights can still ask.
 */
export async function pendingMigrations(dataSource: DataSource): Promise<string[]> {
  const table = dataSource.options.migrationsTableName ?? 'migrations';
  const [{ exists }] = (await dataSource.query('SELECT to_regclass($1) IS NOT NULL AS "exists"', [table])) as Array<{
    exists: boolean;
  }>;
  const applied = new Set<string>(
    exists
      ? ((await dataSource.query(`SELECT "name" FROM "${table}"`)) as Array<{ name: string }>).map((row) => row.name)
      : [],
  );
  return dataSource.migrations
    .map((migration) => migration.name ?? migration.constructor.name)
    .filter((name) => !applied.has(name));
}
