import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { GATEWAY_DATA_SOURCE } from '../database/data-source.options';
import { GatewayDatabaseModule } from '../database/gateway-database.module';
import { USAGE_ENTITIES } from '../usage/usage-entities';
import { UsageAggregatesRepository } from './usage-aggregates.repository';

/**
 * Usage as events for a billing system (issue #49, docs/usage-export.md): the aggregates read from the usage
 * history and their wire formats. The delivery worker (outbox, sender, schedule) is not built yet: it will take
 * UsageAggregatesRepository and usageExportRequests, and deliver through a UsageExportSink.
 */
@Module({
  imports: [GatewayDatabaseModule, TypeOrmModule.forFeature(USAGE_ENTITIES, GATEWAY_DATA_SOURCE)],
  providers: [UsageAggregatesRepository],
  exports: [UsageAggregatesRepository],
})
export class UsageExportModule {}
