import { Logger } from '@nestjs/common';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { DatabaseEndpoint } from './database-endpoint';

/** Arbitrary, fixed key of the advisory lock that serialises the gateway's migrations across instances. */
const MIGRATION_LOCK_KEY = 7_340_021_011;

/**
 * Creates the schema and applies pending migrations. On a shared server, a session-level advisory lock held on
 * a connection of its own makes a second instance wait until the first has finished, then find nothing to do.
 */
export async function runMigrations(dataSource: DataSource, endpoint: DatabaseEndpoint, schema: string): Promise<string[]> {
  const logger = new Logger('Migrations');
  let lock: Client | undefined;
  if (endpoint.shared) {
    lock = new Client({ connectionString: endpoint.url, application_name: 'gateway-migrations-lock' });
    lock.on('error', () => undefined); // a dropped lock connection fails the query below, not the process
    await lock.connect();
    await lock.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
  }
  try {
    // The migrations table lives in the schema, so the schema comes first (the name is validated at start-up).
    await dataSource.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
    const applied = await dataSource.runMigrations({ transaction: 'all' });
    for (const migration of applied) logger.log(`Applied ${migration.name}`);
    return applied.map((migration) => migration.name);
  } finally {
    if (lock) {
      await lock.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]).catch(() => undefined);
      await lock.end();
    }
  }
}
