import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { GATEWAY_DATA_SOURCE } from '../database/data-source.options';
import { GatewayDatabaseModule } from '../database/gateway-database.module';
import { UsageAggregatesRepository } from './usage-aggregates.repository';
import { USAGE_EXPORT_ENTITIES } from './usage-export-entities';
import { UsageExportOutbox } from './usage-export-outbox';
import { UsageExporter } from './usage-exporter';

/**
 * Usage as events for a billing system (issue #49, docs/usage-export.md): the aggregates read from the usage
 * history, their wire formats, and their delivery (UsageExporter: the lease, the outbox, the sender). Imports
 * GatewayDatabaseModule so that, on shutdown, the exporter lets its lease go before the pool closes.
 */
@Module({
  imports: [GatewayDatabaseModule, TypeOrmModule.forFeature(USAGE_EXPORT_ENTITIES, GATEWAY_DATA_SOURCE)],
  providers: [UsageAggregatesRepository, UsageExportOutbox, UsageExporter],
  exports: [UsageAggregatesRepository, UsageExportOutbox, UsageExporter],
})
export class UsageExportModule {}
