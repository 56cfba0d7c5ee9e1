import { Module } from '@nestjs/common';
import { GatewayDatabaseModule } from '../database/gateway-database.module';
import { UsageAggregatesRepository } from './usage-aggregates.repository';

/**
 * Usage as events for a billing system (issue #49, docs/usage-export.md): the aggregates read from the usage
 * history (SQL on the data source: no entity of its own) and their wire formats. The delivery worker (outbox,
 * sender, schedule) is not built yet: it will take UsageAggregatesRepository and usageExportRequests, and deliver
 * through a UsageExportSink.
 */
@Module({
  imports: [GatewayDatabaseModule],
  providers: [UsageAggregatesRepository],
  exports: [UsageAggregatesRepository],
})
export class UsageExportModule {}
