import { Global, Inject, Injectable, Module, OnApplicationBootstrap, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { getDataSourceToken, InjectDataSource, TypeOrmModule } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { GATEWAY_CONFIG, GatewayConfig } from '../config/gateway.config';
import { ConsumerChanges } from './consumer-changes';
import { ConsumerStore, GATEWAY_DATA_SOURCE } from './consumer-store.service';
import { dataSourceOptions } from './database/data-source.options';
import { DatabaseEndpoint, ExternalPostgresEndpoint } from './database/database-endpoint';
import { EmbeddedPgliteEndpoint } from './database/embedded-pglite.endpoint';
import { runMigrations } from './database/run-migrations';
import { KeyCache } from './key-cache.service';
import { PostgresConsumerChanges } from './postgres-consumer-changes';
import { RedisConsumerChanges } from './redis-consumer-changes';

export async function openDatabaseEndpoint(config: GatewayConfig): Promise<DatabaseEndpoint> {
  const { databaseUrl, poolSize, pgliteDataDir } = config.consumers;
  return databaseUrl ? new ExternalPostgresEndpoint(databaseUrl, poolSize) : EmbeddedPgliteEndpoint.start(pgliteDataDir);
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
