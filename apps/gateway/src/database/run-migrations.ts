import { DatabaseEndpoint, MigrationLock, runMigrations as runLockedMigrations } from '@app/database';
import { DataSource } from 'typeorm';

/** The gateway's migration lock; the pets service's has a key of its own (they may share a database). */
export const GATEWAY_MIGRATION_LOCK: MigrationLock = { key: 7_340_021_011, applicationName: 'gateway-migrations-lock' };

/** Creates the gateway's schema and applies its pending migrations (advisory-locked on a shared server). */
export function runMigrations(dataSource: DataSource, endpoint: DatabaseEndpoint, schema: string): Promise<string[]> {
  return runLockedMigrations(dataSource, endpoint, GATEWAY_MIGRATION_LOCK, schema);
}
