import { randomBytes } from 'node:crypto';
import { AppMetrics } from '@app/platform';
import { Clock } from '../apps/gateway/src/clock';
import { loadGatewayConfig } from '../apps/gateway/src/config/gateway.config';
import { MemoryRateLimitStore } from '../apps/gateway/src/rate-limit/memory-rate-limit.store';
import { RateLimitMetrics } from '../apps/gateway/src/rate-limit/rate-limit-metrics';
import { Decision, RateLimitStore, WindowSpec } from '../apps/gateway/src/rate-limit/rate-limit-store';
import { RedisRateLimitStore } from '../apps/gateway/src/rate-limit/redis-rate-limit.store';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const noBan = { threshold: 1_000_000, durationMs: 1_000, graceMs: 0 };
const MONTH = 30 * 86_400_000;

/** Real time: the Redis store reads Redis's clock, which a test cannot move. */
class SystemClockForTest extends Clock {
  now(): number {
    return Date.now();
  }
}

/** A month window whose period ends `endInMs` from now (and the next one a month after that). */
const month = (limit: number, endInMs: number, nextInMs = endInMs + MONTH): WindowSpec => ({
  name: 'month',
  limit,
  ttlMs: MONTH,
  period: { endMs: Date.now() + endInMs, nextEndMs: Date.now() + nextInMs },
});
const minute = (limit: number): WindowSpec => ({ name: 'minute', limit, ttlMs: 60_000 });
const counts = (decision: Decision) => Object.fromEntries(decision.windows.map((w) => [w.name, w.count]));

type Engine = { name: string; create: () => RateLimitStore };
const engines: Engine[] = [{ name: 'in-process', create: () => new MemoryRateLimitStore(new SystemClockForTest()) }];
if (process.env.REDIS_URL) {
  engines.push({
    name: 'Redis',
    create: () => {
      const config = loadGatewayConfig({ REDIS_URL: process.env.REDIS_URL });
      return new RedisRateLimitStore(
        {
          connection: config.redis!.connection,
          keyPrefix: `${process.env.REDIS_KEY_PREFIX ?? 'test:'}month-${randomBytes(4).toString('hex')}:`,
          replyTimeoutMs: 2_000,
          failureMode: 'closed',
        },
        new MemoryRateLimitStore(new SystemClockForTest()),
        new RateLimitMetrics(new AppMetrics('test')),
        new SystemClockForTest(),
      );
    },
  });
} else {
  console.log('monthly-quota-store: REDIS_URL is not set: the Redis store is not tested in this run (CI sets it)');
}

describe.each(engines)('a monthly quota in the $name store', ({ create }) => {
  let store: RateLimitStore;
  beforeAll(async () => {
    store = create();
    if (store instanceof RedisRateLimitStore) await store.waitUntilReady(5_000);
  });
  afterAll(() => store.close());
  const tracker = () => `consumer:m-${randomBytes(4).toString('hex')}`;

  it('admits exactly the monthly quota, decided with the minute window, and a refusal consumes from none', async () => {
    const key = tracker();
    const windows = [minute(100), month(5, 10 * 86_400_000)];
    const outcomes: string[] = [];
    for (let i = 0; i < 8; i += 1) outcomes.push((await store.consume(key, windows, noBan)).outcome);
    expect(outcomes).toEqual(['allowed', 'allowed', 'allowed', 'allowed', 'allowed', 'limited', 'limited', 'limited']);
    const refused = await store.consume(key, windows, noBan);
    expect(refused).toMatchObject({ outcome: 'limited', window: 'month' });
    // The refusals by the month counted nothing in the minute window.
    expect(counts(refused)).toEqual({ minute: 5, month: 5 });
    // Retry-After is the period's end: ten days away.
    if (refused.outcome === 'limited') expect(Math.abs(refused.retryAfterMs - 10 * 86_400_000)).toBeLessThan(60_000);

    // And a refusal by the minute window counts nothing in the month.
    const other = tracker();
    const tight = [minute(2), month(100, 10 * 86_400_000)];
    for (let i = 0; i < 5; i += 1) await store.consume(other, tight, noBan);
    expect((await store.usage(other, tight)).windows.map((w) => w.count)).toEqual([2, 2]);
  });

  it('ends the count with the billing period: the next period starts from zero', async () => {
    const key = tracker();
    const windows = () => [month(2, 600)];
    await store.consume(key, windows(), noBan);
    await store.consume(key, windows(), noBan);
    expect((await store.consume(key, windows(), noBan)).outcome).toBe('limited');
    await sleep(900);
    // The gateway's clock may lag the store's: the period it names may have ended; the store takes the next one.
    const next = await store.consume(key, [month(2, -300, MONTH)], noBan);
    expect(next.outcome).toBe('allowed');
    expect(counts(next)).toEqual({ month: 1 });
    expect(Math.abs(next.windows[0].resetMs - MONTH)).toBeLessThan(60_000);
  });

  it('moving the anchor re-cuts the period in progress: its count is kept, its end is the new one', async () => {
    const key = tracker();
    for (let i = 0; i < 3; i += 1) await store.consume(key, [month(5, 20 * 86_400_000)], noBan);
    // The anchor moves: the period in progress now ends in 2 days (or 25), with the 3 requests it has counted.
    const sooner = await store.consume(key, [month(5, 2 * 86_400_000)], noBan);
    expect(counts(sooner)).toEqual({ month: 4 });
    expect(Math.abs(sooner.windows[0].resetMs - 2 * 86_400_000)).toBeLessThan(60_000);
    const later = await store.consume(key, [month(5, 25 * 86_400_000)], noBan);
    expect(counts(later)).toEqual({ month: 5 });
    expect((await store.consume(key, [month(5, 25 * 86_400_000)], noBan)).outcome).toBe('limited');
    const usage = await store.usage(key, [month(5, 25 * 86_400_000)]);
    expect(usage.windows[0].count).toBe(5);
    expect(Math.abs(usage.windows[0].resetMs - 25 * 86_400_000)).toBeLessThan(60_000);
  });

  it('admits exactly the quota of a concurrent burst', async () => {
    const key = tracker();
    const windows = [minute(1_000), month(37, 10 * 86_400_000)];
    const decisions = await Promise.all(Array.from({ length: 300 }, () => store.consume(key, windows, noBan)));
    expect(decisions.filter((d) => d.outcome === 'allowed')).toHaveLength(37);
    expect((await store.usage(key, windows)).windows.map((w) => w.count)).toEqual([37, 37]);
  });
});
