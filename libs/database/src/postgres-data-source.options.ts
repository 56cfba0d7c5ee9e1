import { DataSourceOptions } from 'typeorm';
import { DatabaseEndpoint } from './database-endpoint';
import { TypeOrmJsonLogger } from './typeorm-json-logger';

export interface PostgresDataSourceSettings {
  /** Shown as application_name in pg_stat_activity. */
  application: string;
  poolSize: number;
  entities: NonNullable<DataSourceOptions['entities']>;
  migrations: NonNullable<DataSourceOptions['migrations']>;
  /** The app's own schema, when it shares a database with another. */
  schema?: string;
  /** How long a request waits for a free connection before it fails. */
  connectionTimeoutMs: number;
  /** The driver gives up on a query after this long (unset: never). */
  queryTimeoutMs?: number;
}

/**
 * What every app's TypeORM data source has in common: migrations run by our own runner (never on
 * initialisation, never synchronize), in one transaction; logs through the app's JSON logger, without
 * parameters (TypeORM's own logger prints them to the console); a pool no larger than the endpoint serves.
 */
export function postgresDataSourceOptions(
  endpoint: DatabaseEndpoint,
  settings: PostgresDataSourceSettings,
): DataSourceOptions {
  return {
    type: 'postgres',
    url: endpoint.url,
    ...(settings.schema ? { schema: settings.schema } : {}),
    entities: settings.entities,
    migrations: settings.migrations,
    migrationsTableName: 'migrations',
    migrationsTransactionMode: 'all',
    synchronize: false,
    migrationsRun: false,
    logger: new TypeOrmJsonLogger(),
    extra: {
      max: Math.min(settings.poolSize, endpoint.maxPoolSize),
      connectionTimeoutMillis: settings.connectionTimeoutMs,
      idleTimeoutMillis: 30_000,
      ...(settings.queryTimeoutMs ? { query_timeout: settings.queryTimeoutMs } : {}),
      application_name: settings.application,
    },
  };
}
