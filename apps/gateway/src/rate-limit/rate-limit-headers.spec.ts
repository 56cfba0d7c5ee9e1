import { rateLimitHeaders } from './rate-limit-headers';
import { Decision } from './rate-limit-store';

const now = 1_700_000_000_000;
const minute = { name: 'minute', limit: 60, ttlMs: 60_000 };
const day = { name: 'day', limit: 1000, ttlMs: 86_400_000 };

describe('rateLimitHeaders', () => {
  it('describes the window closest to running out, with Reset as a Unix timestamp', () => {
    const decision: Decision = {
      outcome: 'allowed',
      windows: [
        { ...minute, count: 10, resetMs: 30_500 },
        { ...day, count: 995, resetMs: 3_600_000 },
      ],
    };
    expect(rateLimitHeaders(decision, now)).toEqual({
      'X-RateLimit-Limit': '1000',
      'X-RateLimit-Remaining': '5',
      'X-RateLimit-Reset': String(Math.ceil((now + 3_600_000) / 1000)),
      'RateLimit-Policy': '"minute";q=60;w=60, "day";q=1000;w=86400',
      RateLimit: '"day";r=5;t=3600',
    });
  });

  it('on a tie of remaining requests reports the window that resets later', () => {
    const decision: Decision = {
      outcome: 'allowed',
      windows: [
        { ...minute, limit: 5, count: 5, resetMs: 10_000 },
        { ...day, limit: 5, count: 5, resetMs: 20_000 },
      ],
    };
    expect(rateLimitHeaders(decision, now)['X-RateLimit-Limit']).toBe('5');
    expect(rateLimitHeaders(decision, now)['X-RateLimit-Reset']).toBe(String(Math.ceil((now + 20_000) / 1000)));
  });

  it('on a refusal reports the limiting window with Remaining 0 and Retry-After in whole seconds', () => {
    const decision: Decision = {
      outcome: 'limited',
      window: 'minute',
      retryAfterMs: 12_001,
      windows: [
        { ...minute, count: 60, resetMs: 12_001 },
        { ...day, count: 100, resetMs: 50_000_000 },
      ],
    };
    const headers = rateLimitHeaders(decision, now);
    expect(headers['X-RateLimit-Limit']).toBe('60');
    expect(headers['X-RateLimit-Remaining']).toBe('0');
    expect(headers['Retry-After']).toBe('13');
    expect(headers.RateLimit).toBe('"minute";r=0;t=13');
  });

  it('on a ban makes every field tell the same story: Remaining 0, Reset and every t at the end of the ban', () => {
    const decision: Decision = {
      outcome: 'banned',
      retryAfterMs: 503_000,
      windows: [
        { ...minute, count: 60, resetMs: 5_000 },
        { ...day, count: 100, resetMs: 50_000_000 },
      ],
    };
    const headers = rateLimitHeaders(decision, now);
    expect(headers['Retry-After']).toBe('503');
    expect(headers['X-RateLimit-Remaining']).toBe('0');
    expect(headers['X-RateLimit-Reset']).toBe(String(Math.ceil((now + 503_000) / 1000)));
    expect(headers.RateLimit).toBe('"minute";r=0;t=503');
  });

  it('on a ban shorter than a spent window, waits for the window too: Retry-After is when a request can pass', () => {
    const decision: Decision = {
      outcome: 'banned',
      retryAfterMs: 2_000,
      windows: [{ ...minute, count: 60, resetMs: 40_000 }],
    };
    const headers = rateLimitHeaders(decision, now);
    expect(headers['Retry-After']).toBe('40');
    expect(headers['X-RateLimit-Reset']).toBe(String(Math.ceil((now + 40_000) / 1000)));
    expect(headers.RateLimit).toBe('"minute";r=0;t=40');
  });

  it('on a 503 without a decision says nothing can pass before Retry-After', () => {
    const decision: Decision = {
      outcome: 'unavailable',
      retryAfterMs: 1_000,
      windows: [
        { ...minute, count: 0, resetMs: 60_000 },
        { ...day, count: 0, resetMs: 86_400_000 },
      ],
    };
    const headers = rateLimitHeaders(decision, now);
    expect(headers['Retry-After']).toBe('1');
    expect(headers['X-RateLimit-Remaining']).toBe('0');
    expect(headers['X-RateLimit-Reset']).toBe(String(Math.ceil((now + 1_000) / 1000)));
    expect(headers.RateLimit).toBe('"minute";r=0;t=1');
  });

  it.each<[string, Decision]>([
    [
      'allowed',
      {
        outcome: 'allowed',
        windows: [
          { ...minute, count: 60, resetMs: 7_000 },
          { ...day, count: 70, resetMs: 9_000_000 },
        ],
      },
    ],
    [
      'limited',
      {
        outcome: 'limited',
        window: 'minute',
        retryAfterMs: 7_000,
        windows: [
          { ...minute, count: 60, resetMs: 7_000 },
          { ...day, count: 70, resetMs: 9_000_000 },
        ],
      },
    ],
    [
      'banned',
      {
        outcome: 'banned',
        retryAfterMs: 90_000,
        windows: [
          { ...minute, count: 60, resetMs: 7_000 },
          { ...day, count: 70, resetMs: 9_000_000 },
        ],
      },
    ],
  ])(
    'when %s, X-RateLimit-* agree with the RateLimit field of the reported window and with Retry-After',
    (_, decision) => {
      const headers = rateLimitHeaders(decision, now);
      const reported = new RegExp(`"minute";r=(\\d+);t=(\\d+)`).exec(headers.RateLimit)!;
      expect(headers['X-RateLimit-Remaining']).toBe(reported[1]);
      expect(Number(headers['X-RateLimit-Reset'])).toBe(Math.ceil((now + Number(reported[2]) * 1000) / 1000));
      if (decision.outcome !== 'allowed') expect(headers['Retry-After']).toBe(reported[2]);
      else expect(headers['Retry-After']).toBeUndefined();
    },
  );

  // A request arrives at any point of a second: 900 ms into one, a wait of 12.5 s ends 13.4 s later, in
  // the 14th second after the current one. Reset is that second and Retry-After the seconds to it from the current
  // one (the Unix seconds a client reads off its clock): Reset = now + Retry-After exactly, and neither is early.
  it.each<[string, Decision]>([
    ['allowed', { outcome: 'allowed', windows: [{ ...minute, count: 10, resetMs: 12_500 }] }],
    [
      'limited',
      {
        outcome: 'limited',
        window: 'minute',
        retryAfterMs: 12_500,
        windows: [{ ...minute, count: 60, resetMs: 12_500 }],
      },
    ],
    ['banned', { outcome: 'banned', retryAfterMs: 12_500, windows: [{ ...minute, count: 60, resetMs: 5_000 }] }],
  ])(
    'when %s at any millisecond of a second, Reset = now (Unix seconds) + Retry-After, and neither is early',
    (_, decision) => {
      for (const at of [now, now + 1, now + 100, now + 900, now + 999]) {
        const headers = rateLimitHeaders(decision, at);
        const reset = Number(headers['X-RateLimit-Reset']);
        const t = Number(/"minute";r=\d+;t=(\d+)/.exec(headers.RateLimit)![1]);
        expect(reset).toBe(Math.floor(at / 1000) + t);
        expect(reset * 1000).toBeGreaterThanOrEqual(at + 12_500);
        expect(reset * 1000).toBeLessThan(at + 12_500 + 1000);
        if (decision.outcome === 'allowed') {
          expect(headers['Retry-After']).toBeUndefined();
        } else {
          expect(Number(headers['Retry-After'])).toBe(t);
          // Waiting Retry-After seconds from the moment of the answer is never too early.
          expect(Number(headers['Retry-After']) * 1000).toBeGreaterThanOrEqual(12_500);
        }
      }
    },
  );

  it('on a 503 at any millisecond of a second, sends its back-off hint as it is, and Reset = now + Retry-After', () => {
    const decision: Decision = {
      outcome: 'unavailable',
      retryAfterMs: 1_000,
      windows: [{ ...minute, count: 0, resetMs: 60_000 }],
    };
    for (const at of [now, now + 1, now + 900, now + 999]) {
      const headers = rateLimitHeaders(decision, at);
      expect(headers['Retry-After']).toBe('1');
      expect(headers['X-RateLimit-Reset']).toBe(String(Math.floor(at / 1000) + 1));
      expect(headers.RateLimit).toBe('"minute";r=0;t=1');
    }
  });

  it('never sends a negative Remaining', () => {
    const decision: Decision = { outcome: 'allowed', windows: [{ ...minute, count: 61, resetMs: 1_000 }] };
    expect(rateLimitHeaders(decision, now)['X-RateLimit-Remaining']).toBe('0');
  });

  it('names the violated policy in RateLimit on a refusal by the month, with the month’s period as its w', () => {
    const month = { name: 'month', limit: 5000, ttlMs: 30 * 86_400_000 };
    const decision: Decision = {
      outcome: 'limited',
      window: 'month',
      retryAfterMs: 3 * 86_400_000,
      windows: [
        { ...minute, count: 1, resetMs: 59_000 },
        { ...day, count: 1, resetMs: 86_000_000 },
        { ...month, count: 5000, resetMs: 3 * 86_400_000 },
      ],
    };
    const headers = rateLimitHeaders(decision, now);
    expect(headers['RateLimit-Policy']).toBe('"minute";q=60;w=60, "day";q=1000;w=86400, "month";q=5000;w=2592000');
    expect(headers.RateLimit).toBe('"month";r=0;t=259200');
    expect(headers['Retry-After']).toBe('259200');
    expect(headers['X-RateLimit-Limit']).toBe('5000');
  });
});

/**
 * The fields' syntax, checked against draft-ietf-httpapi-ratelimit-headers-11: both are Structured Field Lists
 * (RFC 8941) of Items whose value is a String (the policy name) with Integer parameters; RateLimit-Policy items
 * carry `q` (required, >= 0) and `w` (seconds, > 0); RateLimit items carry `r` (required, >= 0) and `t` (>= 0), and
 * name a policy of RateLimit-Policy.
 */
describe('the RateLimit fields, parsed as the draft defines them', () => {
  type Item = { name: string; params: Record<string, number> };
  /** A strict parser for the subset the draft uses: sf-string items, integer parameters, OWS around commas. */
  function parseList(field: string): Item[] {
    const item = /^"((?:[\x20-\x21\x23-\x5b\x5d-\x7e]|\\["\\])*)"((?:;[a-z*][a-z0-9_.*-]*=-?\d{1,15})*)$/;
    return field.split(/[ \t]*,[ \t]*/).map((member) => {
      const match = item.exec(member);
      if (!match) throw new Error(`not an sf-item of a string with integer parameters: ${member}`);
      const params: Record<string, number> = {};
      for (const param of match[2].split(';').slice(1)) {
        const [key, value] = param.split('=');
        if (key in params) throw new Error(`parameter ${key} twice in ${member}`);
        params[key] = Number(value);
      }
      return { name: match[1], params };
    });
  }
  const month = { name: 'month', limit: 100_000, ttlMs: 2_678_400_000 };
  const cases: Array<[string, Decision]> = [
    [
      'allowed',
      {
        outcome: 'allowed',
        windows: [
          { ...minute, count: 3, resetMs: 40_000 },
          { ...day, count: 10, resetMs: 80_000_000 },
          { ...month, count: 99_990, resetMs: 1_000_000_000 },
        ],
      },
    ],
    [
      'limited',
      {
        outcome: 'limited',
        window: 'day',
        retryAfterMs: 5_000_000,
        windows: [
          { ...minute, count: 3, resetMs: 40_000 },
          { ...day, count: 1000, resetMs: 5_000_000 },
        ],
      },
    ],
    ['banned', { outcome: 'banned', retryAfterMs: 600_000, windows: [{ ...minute, count: 60, resetMs: 1_000 }] }],
    ['unavailable', { outcome: 'unavailable', retryAfterMs: 5_000, windows: [{ ...minute, count: 0, resetMs: 1 }] }],
  ];

  it.each(cases)('when %s: well-formed, one RateLimit item, naming a listed policy', (_, decision) => {
    const headers = rateLimitHeaders(decision, now);
    const policies = parseList(headers['RateLimit-Policy']);
    expect(policies.map((p) => p.name)).toEqual(decision.windows.map((w) => w.name));
    for (const policy of policies) {
      expect(Object.keys(policy.params).sort()).toEqual(['q', 'w']);
      expect(policy.params.q).toBeGreaterThanOrEqual(0);
      expect(policy.params.w).toBeGreaterThan(0);
    }
    const limits = parseList(headers.RateLimit);
    expect(limits).toHaveLength(1);
    expect(policies.map((p) => p.name)).toContain(limits[0].name);
    expect(Object.keys(limits[0].params).sort()).toEqual(['r', 't']);
    expect(limits[0].params.r).toBeGreaterThanOrEqual(0);
    expect(limits[0].params.t).toBeGreaterThanOrEqual(0);
    // The nearest exhaustion: no policy has fewer requests left.
    const left = decision.windows.map((w) => Math.max(0, w.limit - w.count));
    if (decision.outcome === 'allowed') expect(limits[0].params.r).toBe(Math.min(...left));
    else expect(limits[0].params.r).toBe(0);
    if (decision.outcome === 'limited') expect(limits[0].name).toBe(decision.window);
  });

  it('the parser itself refuses what the draft does not allow', () => {
    expect(() => parseList('minute;r=1')).toThrow();
    expect(() => parseList('"minute";r=1.5')).toThrow();
    expect(() => parseList('"minute";r=1;r=2')).toThrow();
    expect(() => parseList('"minute", ')).toThrow();
  });
});
