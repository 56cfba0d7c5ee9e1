import { DatabaseEndpoint, EmbeddedPgliteEndpoint, ExternalPostgresEndpoint, guardPoolClients, PgliteListener } from '@app/database';
import { Global, Inject, Injectable, Module, OnApplicationBootstrap, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { getDataSourceToken, InjectDataSource, TypeOrmModule } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import type { PGlite } from '@electric-sql/pglite';
import { GATEWAY_CONFIG, GatewayConfig } from '../config/gateway.config';
import { ConsumerChanges } from './consumer-changes';
import { ConsumerStore, GATEWAY_DATA_SOURCE } from './consumer-store.service';
import { dataSourceOptions } from './database/data-source.options';
import { PgliteWireServer } from './database/pglite-wire-server';
import { runMigrations } from './database/run-migrations';
import { KeyCache } from './key-cache.service';
import { PostgresConsumerChanges } from './postgres-consumer-changes';
import { RedisConsumerChanges } from './redis-consumer-changes';

export async function openDatabaseEndpoint(config: GatewayConfig): Promise<DatabaseEndpoint> {
  const { databaseUrl, poolSize, pgliteDataDir } = config.consumers;
  if (databaseUrl) return new ExternalPostgresEndpoint(databaseUrl, poolSize);
  return EmbeddedPgliteEndpoint.start({
    dataDir: pgliteDataDir,
    // PgliteWireServer makes several connections safe on PGlite's single session.
    maxPoolSize: 2,
    serve: servePgliteWire,
    logContext: 'Consumers',
    logMessage: `Embedded PGlite database for consumers and keys in ${pgliteDataDir}`,
  });
}

async function servePgliteWire(db: PGlite): Promise<PgliteListener> {
  const server = new PgliteWireServer(db);
  const address = await server.listen(0, '127.0.0.1');
  return { address, close: () => server.close() };
}

/** Redis pub/sub when REDIS_URL is set (the instances share it already); PostgreSQL LISTEN/NOTIFY otherwise. */
function createChanges(config: GatewayConfig, endpoint: DatabaseEndpoint, dataSource: DataSource): ConsumerChanges {
  if (config.redis) return new RedisConsumerChanges(config.redis.connection, config.redis.keyPrefix);
  return new PostgresConsumerChanges(endpoint.url, `${config.consumers.schema}_consumer_changes`, async (channel, payload) => {
    await dataSource.query('SELECT pg_notify($1, $2)', [channel, payload]);
  });
}

@Global()
@Module({
  providers: [{ provide: DatabaseEndpoint, inject: [GATEWAY_CONFIG], useFactory: openDatabaseEndpoint }],
  exports: [DatabaseEndpoint],
})
class ConsumersDatabaseEndpointModule {}

/** Migrates before the gateway takes requests, listens for changes, and closes everything after the pool. */
@Injectable()
class ConsumersLifecycle implements OnModuleInit, OnApplicationBootstrap, OnApplicationShutdown {
  constructor(
    @InjectDataSource(GATEWAY_DATA_SOURCE) private readonly dataSource: DataSource,
    private readonly endpoint: DatabaseEndpoint,
    private readonly changes: ConsumerChanges,
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
  ) {}

  async onModuleInit(): Promise<void> {
    guardPoolClients(this.dataSource);
    if (this.config.consumers.migrateOnStart) await runMigrations(this.dataSource, this.endpoint, this.config.consumers.schema);
  }

  async onApplicationBootstrap(): Promise<void> {
    await this.changes.start();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.changes.close();
    if (this.dataSource.isInitialized) await this.dataSource.destroy();
    await this.endpoint.close();
  }
}

/** Consumers and keys: the database, the store (control plane) and the key cache (data plane). */
@Global()
@Module({
  imports: [
    ConsumersDatabaseEndpointModule,
    TypeOrmModule.forRootAsync({
      name: GATEWAY_DATA_SOURCE,
      inject: [DatabaseEndpoint, GATEWAY_CONFIG],
      useFactory: (endpoint: DatabaseEndpoint, config: GatewayConfig) => ({
        ...dataSourceOptions(endpoint, config.consumers.poolSize, config.consumers.schema),
        // A gateway whose database is missing at start fails soon, with the reason, rather than after 30 s.
        retryAttempts: 2,
        retryDelay: 1000,
      }),
    }),
  ],
  providers: [
    { provide: ConsumerChanges, inject: [GATEWAY_CONFIG, DatabaseEndpoint, getDataSourceToken(GATEWAY_DATA_SOURCE)], useFactory: createChanges },
    ConsumerStore,
    KeyCache,
    ConsumersLifecycle,
  ],
  exports: [ConsumerStore, KeyCache, ConsumerChanges],
})
export class ConsumersModule {}
