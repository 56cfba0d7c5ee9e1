import { randomBytes } from 'node:crypto';
import { adminCall, FakeClock, mintKey } from '../../support/gateway';
import { call, Reply } from '../../support/http';
import { withStack } from '../../support/with-stack';

const as = (key: string) => ({ headers: { authorization: `Bearer ${key}` } });
const unique = (prefix: string) => `${prefix}-${randomBytes(4).toString('hex')}`;
/** 10:00:00.437 UTC: a moment 437 ms into its second, where rounding to whole seconds shows. */
const MORNING = Date.parse('2026-11-27T10:00:00.437Z');
const MIDNIGHT_S = Date.parse('2026-11-28T00:00:00.000Z') / 1000;
/** Refusals are never strikes enough for a ban here. */
const ENV = { BAN_THRESHOLD: '1000000', USAGE_FLUSH_MS: '200' };

const rateLimitOf = (reply: Reply) => ({
  limit: reply.headers.get('x-ratelimit-limit'),
  remaining: reply.headers.get('x-ratelimit-remaining'),
  reset: reply.headers.get('x-ratelimit-reset'),
  rateLimit: reply.headers.get('ratelimit'),
  retryAfter: reply.headers.get('retry-after'),
});

/**
 * The values of the rate-limit headers (docs/rate-limits.md, "Headers"), exactly, on the gateway's injected clock
 * at a moment 437 ms into a second: `t` never above its policy's `w` (the first request of a fresh minute says
 * t=60, not 61); the legacy X-RateLimit-* describe a request window, never the credits: the window's fixed quota,
 * and one reset instant per window or refill, the same Unix second on every answer about it. On the in-process
 * store, whose windows run on the injected clock (Redis counts its windows by its own time).
 */
describe('rate-limit header values', () => {
  const clock = new FakeClock();
  const stack = withStack({ pets: {}, gateway: { clock, env: { ...ENV, REDIS_URL: '' } } });

  /** A request at `ms` after MORNING by the gateway's clock. */
  const at = async (ms: number, key: string) => {
    clock.set(MORNING + ms);
    return call(`${stack.gateway.url}/v1/pets?limit=1`, as(key));
  };
  const credited = async (balance: number, refill: { amount: number; every: 'day' } | null) => {
    const name = unique('credits');
    const key = await mintKey(stack.gateway, 'free', name);
    if (refill) await adminCall(stack.gateway, 'PATCH', `/consumers/${name}/billing`, { creditRefill: refill });
    expect(
      (await adminCall(stack.gateway, 'PUT', `/consumers/${name}/credits`, { balance, reason: 'test' })).status,
    ).toBe(200);
    return key;
  };

  it('says t=60 with w=60 on the first request of a fresh minute, and one Reset for the whole window', async () => {
    const key = await mintKey(stack.gateway, 'free', unique('fresh'));
    const first = await at(0, key);
    expect(first.headers.get('ratelimit-policy')).toBe('"minute";q=60;w=60, "day";q=1000;w=86400');
    const windowEnd = String(Math.ceil((MORNING + 60_000) / 1000));
    expect(rateLimitOf(first)).toEqual({
      limit: '60',
      remaining: '59',
      reset: windowEnd,
      rateLimit: '"minute";r=59;t=60',
      retryAfter: null,
    });
    // 20.3 s later, 737 ms into its second: 39.7 s left, t=40; the same Reset.
    expect(rateLimitOf(await at(20_300, key))).toEqual({
      limit: '60',
      remaining: '58',
      reset: windowEnd,
      rateLimit: '"minute";r=58;t=40',
      retryAfter: null,
    });
  });

  it('with credits and no refill: X-RateLimit-* keep the minute (limit 60), RateLimit names the credits', async () => {
    const key = await credited(2, null);
    const windowEnd = String(Math.ceil((MORNING + 60_000) / 1000));
    const answers = [await at(0, key), await at(1_100, key), await at(2_200, key)];
    expect(answers.map((a) => a.status)).toEqual([200, 200, 402]);
    expect(answers.map(rateLimitOf)).toEqual([
      { limit: '60', remaining: '59', reset: windowEnd, rateLimit: '"credits";r=1', retryAfter: null },
      { limit: '60', remaining: '58', reset: windowEnd, rateLimit: '"credits";r=0', retryAfter: null },
      // Refused: nothing passes now (Remaining 0); no Retry-After, no t: only a top-up helps.
      { limit: '60', remaining: '0', reset: windowEnd, rateLimit: '"credits";r=0', retryAfter: null },
    ]);
  });

  it('with credits and a daily refill: a refusal says Remaining 0 and Reset = the refill’s midnight, every time', async () => {
    const key = await credited(1, { amount: 1, every: 'day' });
    const answers = [await at(0, key), await at(100, key), await at(5_650, key)];
    expect(answers.map((a) => a.status)).toEqual([200, 429, 429]);
    const untilMidnight = (ms: number) => String(Math.ceil((MIDNIGHT_S * 1000 - (MORNING + ms)) / 1000));
    expect(answers.map(rateLimitOf)).toEqual([
      {
        limit: '60',
        remaining: '59',
        reset: String(Math.ceil((MORNING + 60_000) / 1000)),
        rateLimit: `"credits";r=0;t=${untilMidnight(0)}`,
        retryAfter: null,
      },
      {
        limit: '60',
        remaining: '0',
        reset: String(MIDNIGHT_S),
        rateLimit: `"credits";r=0;t=${untilMidnight(100)}`,
        retryAfter: untilMidnight(100),
      },
      {
        limit: '60',
        remaining: '0',
        reset: String(MIDNIGHT_S),
        rateLimit: `"credits";r=0;t=${untilMidnight(5_650)}`,
        retryAfter: untilMidnight(5_650),
      },
    ]);
    expect(answers[0].headers.get('ratelimit-policy')).toBe(
      '"minute";q=60;w=60, "day";q=1000;w=86400, "credits";q=1;w=86400',
    );
  });
});
