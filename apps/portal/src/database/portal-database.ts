import {
  DatabaseEndpoint,
  EmbeddedPgliteEndpoint,
  ExternalPostgresEndpoint,
  guardPoolClients,
  PgliteListener,
  PgliteWireServer,
  postgresDataSourceOptions,
  runMigrations,
} from '@app/database';
import type { PGlite } from '@electric-sql/pglite';
import type { Pool } from 'pg';
import { DataSource } from 'typeorm';
import { AccountTokenEntity } from '../accounts/account-token.entity';
import { AccountEntity } from '../accounts/account.entity';
import { PortalConfig } from '../config/portal.config';
import { CreateAccounts1795532000000 } from './migrations/1795532000000-CreateAccounts';
import { AccountIdentities1796900000000 } from './migrations/1796900000000-AccountIdentities';
import { AccountIdentityEntity } from '../sso/account-identity.entity';

export const PORTAL_ENTITIES = [AccountEntity, AccountTokenEntity, AccountIdentityEntity];
export const PORTAL_MIGRATIONS = [CreateAccounts1795532000000, AccountIdentities1796900000000];
const PORTAL_MIGRATION_LOCK = { key: 7_340_021_025, applicationName: 'portal-migrations-lock' };

async function servePgliteWire(db: PGlite): Promise<PgliteListener> {
  const server = new PgliteWireServer(db);
  const address = await server.listen(0, '127.0.0.1');
  return { address, close: () => server.close() };
}

export interface PortalDatabase {
  dataSource: DataSource;
  /** TypeORM's own pg pool: the session store and the throttle share it (one pool per instance). */
  pool: Pool;
  close(): Promise<void>;
}

export function portalDataSource(endpoint: DatabaseEndpoint, schema: string): DataSource {
  return new DataSource(
    postgresDataSourceOptions(endpoint, {
      application: 'portal',
      poolSize: 10,
      schema,
      entities: PORTAL_ENTITIES,
      migrations: PORTAL_MIGRATIONS,
      connectionTimeoutMs: 10_000,
      queryTimeoutMs: 10_000,
    }),
  );
}

/**
 * The portal's database: PostgreSQL at PORTAL_DATABASE_URL (npm start gives the embedded database it serves), else
 * an embedded PGlite of its own. Everything lives in the `portal` schema; migrations run at start, advisory-locked.
 */
export async function openPortalDatabase(config: PortalConfig): Promise<PortalDatabase> {
  const endpoint: DatabaseEndpoint = config.databaseUrl
    ? new ExternalPostgresEndpoint(config.databaseUrl, 10)
    : await EmbeddedPgliteEndpoint.start({
        dataDir: config.pgliteDataDir,
        maxPoolSize: 2,
        serve: servePgliteWire,
        logContext: 'Database',
        logMessage: `Embedded PGlite database for the portal in ${config.pgliteDataDir}`,
      });
  const dataSource = portalDataSource(endpoint, config.schema);
  await dataSource.initialize();
  guardPoolClients(dataSource);
  await runMigrations(dataSource, endpoint, PORTAL_MIGRATION_LOCK, config.schema);
  const pool = (dataSource.driver as unknown as { master: Pool }).master;
  return {
    dataSource,
    pool,
    close: async () => {
      if (dataSource.isInitialized) await dataSource.destroy();
      await endpoint.close();
    },
  };
}
