import { randomUUID } from 'node:crypto';
import type { Writable } from 'node:stream';
import { Logger } from '@nestjs/common';
import type { Cluster, Redis } from 'ioredis';
import type { AnchoredPeriod } from '../periods/month-window';
import { Clock } from '../clock';
import { createRedisConnection, RedisConnectionConfig } from '../redis/redis-connection';
import { MemoryRateLimitStore } from './memory-rate-limit.store';
import { RateLimitMetrics } from './rate-limit-metrics';
import {
  BanPolicy,
  Decision,
  RateLimitStore,
  RateLimitUnavailableError,
  Usage,
  WindowSpec,
  WindowState,
} from './rate-limit-store';
import {
  CREDITS_POLICY,
  CreditBalances,
  CreditChange,
  CreditSeed,
  CreditSpec,
  creditState,
  refillCovers,
} from '../credits/credit-decision';

/**
 * One atomic round trip decides every window of a request and its credits. KEYS: ban, strikes, grace, credit
 * balance, last refill, then one counter per window. ARGV: ban threshold, ban ms, grace ms; the credits: cost (-1:
 * no credits in force), the refill amount (0: none), the current refill period's start, ms to the next refill;
 * then per window its limit, ttl ms,
 * and for an anchored window (a monthly quota) the end of the billing period by the gateway's clock and the end
 * of the one after it (both 0 for a window that opens at the first request). Returns {outcome, retry ms, limiting
 * policy, balance, refill added (-1: none), balance after the refill, count1, reset1, count2, reset2, ...}; outcome 0 allowed, 1 limited,
 * 2 banned, 3 banned by this request (the strike that started the ban), 4 no balance held (nothing was done: the
 * caller has it rebuilt once for the fleet, SEED_SCRIPT, and calls again). A limiting policy of n + 1 is the credits. Time
 * is Redis's own (PTTL, TIME), so instances with skewed clocks still agree: an anchored counter ends at the first
 * of the two period ends still ahead of Redis's clock (PEXPIREAT), and a counter that ends elsewhere
 * (PEXPIRETIME, Redis 7) was cut on an anchor since moved: it is re-cut, its count kept. The same algorithm as
 * MemoryRateLimitStore: the window's first refusal creates the strikes counter (at 0, living as long as the
 * limiting window) and the grace key; refusals count as strikes only once the grace key has expired. A refill
 * tops the balance up to its amount once per period: the last refilled period start is kept beside the balance,
 * so two instances that both see the boundary apply it once.
 */
const CONSUME_SCRIPT = `
local n = #KEYS - 5
local cost = tonumber(ARGV[4])
local balance, refilled, refilledTo = 0, -1, 0
if cost >= 0 then
  local held = redis.call('GET', KEYS[4])
  if not held then return {4, 0, 0, 0, -1, 0} end
  balance = tonumber(held)
  local amount = tonumber(ARGV[5])
  if amount > 0 then
    local start = tonumber(ARGV[6])
    if tonumber(redis.call('GET', KEYS[5]) or '0') < start then
      redis.call('SET', KEYS[5], start)
      refilled = 0
      if balance < amount then
        refilled = amount - balance
        balance = amount
        redis.call('SET', KEYS[4], balance)
      end
      refilledTo = balance
    end
  end
end
local counts, resets, ends = {}, {}, {}
local now
for i = 1, n do
  local key = KEYS[i + 5]
  local periodEnd = tonumber(ARGV[4 * i + 6])
  if periodEnd > 0 then
    if not now then
      local t = redis.call('TIME')
      now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
    end
    if periodEnd <= now then periodEnd = tonumber(ARGV[4 * i + 7]) end
    ends[i] = periodEnd
    local expiry = redis.call('PEXPIRETIME', key)
    if expiry ~= -2 then
      counts[i] = tonumber(redis.call('GET', key) or '0')
      if expiry ~= periodEnd then redis.call('PEXPIREAT', key, periodEnd) end
    else
      counts[i] = 0
    end
    resets[i] = periodEnd - now
  else
    local ttl = redis.call('PTTL', key)
    if ttl > 0 then
      counts[i] = tonumber(redis.call('GET', key) or '0')
      resets[i] = ttl
    else
      counts[i] = 0
      resets[i] = tonumber(ARGV[4 * i + 5])
    end
  end
end
local function result(outcome, retry, limiting)
  local out = {outcome, retry, limiting, balance, refilled, refilledTo}
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
  if counts[i] >= tonumber(ARGV[4 * i + 4]) and resets[i] > wait then
    limiting, wait = i, resets[i]
  end
end
if limiting == 0 and cost > balance then
  limiting = n + 1
  wait = tonumber(ARGV[7])
  if wait <= 0 then wait = tonumber(ARGV[2]) end
end
if limiting > 0 then
  if redis.call('EXISTS', KEYS[2]) == 0 then
    redis.call('SET', KEYS[2], '0', 'PX', wait)
    if tonumber(ARGV[3]) > 0 then redis.call('SET', KEYS[3], '1', 'PX', ARGV[3]) end
    return result(1, wait, limiting)
  end
  if redis.call('EXISTS', KEYS[3]) == 1 then return result(1, wait, limiting) end
  local strikes = redis.call('INCR', KEYS[2])
  if strikes > tonumber(ARGV[1]) then
    redis.call('SET', KEYS[1], '1', 'PX', ARGV[2])
    redis.call('DEL', KEYS[2], KEYS[3])
    return result(3, tonumber(ARGV[2]), limiting)
  end
  return result(1, wait, limiting)
end
for i = 1, n do
  local key = KEYS[i + 5]
  counts[i] = redis.call('INCR', key)
  if ends[i] then
    if counts[i] == 1 then redis.call('PEXPIREAT', key, ends[i]) end
  elseif counts[i] == 1 or redis.call('PTTL', key) < 0 then
    redis.call('PEXPIRE', key, ARGV[4 * i + 5])
    resets[i] = tonumber(ARGV[4 * i + 5])
  end
end
if cost > 0 then balance = redis.call('DECRBY', KEYS[4], cost) end
return result(0, 0, 0)
`;

/**
 * A balance outside a decision (the admin API), atomically. KEYS: balance, last refill. ARGV: mode (0 read, 1 add,
 * 2 set, 3 drop), value. Returns {before, after} (after -1: dropped), or {-1} when no balance is held (the caller
 * has it rebuilt, as for a decision, and calls again).
 */
const CREDITS_SCRIPT = `
local held = redis.call('GET', KEYS[1])
if not held then return {-1} end
local before = tonumber(held)
local mode = tonumber(ARGV[1])
if mode == 1 then return {before, redis.call('INCRBY', KEYS[1], ARGV[2])} end
if mode == 2 then
  redis.call('SET', KEYS[1], ARGV[2])
  return {before, tonumber(ARGV[2])}
end
if mode == 3 then
  redis.call('DEL', KEYS[1], KEYS[2])
  return {before, -1}
end
return {before, before}
`;

/**
 * Who rebuilds a lost balance, once for the fleet. KEYS: balance, rebuild lock. ARGV: this rebuild's token, the
 * lock's life in ms. Returns 1 when a balance is held (nothing to rebuild), 2 when the lock is this caller's (it
 * rebuilds), 0 when another instance holds it (the caller waits for its balance).
 */
const CLAIM_SCRIPT = `
if redis.call('EXISTS', KEYS[1]) == 1 then return 1 end
if redis.call('SET', KEYS[2], ARGV[1], 'NX', 'PX', ARGV[2]) then return 2 end
return 0
`;

/**
 * A rebuilt balance set by the rebuild that holds the lock, and only by it: after a second loss the lock is
 * gone, and a rebuild counted before that loss must not be set (a new one counts the spend since). KEYS: balance,
 * last refill, rebuild lock. ARGV: token, balance (-1: the rebuild failed, the lock is released), last refilled
 * period start. Returns 1 when a balance is held afterwards, 0 otherwise.
 */
const SEED_SCRIPT = `
if redis.call('GET', KEYS[3]) ~= ARGV[1] then return redis.call('EXISTS', KEYS[1]) end
redis.call('DEL', KEYS[3])
if tonumber(ARGV[2]) < 0 then return redis.call('EXISTS', KEYS[1]) end
if redis.call('SET', KEYS[1], ARGV[2], 'NX') then redis.call('SET', KEYS[2], ARGV[3]) end
return 1
`;

/**
 * An anchored window's count raised to at least a figure (a monthly quota set mid-period: what the period already
 * used), cut as the consume script cuts it: it ends at the first of the two period ends still ahead of Redis's
 * clock. KEYS: the window's counter. ARGV: period end, next period end, at least. Returns the count now.
 */
const RAISE_SCRIPT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local periodEnd = tonumber(ARGV[1])
if periodEnd <= now then periodEnd = tonumber(ARGV[2]) end
local count = tonumber(redis.call('GET', KEYS[1]) or '0')
local atLeast = tonumber(ARGV[3])
if atLeast > count then count = atLeast end
if count > 0 then redis.call('SET', KEYS[1], count, 'PXAT', periodEnd) end
return count
`;

type ConsumeCommand = (numberOfKeys: number, ...args: Array<string | number>) => Promise<number[]>;

/** A consume call waiting for the next batch. */
interface QueuedConsume {
  args: Array<string | number>;
  resolve: (reply: number[]) => void;
  reject: (error: Error) => void;
}

/** The scripts that rebuild a lost balance once for the fleet. */
interface CreditCommands {
  rateLimitCredits(balance: string, refilled: string, mode: number, value: number): Promise<number[]>;
  rateLimitClaim(balance: string, lock: string, token: string, lockMs: number): Promise<number>;
  rateLimitSeed(
    balance: string,
    refilled: string,
    lock: string,
    token: string,
    seed: number,
    refilledPeriodStartMs: number,
  ): Promise<number>;
}

/** The longest a request waits for its balance to be rebuilt before a 503 with Retry-After. */
const REBUILD_WAIT_MS = 2_000;
/** Between two looks at a balance another instance is rebuilding. */
const REBUILD_POLL_MS = 25;

/** What a request is told to wait when no decision could be taken. */
const LATE_RETRY_AFTER_MS = 1_000;
const OUTAGE_RETRY_AFTER_MS = 5_000;

class LateReplyError extends Error {
  constructor(readonly sentAt: number) {
    super('late reply');
  }
}

export interface RedisRateLimitOptions {
  /** One server, a Cluster or a Sentinel-managed primary: every key of one call shares a hash slot ({tracker}). */
  connection: RedisConnectionConfig;
  keyPrefix: string;
  /** Longest wait for a reply on a live connection; beyond it the request gets 503, never a fallback. */
  replyTimeoutMs: number;
  /** Redis gone: `open` decides on the in-process counters, `closed` refuses with 503. */
  failureMode: 'open' | 'closed';
  /**
   * The life of a balance's rebuild lock: longer than the longest rebuild (the acknowledgement bound, 2 ×
   * USAGE_FLUSH_MS + 1 s, and a few queries); an instance that dies holding it delays that balance by at most this.
   */
  rebuildLockMs?: number;
}

/**
 * The consume script's arguments in the order CONSUME_SCRIPT reads them: the number of keys, the keys (ban,
 * strikes, grace, one per window), then the ban policy and each window's limit, ttl and period ends. One array built in place:
 * the spreads and flatMap it replaces, with the spread in toDecision, were ~3 % of a request's CPU (bench:budget).
 */
function consumeArguments(
  base: string,
  windows: WindowSpec[],
  ban: BanPolicy,
  credits: CreditSpec | undefined,
): Array<string | number> {
  const out: Array<string | number> = [
    5 + windows.length,
    `${base}:ban`,
    `${base}:strikes`,
    `${base}:grace`,
    `${base}:credits`,
    `${base}:refilled`,
  ];
  for (const window of windows) out.push(`${base}:w:${window.name}`);
  out.push(ban.threshold, ban.durationMs, ban.graceMs);
  if (credits === undefined) out.push(-1, 0, 0, 0);
  else {
    const refill = credits.refill;
    out.push(credits.cost, refill ? refill.amount : 0, refill ? refill.periodStartMs : 0, refill ? refill.waitMs : 0);
  }
  for (const window of windows) {
    const period = window.period;
    out.push(window.limit, window.ttlMs, period ? period.endMs : 0, period ? period.nextEndMs : 0);
  }
  return out;
}

/**
 * Counters in Redis, shared by every gateway instance.
 *
 * - Redis gone (the connection is not ready, or it dropped under a command, or Redis refused to run the
 *   script): with failure mode `open` the gateway decides on in-process counters (limits then hold per
 *   instance), starting from what Redis last said about each tracker (counts and bans); with `closed` it
 *   answers 503. Either way it says so once in the log, in the metrics and in readiness, and goes back to
 *   Redis as soon as the connection is ready again (ioredis reconnects by itself).
 * - Redis late (the connection is ready but the reply has not come within REDIS_COMMAND_TIMEOUT_MS): 503 with
 *   Retry-After. A slow event loop or a slow Redis is not an outage, and a fallback on a fresh quota there
 *   would admit far more than the limit. Only when no reply at all arrived since the late command was sent
 *   (a hung Redis) is the connection dropped, which makes Redis "gone" until it answers again.
 */
export class RedisRateLimitStore extends RateLimitStore {
  private readonly logger = new Logger('RateLimit');
  private readonly redis: Redis | Cluster;
  private readonly keyPrefix: string;
  private degraded = false;
  private lastLateLogAt = -Infinity;
  /** When the connection last delivered a reply: a late command with no reply at all since it was sent means a hung Redis. */
  private lastReplyAt = -Infinity;
  /** The balances being rebuilt (or waited for) by this instance, one per tracker. */
  private readonly rebuilds = new Map<string, Promise<void>>();
  /** The consume calls of this event-loop turn, sent together at its end (see `send`). */
  private queued: QueuedConsume[] | undefined;
  private readonly flushQueued = (): void => this.flush();

  constructor(
    private readonly options: RedisRateLimitOptions,
    private readonly fallback: MemoryRateLimitStore,
    private readonly metrics: RateLimitMetrics,
    private readonly clock: Clock,
  ) {
    super();
    this.keyPrefix = options.keyPrefix;
    // No offline queue, no retries: a dropped connection fails its pending commands at once (they are then
    // decided as "Redis gone"). Failovers and cluster redirections are followed by ioredis.
    this.redis = createRedisConnection(options.connection, 'commands');
    this.redis.on('error', () => undefined); // reported through markDegraded, once per outage
    this.redis.defineCommand('rateLimitConsume', { lua: CONSUME_SCRIPT });
    this.redis.defineCommand('rateLimitCredits', { lua: CREDITS_SCRIPT, numberOfKeys: 2 });
    this.redis.defineCommand('rateLimitClaim', { lua: CLAIM_SCRIPT, numberOfKeys: 2 });
    this.redis.defineCommand('rateLimitSeed', { lua: SEED_SCRIPT, numberOfKeys: 3 });
    this.redis.defineCommand('rateLimitRaise', { lua: RAISE_SCRIPT, numberOfKeys: 1 });
  }

  async consume(key: string, windows: WindowSpec[], ban: BanPolicy, credits?: CreditSpec): Promise<Decision> {
    if (this.redis.status !== 'ready')
      return this.whileGone(key, windows, ban, credits, `connection ${this.redis.status}`);
    const base = `${this.keyPrefix}rl:{${key}}`;
    const args = consumeArguments(base, windows, ban, credits);
    let reply = await this.call(args);
    if (reply === undefined) return this.whileGone(key, windows, ban, credits, 'connection lost');
    while (reply[0] === 4 && credits !== undefined) {
      // Redis holds no balance (it came back empty): rebuilt once for the fleet, then decided as usual.
      await this.balanceRebuilt(base, credits.rebuild);
      reply = await this.call(args);
      if (reply === undefined) return this.whileGone(key, windows, ban, credits, 'connection lost');
    }
    this.markHealthy();
    const decision = this.toDecision(reply, windows, credits);
    this.fallback.remember(key, decision);
    return decision;
  }

  /** One script call within the reply timeout; undefined when Redis is gone (a late reply throws). */
  private async call(args: Array<string | number>): Promise<number[] | undefined> {
    try {
      return await this.withinTimeout(this.send(args));
    } catch (error) {
      if (error instanceof LateReplyError) throw this.late(error.sentAt);
      this.markDegraded((error as Error).message);
      return undefined;
    }
  }

  async credits(key: string, change: CreditChange, rebuild: () => Promise<CreditSeed>): Promise<CreditBalances> {
    const base = `${this.keyPrefix}rl:{${key}}`;
    const [mode, value] =
      'add' in change ? [1, change.add] : 'set' in change ? (change.set === null ? [3, 0] : [2, change.set]) : [0, 0];
    const run = () =>
      this.creditCommand((redis) => redis.rateLimitCredits(`${base}:credits`, `${base}:refilled`, mode, value));
    let reply = await run();
    while (reply.length === 1) {
      await this.balanceRebuilt(base, rebuild);
      reply = await run();
    }
    return { before: reply[0], after: reply[1] < 0 ? null : reply[1] };
  }

  /**
   * Resolves once Redis holds the tracker's balance again: rebuilt by one instance of the fleet (the one that
   * claims the rebuild lock; on this instance, one rebuild or one wait per tracker whatever the number of requests),
   * waited for by the others. A request waits at most REBUILD_WAIT_MS, then gets 503 with Retry-After (the rebuild
   * goes on); a rebuild that fails releases the lock.
   */
  private balanceRebuilt(base: string, rebuild: () => Promise<CreditSeed>): Promise<void> {
    let pending = this.rebuilds.get(base);
    if (pending === undefined) {
      pending = this.rebuildOrWait(base, rebuild).finally(() => this.rebuilds.delete(base));
      this.rebuilds.set(base, pending);
    }
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.metrics.countUnavailable('late');
        reject(new RateLimitUnavailableError('late', LATE_RETRY_AFTER_MS));
      }, REBUILD_WAIT_MS);
      pending.then(
        () => {
          clearTimeout(timer);
          resolve();
        },
        (error: unknown) => {
          clearTimeout(timer);
          reject(error);
        },
      );
    });
  }

  private async rebuildOrWait(base: string, rebuild: () => Promise<CreditSeed>): Promise<void> {
    const token = randomUUID();
    const keys = { balance: `${base}:credits`, refilled: `${base}:refilled`, lock: `${base}:rebuild` };
    for (;;) {
      const claim = await this.creditCommand<number>((redis) =>
        redis.rateLimitClaim(keys.balance, keys.lock, token, this.options.rebuildLockMs ?? 30_000),
      );
      if (claim === 1) return;
      if (claim === 2) {
        let seed: CreditSeed;
        try {
          seed = await rebuild();
        } catch (error) {
          await this.creditCommand((redis) =>
            redis.rateLimitSeed(keys.balance, keys.refilled, keys.lock, token, -1, 0),
          ).catch(() => undefined);
          this.logger.error(`Credit balance not rebuilt: ${(error as Error).message}`);
          throw new RateLimitUnavailableError('outage', OUTAGE_RETRY_AFTER_MS);
        }
        const held = await this.creditCommand<number>((redis) =>
          redis.rateLimitSeed(keys.balance, keys.refilled, keys.lock, token, seed.balance, seed.refilledPeriodStartMs),
        );
        if (held === 1) return;
        // Lost again while rebuilding (the lock went with it): a new rebuild counts the spend since.
        continue;
      }
      await new Promise((resolve) => setTimeout(resolve, REBUILD_POLL_MS));
    }
  }

  /** A credits script outside a decision, within the reply timeout; RateLimitUnavailableError when it cannot run. */
  private async creditCommand<T>(run: (redis: CreditCommands) => Promise<T>): Promise<T> {
    if (this.redis.status !== 'ready') throw new RateLimitUnavailableError('outage', OUTAGE_RETRY_AFTER_MS);
    try {
      return await this.withinTimeout(run(this.redis as unknown as CreditCommands));
    } catch (error) {
      throw error instanceof LateReplyError
        ? new RateLimitUnavailableError('late', LATE_RETRY_AFTER_MS)
        : new RateLimitUnavailableError('outage', OUTAGE_RETRY_AFTER_MS);
    }
  }

  /**
   * A round trip on the connection that carries the decisions: its reply comes after every decision sent
   * before it (one connection answers in order), so their spend is recorded once it resolves. On a Cluster the
   * PING goes to one node: the order holds for the trackers of that node only.
   */
  override async settle(): Promise<void> {
    if (this.redis.status !== 'ready') return;
    await this.withinTimeout(this.redis.ping()).catch(() => undefined);
  }

  /**
   * Sends one consume script call. On a single Redis (or one behind Sentinel), the calls of one event-loop turn
   * (the requests whose bytes arrived together) leave as one pipeline, one socket write, at the end of the turn
   * (setImmediate), and their replies come back in one read: a syscall pair per batch instead of per request.
   * Unlike ioredis's enableAutoPipelining, a batch never waits for the one before it, so a hung Redis does not
   * hold back the commands sent after its connection was dropped (they fail at once and are decided as "Redis
   * gone"). A Cluster pipeline may not mix hash slots, and every tracker has its own: there, calls go one by one.
   */
  private send(args: Array<string | number>): Promise<number[]> {
    if (this.options.connection.topology.kind === 'cluster') {
      return (this.redis as unknown as { rateLimitConsume: ConsumeCommand }).rateLimitConsume(
        ...(args as [number, ...string[]]),
      );
    }
    return new Promise<number[]>((resolve, reject) => {
      if (this.queued === undefined) {
        this.queued = [];
        setImmediate(this.flushQueued);
      }
      this.queued.push({ args, resolve, reject });
    });
  }

  private flush(): void {
    const batch = this.queued ?? [];
    this.queued = undefined;
    const consume = (this.redis as unknown as { rateLimitConsume: ConsumeCommand }).rateLimitConsume;
    // The batch's commands written to a corked socket leave in one write when it is uncorked, as a pipeline's
    // would, without ioredis's Pipeline (its object, its copy of every script, the batch's text concatenated, a
    // promise per command and one for the whole): each command is the one a lone call sends, with its own reply
    // and its own error (a script Redis lost is loaded again, NOSCRIPT, as for a lone call).
    const socket = batch.length > 1 ? (this.redis as unknown as { stream?: Writable }).stream : undefined;
    socket?.cork();
    try {
      for (const queued of batch)
        consume.apply(this.redis, queued.args as [number, ...string[]]).then(queued.resolve, queued.reject);
    } finally {
      socket?.uncork();
    }
  }

  /**
   * Read-only: PTTL and GET of the same keys `consume` uses, in one pipeline; the fallback's view while degraded,
   * or when the reply is later than the reply timeout (the admin API's usage never hangs on a Redis that hangs).
   */
  async usage(key: string, windows: WindowSpec[]): Promise<Usage> {
    const base = `${this.keyPrefix}rl:{${key}}`;
    const pipeline = this.redis.pipeline().pttl(`${base}:ban`);
    for (const w of windows) pipeline.get(`${base}:w:${w.name}`).pttl(`${base}:w:${w.name}`);
    let replies: Array<[Error | null, unknown]> | null;
    try {
      replies = await this.withinTimeout(pipeline.exec());
    } catch (error) {
      replies = null;
      if (!(error instanceof LateReplyError)) this.markDegraded((error as Error).message);
    }
    const failed = replies?.find(([error]) => error !== null);
    if (!replies || failed) {
      if (failed) this.markDegraded(failed[0]!.message);
      return this.fallback.usage(key, windows);
    }
    const value = (i: number) => replies![i][1];
    const ban = Number(value(0));
    return {
      windows: windows.map((spec, i) => {
        const ttl = Number(value(2 + 2 * i));
        const count = ttl > 0 ? Number(value(1 + 2 * i) ?? 0) : 0;
        if (spec.period) {
          // Where the next consume cuts it (re-cut if the anchor moved since), by this instance's clock.
          const now = this.clock.now();
          return {
            ...spec,
            count,
            resetMs: (spec.period.endMs > now ? spec.period.endMs : spec.period.nextEndMs) - now,
          };
        }
        return ttl > 0 ? { ...spec, count, resetMs: ttl } : { ...spec, count: 0, resetMs: spec.ttlMs };
      }),
      bannedForMs: ban > 0 ? ban : 0,
    };
  }

  /**
   * Deletes the tracker's ban, strikes and grace keys (one slot: the tracker is their hash tag) within the reply
   * timeout, then forgets them in this instance's fallback. While Redis is gone or late: RateLimitUnavailableError.
   */
  async raiseWindow(key: string, window: WindowSpec & { period: AnchoredPeriod }, atLeast: number): Promise<number> {
    if (this.redis.status !== 'ready') throw new RateLimitUnavailableError('outage', OUTAGE_RETRY_AFTER_MS);
    try {
      return await this.withinTimeout(
        (
          this.redis as unknown as { rateLimitRaise: (...args: Array<string | number>) => Promise<number> }
        ).rateLimitRaise(
          `${this.keyPrefix}rl:{${key}}:w:${window.name}`,
          window.period.endMs,
          window.period.nextEndMs,
          atLeast,
        ),
      );
    } catch (error) {
      throw error instanceof LateReplyError
        ? new RateLimitUnavailableError('late', LATE_RETRY_AFTER_MS)
        : new RateLimitUnavailableError('outage', OUTAGE_RETRY_AFTER_MS);
    }
  }

  async unban(key: string): Promise<void> {
    const base = `${this.keyPrefix}rl:{${key}}`;
    if (this.redis.status !== 'ready') throw new RateLimitUnavailableError('outage', OUTAGE_RETRY_AFTER_MS);
    try {
      await this.withinTimeout(this.redis.del(`${base}:ban`, `${base}:strikes`, `${base}:grace`));
    } catch (error) {
      throw error instanceof LateReplyError
        ? new RateLimitUnavailableError('late', LATE_RETRY_AFTER_MS)
        : new RateLimitUnavailableError('outage', OUTAGE_RETRY_AFTER_MS);
    }
    this.fallback.forgetBan(key);
  }

  forgetBan(key: string): void {
    this.fallback.forgetBan(key);
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
    if (!ready) this.markDegraded(`no connection within ${timeoutMs} ms`);
  }

  override readonly dependency = 'Redis';

  /** Whether decisions currently come from Redis (for readiness). */
  override async ping(): Promise<boolean> {
    if (this.redis.status !== 'ready') return false;
    try {
      return (await this.withinTimeout(this.redis.ping())) === 'PONG';
    } catch {
      return false;
    }
  }

  override async close(): Promise<void> {
    await this.fallback.close();
    this.redis.disconnect();
  }

  private toDecision(reply: number[], windows: WindowSpec[], credits: CreditSpec | undefined): Decision {
    const [outcome, retryAfterMs, limiting, balance, refilled, refilledTo] = reply;
    // Fields written out, not spread (see consumeArguments).
    const states: WindowState[] = windows.map((spec, i) => ({
      name: spec.name,
      limit: spec.limit,
      ttlMs: spec.ttlMs,
      count: reply[6 + 2 * i],
      resetMs: reply[7 + 2 * i],
    }));
    const state = credits && creditState(credits, balance, refilled, refilledTo);
    if (outcome === 2 || outcome === 3)
      return { outcome: 'banned', windows: states, retryAfterMs, started: outcome === 3, credits: state };
    if (outcome === 1) {
      if (limiting > windows.length && !refillCovers(credits!))
        return { outcome: 'exhausted', windows: states, credits: state };
      const window = limiting > windows.length ? CREDITS_POLICY : windows[limiting - 1].name;
      return { outcome: 'limited', windows: states, window, retryAfterMs, credits: state };
    }
    return { outcome: 'allowed', windows: states, credits: state };
  }

  /** Redis is gone: decide on the in-process counters (open), or refuse (closed; always with credits). */
  private whileGone(
    key: string,
    windows: WindowSpec[],
    ban: BanPolicy,
    credits: CreditSpec | undefined,
    reason: string,
  ): Promise<Decision> {
    this.markDegraded(reason);
    if (this.options.failureMode === 'closed' || credits !== undefined) {
      this.metrics.countUnavailable('outage');
      throw new RateLimitUnavailableError('outage', OUTAGE_RETRY_AFTER_MS);
    }
    this.metrics.countFallback();
    return this.fallback.consume(key, windows, ban);
  }

  private late(sentAt: number): RateLimitUnavailableError {
    this.metrics.countUnavailable('late');
    // Durations and order of events, not dates: the monotonic clock (it never jumps with the wall clock).
    const now = this.clock.monotonic();
    if (this.lastReplyAt < sentAt && this.redis.status === 'ready') {
      // Not one reply since this command went out: not a slow reply but a Redis that hangs with the connection
      // open. Treat the connection as lost: ioredis fails what is pending and reconnects, and until Redis
      // answers again (its ready check) requests are decided by the failure mode.
      this.logger.error(
        `Redis sent no reply for ${this.options.replyTimeoutMs} ms: dropping the connection and reconnecting`,
      );
      this.redis.disconnect(true);
    }
    if (now - this.lastLateLogAt > 60_000) {
      this.lastLateLogAt = now;
      this.logger.warn(
        `Redis replied later than ${this.options.replyTimeoutMs} ms on a live connection: answering 503 (counted in rate_limit_undecided_total)`,
      );
    }
    return new RateLimitUnavailableError('late', LATE_RETRY_AFTER_MS);
  }

  /**
   * Rejects with LateReplyError when `pending` has not settled `replyTimeoutMs` after the call. When the timer
   * fires, the check waits for setImmediate: a reply already sitting in the socket is read in the poll phase
   * before it, so a reply that only waited on this process's own busy event loop is not counted as late.
   */
  private withinTimeout<T>(pending: Promise<T>): Promise<T> {
    const sentAt = this.clock.monotonic();
    return new Promise<T>((resolve, reject) => {
      let settled = false;
      const timer = setTimeout(
        () =>
          setImmediate(() => {
            if (settled) return;
            settled = true;
            reject(new LateReplyError(sentAt));
          }),
        this.options.replyTimeoutMs,
      );
      pending.then(
        (value) => {
          this.lastReplyAt = this.clock.monotonic();
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          resolve(value);
        },
        (error: unknown) => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          reject(error);
        },
      );
    });
  }

  private markDegraded(reason: string): void {
    if (this.degraded) return;
    this.degraded = true;
    this.metrics.setDegraded(true);
    const what =
      this.options.failureMode === 'closed'
        ? 'answering 503 (RATE_LIMIT_FAILURE_MODE=closed)'
        : 'rate limits now count per gateway instance';
    this.logger.error(`Redis unreachable (${reason}): ${what} until it returns`);
  }

  private markHealthy(): void {
    if (!this.degraded) return;
    this.degraded = false;
    this.metrics.setDegraded(false);
    this.logger.warn('Redis reachable again: rate limits are shared across instances again');
  }
}
