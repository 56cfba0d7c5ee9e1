import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { GATEWAY_DATA_SOURCE } from '../database/data-source.options';
import { GatewayDatabaseModule } from '../database/gateway-database.module';
import { USAGE_ENTITIES } from './usage-entities';
import { UsageExports } from './usage-exports';
import { UsageHistoryService } from './usage-history.service';
import { UsageRepository } from './usage.repository';
import { UsageService } from './usage.service';

/**
 * Usage history (issue #23): the recorder the admission feeds, its flush into usage_hourly and usage_daily, the
 * queries the admin API reads, and retention. Imports GatewayDatabaseModule so that, on shutdown, the last
 * batch is written before that module closes the pool (Nest stops importers first).
 */
@Module({
  imports: [GatewayDatabaseModule, TypeOrmModule.forFeature(USAGE_ENTITIES, GATEWAY_DATA_SOURCE)],
  providers: [UsageRepository, UsageService, UsageHistoryService, UsageExports],
  exports: [UsageRepository, UsageService, UsageHistoryService, UsageExports],
})
export class UsageModule {}
