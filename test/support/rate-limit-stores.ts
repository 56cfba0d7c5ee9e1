import { randomBytes } from 'node:crypto';
import { AppMetrics } from '@app/platform';
import type { CreditSeed, CreditSpec } from '../../apps/gateway/src/credits/credit-decision';
import { Clock } from '../../apps/gateway/src/clock';
import { loadGatewayConfig } from '../../apps/gateway/src/config/gateway.config';
import { MemoryRateLimitStore } from '../../apps/gateway/src/rate-limit/memory-rate-limit.store';
import { RateLimitMetrics } from '../../apps/gateway/src/rate-limit/rate-limit-metrics';
import { RateLimitStore, WindowSpec } from '../../apps/gateway/src/rate-limit/rate-limit-store';
import { RedisRateLimitStore } from '../../apps/gateway/src/rate-limit/redis-rate-limit.store';

/** Real time: the Redis store reads Redis's clock, which a test cannot move. */
export class SystemClockForTest extends Clock {
  now(): number {
    return Date.now();
  }
}

/** A ban policy no test reaches. */
export const noBan = { threshold: 1_000_000, durationMs: 1_000, graceMs: 0 };
export const minute = (limit: number): WindowSpec => ({ name: 'minute', limit, ttlMs: 60_000 });

/** Credits whose rebuild answers `seed` (what the ledger would say) and counts its calls. */
export function seededCredits(cost: number, seed: CreditSeed, refill?: CreditSpec['refill']) {
  const calls = { rebuilds: 0 };
  const spec: CreditSpec = {
    cost,
    refill,
    rebuild: async () => {
      calls.rebuilds += 1;
      return seed;
    },
  };
  return { spec, calls };
}

/** A Redis store on `connection`, with the in-process store as its fallback, under a key prefix of its own. */
export function redisStore(
  connection: NonNullable<ReturnType<typeof loadGatewayConfig>['redis']>['connection'],
  {
    label,
    failureMode,
    replyTimeoutMs = 2_000,
    keyPrefix = `${process.env.REDIS_KEY_PREFIX ?? 'test:'}${label}-${randomBytes(4).toString('hex')}:`,
  }: { label: string; failureMode: 'open' | 'closed'; replyTimeoutMs?: number; keyPrefix?: string },
): RedisRateLimitStore {
  const clock = new SystemClockForTest();
  return new RedisRateLimitStore(
    {
      connection,
      keyPrefix,
      replyTimeoutMs,
      failureMode,
    },
    new MemoryRateLimitStore(clock),
    new RateLimitMetrics(new AppMetrics('test')),
    clock,
  );
}

export type StoreEngine = { name: string; create: () => RateLimitStore };

/**
 * The stores a decision must agree on: the in-process one always, Redis's when REDIS_URL is set (CI sets it; a run
 * without it says so rather than passing quietly).
 */
export function storeEngines(label: string, failureMode: 'open' | 'closed'): StoreEngine[] {
  const engines: StoreEngine[] = [
    { name: 'in-process', create: () => new MemoryRateLimitStore(new SystemClockForTest()) },
  ];
  const redisUrl = process.env.REDIS_URL;
  if (redisUrl) {
    engines.push({
      name: 'Redis',
      create: () => redisStore(loadGatewayConfig({ REDIS_URL: redisUrl }).redis!.connection, { label, failureMode }),
    });
  } else {
    console.log(`${label}: REDIS_URL is not set: the Redis store is not tested in this run (CI sets it)`);
  }
  return engines;
}

/** Opens `store` (Redis: waits for its connection) and closes it after the suite. */
export function useStore(create: () => RateLimitStore): () => RateLimitStore {
  let store: RateLimitStore;
  beforeAll(async () => {
    store = create();
    if (store instanceof RedisRateLimitStore) await store.waitUntilReady(5_000);
  });
  afterAll(() => store.close());
  return () => store;
}
