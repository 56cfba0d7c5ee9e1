import { Logger } from '@nestjs/common';
import Redis from 'ioredis';
import { MemoryRateLimitStore } from './memory-rate-limit.store';
import { RateLimitMetrics } from './rate-limit-metrics';
import { BanPolicy, Decision, RateLimitStore, Usage, WindowSpec, WindowState } from './rate-limit-store';

/**
 * One atomic round trip decides every window of a request. KEYS: ban, strikes, then one counter per window.
 * ARGV: ban threshold, ban ms, then limit and ttl ms per window. Returns {outcome, retry ms, limiting window,
 * count1, reset1, count2, reset2, ...}; outcome 0 allowed, 1 limited, 2 banned. Time is Redis's own (PTTL),
 * so instances with skewed clocks still agree.
 */
const CONSUME_SCRIPT = `
local n = #KEYS - 2
local counts, resets = {}, {}
for i = 1, n do
  local ttl = redis.call('PTTL', KEYS[i + 2])
  if ttl > 0 then
    counts[i] = tonumber(redis.call('GET', KEYS[i + 2]) or '0')
    resets[i] = ttl
  else
    counts[i] = 0
    resets[i] = tonumber(ARGV[2 + 2 * i])
  end
end
local function result(outcome, retry, limiting)
  local out = {outcome, retry, limiting}
  for i = 1, n do
    out[#out + 1] = counts[i]
    out[#out + 1] = resets[i]
  end
  return out
end
local banned = redis.call('PTTL', KEYS[1])
if banned > 0 then return result(2, banned, 0) end
local limiting, wait = 0, 0
for i = 1, n do
  if counts[i] >= tonumber(ARGV[1 + 2 * i]) and resets[i] > wait then
    limiting, wait = i, resets[i]
  end
end
if limiting > 0 then
  local strikes = redis.call('INCR', KEYS[2])
  if strikes == 1 or redis.call('PTTL', KEYS[2]) < 0 then redis.call('PEXPIRE', KEYS[2], wait) end
  if strikes > tonumber(ARGV[1]) then
    redis.call('SET', KEYS[1], '1', 'PX', ARGV[2])
    redis.call('DEL', KEYS[2])
    return result(2, tonumber(ARGV[2]), limiting)
  end
  return result(1, wait, limiting)
end
for i = 1, n do
  counts[i] = redis.call('INCR', KEYS[i + 2])
  if counts[i] == 1 or redis.call('PTTL', KEYS[i + 2]) < 0 then
    redis.call('PEXPIRE', KEYS[i + 2], ARGV[2 + 2 * i])
    resets[i] = tonumber(ARGV[2 + 2 * i])
  end
end
return result(0, 0, 0)
`;

type ConsumeCommand = (numberOfKeys: number, ...args: Array<string | number>) => Promise<number[]>;

/**
 * Counters in Redis, shared by every gateway instance. While Redis is unreachable the gateway keeps serving on
 * in-process counters (limits then hold per instance), says so in the log and counts it in the metrics, and
 * goes back to Redis as soon as it answers; ioredis reconnects by itself. No request waits longer than
 * REDIS_COMMAND_TIMEOUT_MS for Redis.
 */
export class RedisRateLimitStore extends RateLimitStore {
  private readonly logger = new Logger('RateLimit');
  private readonly redis: Redis;
  private degraded = false;

  constructor(
    url: string,
    private readonly keyPrefix: string,
    commandTimeoutMs: number,
    private readonly fallback: MemoryRateLimitStore,
    private readonly metrics: RateLimitMetrics,
  ) {
    super();
    this.redis = new Redis(url, {
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      commandTimeout: commandTimeoutMs,
      connectTimeout: Math.max(1000, commandTimeoutMs),
      retryStrategy: (attempt) => Math.min(attempt * 200, 2000),
    });
    this.redis.on('error', () => undefined); // reported through markDegraded, once per outage
    this.redis.defineCommand('rateLimitConsume', { lua: CONSUME_SCRIPT });
  }

  async consume(key: string, windows: WindowSpec[], ban: BanPolicy): Promise<Decision> {
    const base = `${this.keyPrefix}rl:{${key}}`;
    const keys = [`${base}:ban`, `${base}:strikes`, ...windows.map((w) => `${base}:w:${w.name}`)];
    const args = [ban.threshold, ban.durationMs, ...windows.flatMap((w) => [w.limit, w.ttlMs])];
    let reply: number[];
    try {
      const command = (this.redis as unknown as { rateLimitConsume: ConsumeCommand }).rateLimitConsume;
      reply = await command.call(this.redis, keys.length, ...keys, ...args);
    } catch (error) {
      this.markDegraded(error as Error);
      return this.fallback.consume(key, windows, ban);
    }
    this.markHealthy();
    return this.toDecision(reply, windows);
  }

  /** Read-only: PTTL and GET of the same keys `consume` uses, in one pipeline; the fallback's view while degraded. */
  async usage(key: string, windows: WindowSpec[]): Promise<Usage> {
    const base = `${this.keyPrefix}rl:{${key}}`;
    const pipeline = this.redis.pipeline().pttl(`${base}:ban`);
    for (const w of windows) pipeline.get(`${base}:w:${w.name}`).pttl(`${base}:w:${w.name}`);
    let replies: Array<[Error | null, unknown]> | null;
    try {
      replies = await pipeline.exec();
    } catch (error) {
      replies = null;
      this.markDegraded(error as Error);
    }
    const failed = replies?.find(([error]) => error !== null);
    if (!replies || failed) {
      if (failed) this.markDegraded(failed[0]!);
      return this.fallback.usage(key, windows);
    }
    const value = (i: number) => replies![i][1];
    const ban = Number(value(0));
    return {
      windows: windows.map((spec, i) => {
        const ttl = Number(value(2 + 2 * i));
        return ttl > 0 ? { ...spec, count: Number(value(1 + 2 * i) ?? 0), resetMs: ttl } : { ...spec, count: 0, resetMs: spec.ttlMs };
      }),
      bannedForMs: ban > 0 ? ban : 0,
    };
  }

  /**
   * Waits (at most `timeoutMs`) for the first connection, so that the first requests are counted in Redis
   * rather than on the fallback. A gateway whose Redis is down still starts, degraded, and says so.
   */
  async waitUntilReady(timeoutMs: number): Promise<void> {
    if (this.redis.status === 'ready') return;
    const ready = await new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), timeoutMs);
      this.redis.once('ready', () => {
        clearTimeout(timer);
        resolve(true);
      });
    });
    if (!ready) this.markDegraded(new Error(`no connection within ${timeoutMs} ms`));
  }

  /** Whether decisions currently come from Redis (for readiness). */
  async ping(): Promise<boolean> {
    try {
      return (await this.redis.ping()) === 'PONG';
    } catch {
      return false;
    }
  }

  override async close(): Promise<void> {
    await this.fallback.close();
    this.redis.disconnect();
  }

  private toDecision(reply: number[], windows: WindowSpec[]): Decision {
    const [outcome, retryAfterMs, limiting] = reply;
    const states: WindowState[] = windows.map((spec, i) => ({ ...spec, count: reply[3 + 2 * i], resetMs: reply[4 + 2 * i] }));
    if (outcome === 2) return { outcome: 'banned', windows: states, retryAfterMs };
    if (outcome === 1) return { outcome: 'limited', windows: states, window: windows[limiting - 1].name, retryAfterMs };
    return { outcome: 'allowed', windows: states };
  }

  private markDegraded(error: Error): void {
    this.metrics.countFallback();
    if (this.degraded) return;
    this.degraded = true;
    this.metrics.setDegraded(true);
    this.logger.error(`Redis unreachable (${error.message}): rate limits now count per gateway instance until it returns`);
  }

  private markHealthy(): void {
    if (!this.degraded) return;
    this.degraded = false;
    this.metrics.setDegraded(false);
    this.logger.warn('Redis reachable again: rate limits are shared across instances again');
  }
}
