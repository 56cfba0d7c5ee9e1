import { DatabaseEndpoint, MigrationLock, runMigrations as runLockedMigrations } from '@app/database';
import { DataSource } from 'typeorm';

/** The pets service's migration lock; the gateway's has a key of its own. */
export const PETS_MIGRATION_LOCK: MigrationLock = { key: 7_340_021_001, applicationName: 'pets-migrations-lock' };

/** Applies the pets service's pending migrations (advisory-locked on a shared server). */
export function runMigrations(dataSource: DataSource, endpoint: DatabaseEndpoint): Promise<string[]> {
  return runLockedMigrations(dataSource, endpoint, PETS_MIGRATION_LOCK);
}
