import { DatabaseEndpoint } from '@app/database';
import { Injectable, Module, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { getDataSourceToken, TypeOrmModule } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { AccessModule } from '../access/access.module';
import { GATEWAY_CONFIG, GatewayConfig } from '../config/gateway.config';
import { GATEWAY_DATA_SOURCE } from '../database/data-source.options';
import { GatewayDatabaseModule } from '../database/gateway-database.module';
import { PlanLimits } from '../plans/plan-limits';
import { ConsumerChanges } from './consumer-changes';
import { CONSUMER_ENTITIES } from './consumer-entities';
import { ConsumerKeysService } from './consumer-keys.service';
import { ConsumerLocks } from './consumer-locks';
import { ConsumerRepository } from './consumer.repository';
import { ConsumersService } from './consumers.service';
import { ConsumersFileService } from './consumers-file.service';
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

/**
 * Listens for other instances' changes once every module is ready, and stops before the database closes (Nest
 * stops importers first, and this module imports GatewayDatabaseModule).
 */
@Injectable()
class ConsumerChangesLifecycle implements OnApplicationBootstrap, OnApplicationShutdown {
  constructor(private readonly changes: ConsumerChanges) {}

  async onApplicationBootstrap(): Promise<void> {
    await this.changes.start();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.changes.close();
  }
}

/**
 * Consumers and their keys (the control plane's aggregate): the repository, the consumers-file import/export, and
 * the change channel every write publishes on (the key cache and the unban propagation listen to it).
 */
@Module({
  imports: [GatewayDatabaseModule, AccessModule, TypeOrmModule.forFeature(CONSUMER_ENTITIES, GATEWAY_DATA_SOURCE)],
  providers: [
    {
      provide: ConsumerChanges,
      inject: [GATEWAY_CONFIG, DatabaseEndpoint, getDataSourceToken(GATEWAY_DATA_SOURCE)],
      useFactory: createChanges,
    },
    PlanLimits,
    ConsumerRepository,
    ConsumerLocks,
    ConsumersService,
    ConsumerKeysService,
    ConsumersFileService,
    ConsumerChangesLifecycle,
  ],
  exports: [PlanLimits, ConsumersService, ConsumerLocks, ConsumerKeysService, ConsumersFileService, ConsumerChanges],
})
export class ConsumersModule {}
