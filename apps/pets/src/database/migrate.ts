import { ConfigurationError } from '@app/platform';
import { DataSource } from 'typeorm';
import { loadPetsConfig } from '../config/pets.config';
import { dataSourceOptions } from './data-source.options';
import { openDatabaseEndpoint } from './database.module';
import { runMigrations } from './run-migrations';

/** `npm run migrate`: applies pending migrations to DATABASE_URL (or the embedded database) and exits. */
async function migrate(): Promise<void> {
  const config = loadPetsConfig();
  const endpoint = await openDatabaseEndpoint(config);
  const dataSource = new DataSource(dataSourceOptions(endpoint, 1));
  try {
    await dataSource.initialize();
    const applied = await runMigrations(dataSource, endpoint);
    console.log(applied.length ? `Applied: ${applied.join(', ')}` : 'Database is up to date.');
  } finally {
    if (dataSource.isInitialized) await dataSource.destroy();
    await endpoint.close();
  }
}

migrate().catch((error: unknown) => {
  console.error(error instanceof ConfigurationError ? error.message : error);
  process.exit(1);
});
