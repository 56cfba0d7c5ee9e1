import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { CreditsModule } from '../credits/credits.module';
import { GATEWAY_DATA_SOURCE } from '../database/data-source.options';
import { GatewayDatabaseModule } from '../database/gateway-database.module';
import { ALERT_ENTITIES } from './alert-entities';
import { FleetLeases } from './fleet-leases';
import { ThresholdEventsRepository } from './threshold-events.repository';
import { ThresholdEvents } from './threshold-events';
import { ThresholdMetrics } from './threshold-metrics';
import { ThresholdPolicy } from './threshold-policy';
import { ThresholdReconciler } from './threshold-reconciler';

/**
 * Threshold events (issue #49, docs/alerts.md): the request path's check and queue, the events and outbox tables,
 * the reconciliation. Imports GatewayDatabaseModule so that, on shutdown, the queue is written before that module
 * closes the pool; the rate-limit room imports this one (its guard observes every decision).
 */
@Module({
  imports: [GatewayDatabaseModule, CreditsModule, TypeOrmModule.forFeature(ALERT_ENTITIES, GATEWAY_DATA_SOURCE)],
  providers: [
    ThresholdPolicy,
    ThresholdEventsRepository,
    ThresholdMetrics,
    ThresholdEvents,
    ThresholdReconciler,
    FleetLeases,
  ],
  exports: [ThresholdEvents, ThresholdReconciler, ThresholdEventsRepository, FleetLeases],
})
export class AlertsModule {}
