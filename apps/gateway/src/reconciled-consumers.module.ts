import { Module, OnModuleInit } from '@nestjs/common';
import { AlertsModule } from './alerts/alerts.module';
import { ThresholdReconciler } from './alerts/threshold-reconciler';
import { consumerOf } from './consumers/consumer-record';
import { ConsumersModule } from './consumers/consumers.module';
import { KeyLookupRepository } from './keys/key-lookup.repository';
import { KeysModule } from './keys/keys.module';
import { PlanLimits } from './plans/plan-limits';

/**
 * The threshold reconciliation reads consumers as the data plane does (the key lookup's columns and the one mapping
 * of consumers/consumer-record.ts, docs/alerts.md). It wires one room to others, so it sits in the composition
 * root: the consumers (whose admin/ reads the limits' store) stand above the limits, which import the alerts, so
 * the alerts cannot import the consumers' mapping themselves.
 */
@Module({ imports: [ConsumersModule, KeysModule, AlertsModule] })
export class ReconciledConsumersModule implements OnModuleInit {
  constructor(
    private readonly reconciler: ThresholdReconciler,
    private readonly lookup: KeyLookupRepository,
    private readonly planLimits: PlanLimits,
  ) {}

  onModuleInit(): void {
    this.reconciler.readConsumersWith(async (names) => {
      const consumers = [];
      for (const { record, createdAt } of await this.lookup.consumersNamed(names)) {
        const consumer = consumerOf(record, this.planLimits);
        if (consumer !== undefined) consumers.push({ consumer, createdAtMs: createdAt.getTime() });
      }
      return consumers;
    });
  }
}
