import { Global, Logger, Module, OnApplicationShutdown } from '@nestjs/common';
import { Clock } from '../clock';
import { GATEWAY_CONFIG, GatewayConfig } from '../config/gateway.config';
import { MemoryRateLimitStore } from './memory-rate-limit.store';
import { RateLimitMetrics } from './rate-limit-metrics';
import { RateLimitStore } from './rate-limit-store';
import { RateLimiter } from './rate-limiter.service';
import { RedisRateLimitStore } from './redis-rate-limit.store';
import { ModuleRef } from '@nestjs/core';
import { ClientAddressResolver } from './client-address';
import { describeRedisTopology } from '../redis/redis-connection';

/** In-process counters by default; Redis (one server, a Cluster or Sentinel), shared by every instance, when configured. */
async function createStore(config: GatewayConfig, clock: Clock, metrics: RateLimitMetrics): Promise<RateLimitStore> {
  const memory = new MemoryRateLimitStore(clock, config.rateLimit.memoryMaxTrackers);
  metrics.watchTrackers(() => memory.size);
  if (!config.redis) return memory;
  const redis = new RedisRateLimitStore(
    { connection: config.redis.connection, keyPrefix: config.redis.keyPrefix, replyTimeoutMs: config.redis.commandTimeoutMs, failureMode: config.rateLimit.failureMode },
    memory,
    metrics,
  );
  new Logger('RateLimit').log(`Counters shared through ${describeRedisTopology(config.redis.connection.topology)}`);
  await redis.waitUntilReady(5_000);
  return redis;
}

@Global()
@Module({
  providers: [
    RateLimitMetrics,
    { provide: RateLimitStore, inject: [GATEWAY_CONFIG, Clock, RateLimitMetrics], useFactory: createStore },
    {
      provide: ClientAddressResolver,
      inject: [GATEWAY_CONFIG],
      useFactory: (config: GatewayConfig) => ClientAddressResolver.fromSetting(config.trustProxy),
    },
    RateLimiter,
  ],
  exports: [RateLimitStore, RateLimiter, RateLimitMetrics],
})
export class RateLimitModule implements OnApplicationShutdown {
  constructor(private readonly moduleRef: ModuleRef) {}

  async onApplicationShutdown(): Promise<void> {
    await this.moduleRef.get(RateLimitStore).close();
  }
}
