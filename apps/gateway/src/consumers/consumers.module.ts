import { DatabaseEndpoint, guardPoolClients } from '@app/database';
import {
  Inject,
  Injectable,
  Module,
  OnApplicationBootstrap,
  OnApplicationShutdown,
  OnModuleInit,
} from '@nestjs/common';
import { getDataSourceToken, InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { GATEWAY_CONFIG, GatewayConfig } from '../config/gateway.config';
import { ConsumerChanges } from './consumer-changes';
import { GATEWAY_DATA_SOURCE } from '../database/data-source.options';
import { GatewayDatabaseModule } from '../database/gateway-database.module';
import { runMigrations } from '../database/run-migrations';
import { PlanLimits } from '../plans/plan-limits';
import { AdminTokens } from './admin-tokens.repository';
import { AuditLog } from './audit-log';
import { ConsumerRepository } from './consumer.repository';
import { ConsumersFile } from './consumers-file.service';
import { KeyCache } from './key-cache.service';
import { KeyLookupRepository } from './key-lookup.repository';
import { CONSUMER_ENTITIES } from './consumer-entities';
import { PlanRequests } from './plan-requests.repository';
import { PostgresConsumerChanges } from './postgres-consumer-changes';
import { RedisConsumerChanges } from './redis-consumer-changes';

/** Redis pub/sub when REDIS_URL is set (the instances share it already); PostgreSQL LISTEN/NOTIFY otherwise. */
function createChanges(config: GatewayConfig, endpoint: DatabaseEndpoint, dataSource: DataSource): ConsumerChanges {
  if (config.redis) return new RedisConsumerChanges(config.redis.connection, config.redis.keyPrefix);
  return new PostgresConsumerChanges(
    endpoint.url,
    `${config.consumers.schema}_consumer_changes`,
    async (channel, payload) => {
      await dataSource.query('SELECT pg_notify($1, $2)', [channel, payload]);
    },
  );
}

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
    if (this.config.consumers.migrateOnStart)
      await runMigrations(this.dataSource, this.endpoint, this.config.consumers.schema);
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

/**
 * Consumers and keys: the database, the hot-path key lookup and its cache (data plane), the repository and the
 * consumers-file import/export (control plane), and the change channel between instances.
 */
@Module({
  imports: [GatewayDatabaseModule.forRoot(CONSUMER_ENTITIES)],
  providers: [
    {
      provide: ConsumerChanges,
      inject: [GATEWAY_CONFIG, DatabaseEndpoint, getDataSourceToken(GATEWAY_DATA_SOURCE)],
      useFactory: createChanges,
    },
    PlanLimits,
    KeyLookupRepository,
    ConsumerRepository,
    ConsumersFile,
    KeyCache,
    AuditLog,
    AdminTokens,
    PlanRequests,
    ConsumersLifecycle,
  ],
  exports: [
    PlanLimits,
    ConsumerRepository,
    ConsumersFile,
    KeyCache,
    ConsumerChanges,
    AuditLog,
    AdminTokens,
    PlanRequests,
  ],
})
export class ConsumersModule {}
