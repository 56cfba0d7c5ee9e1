import { Inject, Logger, Module, OnApplicationShutdown } from '@nestjs/common';
import { ThrottlerModule } from '@nestjs/throttler';
import { AlertsModule } from '../alerts/alerts.module';
import { ThresholdReconciler } from '../alerts/threshold-reconciler';
import { CreditsModule } from '../credits/credits.module';
import { CreditsService } from '../credits/credits.service';
import { Clock } from '../clock';
import { GATEWAY_CONFIG, GatewayConfig } from '../config/gateway.config';
import { describeRedisTopology } from '../redis/redis-connection';
import { ClientAddressResolver } from './client-address';
import { MemoryRateLimitStore } from './memory-rate-limit.store';
import { PlanThrottlerGuard } from './plan-throttler.guard';
import { consumerTracker, consumerWindows, planThrottlerOptions } from './plan-throttlers';
import { RateLimitMetrics } from './rate-limit-metrics';
import { RateLimitStore } from './rate-limit-store';
import { RedisRateLimitStore } from './redis-rate-limit.store';
import { restoreCounters, saveCounters } from './rate-limit-state-file';

/** In-process counters by default; Redis (one server, a Cluster or Sentinel), shared by every instance, when configured. */
async function createStore(config: GatewayConfig, clock: Clock, metrics: RateLimitMetrics): Promise<RateLimitStore> {
  const memory = new MemoryRateLimitStore(clock, config.rateLimit.memoryMaxTrackers);
  metrics.watchTrackers(() => memory.size);
  if (!config.redis) {
    if (config.rateLimit.stateFile) restoreCounters(memory, config.rateLimit.stateFile);
    return memory;
  }
  const redis = new RedisRateLimitStore(
    {
      connection: config.redis.connection,
      keyPrefix: config.redis.keyPrefix,
      replyTimeoutMs: config.redis.commandTimeoutMs,
      failureMode: config.rateLimit.failureMode,
      rebuildLockMs: 2 * config.usage.flushMs + 30_000,
    },
    memory,
    metrics,
    clock,
  );
  new Logger('RateLimit').log(`Counters shared through ${describeRedisTopology(config.redis.connection.topology)}`);
  await redis.waitUntilReady(5_000);
  return redis;
}

/** The counters, the client-address rule, and the metrics: what ThrottlerModule is configured with. */
@Module({
  providers: [
    RateLimitMetrics,
    { provide: RateLimitStore, inject: [GATEWAY_CONFIG, Clock, RateLimitMetrics], useFactory: createStore },
    {
      provide: ClientAddressResolver,
      inject: [GATEWAY_CONFIG],
      useFactory: (config: GatewayConfig) => ClientAddressResolver.fromSetting(config.trustProxy),
    },
  ],
  exports: [RateLimitStore, ClientAddressResolver, RateLimitMetrics],
})
class RateLimitStoreModule implements OnApplicationShutdown {
  constructor(
    private readonly store: RateLimitStore,
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
  ) {}

  async onApplicationShutdown(): Promise<void> {
    // After the server stopped taking requests: the in-process counters as they end.
    const file = this.config.rateLimit.stateFile;
    if (file && this.store instanceof MemoryRateLimitStore) saveCounters(this.store, file);
    await this.store.close();
  }
}

/**
 * @nestjs/throttler, keyed by plan: ThrottlerModule with the plan windows and the project's store as its
 * ThrottlerStorage, and PlanThrottlerGuard, which the /v1 pipeline runs once for every request.
 */
@Module({
  imports: [
    RateLimitStoreModule,
    CreditsModule,
    AlertsModule,
    ThrottlerModule.forRootAsync({
      imports: [RateLimitStoreModule],
      inject: [GATEWAY_CONFIG, ClientAddressResolver, RateLimitStore],
      useFactory: (config: GatewayConfig, addresses: ClientAddressResolver, store: RateLimitStore) => ({
        ...planThrottlerOptions(config, addresses),
        storage: store,
      }),
    }),
  ],
  providers: [PlanThrottlerGuard],
  exports: [RateLimitStoreModule, CreditsModule, PlanThrottlerGuard],
})
export class RateLimitModule {
  constructor(
    store: RateLimitStore,
    credits: CreditsService,
    reconciler: ThresholdReconciler,
    @Inject(GATEWAY_CONFIG) config: GatewayConfig,
  ) {
    // A rebuild's barrier waits for the decisions this store already answered (their spend): the store is this room's.
    credits.settleDecisionsWith(() => store.settle());
    // Threshold reconciliation reads the counters the limits decide with (docs/alerts.md), as the admin API's usage.
    reconciler.readCountersWith(
      async (consumer, nowMs) =>
        (await store.usage(consumerTracker(consumer.name), consumerWindows(consumer, config, nowMs))).windows,
    );
  }
}
