import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { loadGatewayConfig } from '../../apps/gateway/src/config/gateway.config';
import { dataSourceOptions } from '../../apps/gateway/src/database/data-source.options';
import { openDatabaseEndpoint } from '../../apps/gateway/src/database/gateway-database.module';
import { runMigrations } from '../../apps/gateway/src/database/run-migrations';
import { createGatewayTestDatabase } from './gateway';

/**
 * A gateway database of the test's own with every migration applied, and a data source on it with no entities: for
 * a migration's test, which runs its `down` and `up` on rows it writes itself. `close` drops the database.
 */
export async function migratedGatewayDatabase(): Promise<{ source: DataSource; close(): Promise<void> }> {
  const database = await createGatewayTestDatabase('empty');
  const endpoint = await openDatabaseEndpoint(loadGatewayConfig({ GATEWAY_DATABASE_URL: database.url }));
  const source = await new DataSource({
    ...dataSourceOptions(endpoint, 2, 'gateway', []),
    logging: false,
  }).initialize();
  await runMigrations(source, endpoint, 'gateway');
  return {
    source,
    close: async () => {
      if (source.isInitialized) await source.destroy();
      await endpoint.close();
      await database.drop();
    },
  };
}

/** A uuid whose text sorts before (`0`) or after (`f`) any other of its kind: the tie an order by id breaks on. */
export const idSorting = (first: '0' | 'f'): string => `${first.repeat(8)}${randomUUID().slice(8)}`;
