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

  it('on a ban: Remaining 0, Retry-After and Reset at the end of the ban, and no t (the ban decides, not the policy)', () => {
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
    // A t of 503 would exceed the minute's w=60: t counts down to the policy's reset, which is not when a request passes.
    expect(headers.RateLimit).toBe('"minute";r=0');
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
    expect(headers.RateLimit).toBe('"minute";r=0');
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
      const reported = new RegExp(`"minute";r=(\\d+)(?:;t=(\\d+))?$`).exec(headers.RateLimit)!;
      expect(headers['X-RateLimit-Remaining']).toBe(reported[1]);
      const wait = decision.outcome === 'banned' ? headers['Retry-After'] : reported[2];
      expect(Number(headers['X-RateLimit-Reset'])).toBe(Math.ceil((now + Number(wait) * 1000) / 1000));
      if (decision.outcome === 'allowed') expect(headers['Retry-After']).toBeUndefined();
      else if (decision.outcome === 'limited') expect(headers['Retry-After']).toBe(reported[2]);
      else expect(reported[2]).toBeUndefined();
    },
  );

  // A request arrives at any point of a second: 900 ms into one, a wait of 12.5 s ends 13.4 s later. Retry-After and
  // `t` are delays counted from the answer, rounded up (13: never early, whatever the client's clock says); Reset is
  // the instant itself, the first Unix second at or after it (now's second + 14 here): never early either.
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
  ])('when %s at any millisecond of a second, neither the delays nor Reset are early', (_, decision) => {
    for (const at of [now, now + 1, now + 100, now + 900, now + 999]) {
      const headers = rateLimitHeaders(decision, at);
      const reset = Number(headers['X-RateLimit-Reset']);
      expect(reset).toBe(Math.ceil((at + 12_500) / 1000));
      const t = /;t=(\d+)/.exec(headers.RateLimit)?.[1];
      if (decision.outcome === 'allowed') {
        expect(t).toBe('13');
        expect(headers['Retry-After']).toBeUndefined();
      } else {
        expect(headers['Retry-After']).toBe('13');
        expect(t).toBe(decision.outcome === 'banned' ? undefined : '13');
      }
    }
  });

  // The first request of a fresh window (its reset a whole window away) at any millisecond: `t` is the window's
  // length, never one more; Reset is the same second for every answer about that window, whenever it is sent.
  it('never sends a t above the policy’s w, and one Reset per window, at any millisecond', () => {
    const opened = now + 437;
    for (const at of [opened, opened + 1, opened + 563, opened + 30_000, opened + 59_999]) {
      const headers = rateLimitHeaders(
        { outcome: 'allowed', windows: [{ ...minute, count: 1, resetMs: opened + 60_000 - at }] },
        at,
      );
      const t = Number(/;t=(\d+)$/.exec(headers.RateLimit)![1]);
      expect(t).toBeLessThanOrEqual(60);
      expect(t).toBe(Math.ceil((opened + 60_000 - at) / 1000));
      expect(headers['X-RateLimit-Reset']).toBe(String(Math.ceil((opened + 60_000) / 1000)));
    }
    expect(
      rateLimitHeaders({ outcome: 'allowed', windows: [{ ...minute, count: 1, resetMs: 60_000 }] }, opened).RateLimit,
    ).toBe('"minute";r=59;t=60');
  });

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
 * (RFC 8941 / RFC 9651) of Items whose value is a String (the policy name) with Parameters. RateLimit-Policy items
 * carry `q` (required, Integer >= 0), `w` (Integer seconds > 0) and `qu` (a String among the registered quota units:
 * "requests", the default, "content-bytes", "concurrent-requests"); RateLimit items carry `r` (required, Integer
 * >= 0) and `t` (Integer >= 0) and name a policy of RateLimit-Policy. Other parameters are allowed (comments), so
 * the parser reads every bare item RFC 8941 defines for a parameter value: Integer, Decimal, String, Token, Byte
 * Sequence, Boolean (a key alone is true).
 */
describe('the RateLimit fields, parsed as the draft defines them', () => {
  type Bare = number | string | boolean | { token: string } | { bytes: string };
  type Item = { name: string; params: Record<string, Bare> };
  const QUOTA_UNITS = ['requests', 'content-bytes', 'concurrent-requests'];

  /** A strict RFC 8941 List parser (§4.2.1) for Items whose bare item is a String, as the draft requires. */
  function parseList(field: string): Item[] {
    let at = 0;
    const fail = (what: string): never => {
      throw new Error(`${what} at ${at} of ${JSON.stringify(field)}`);
    };
    const skip = (chars: string) => {
      while (at < field.length && chars.includes(field[at])) at++;
    };
    const bareItem = (): Bare => {
      const c = field[at];
      if (c === '"') {
        let out = '';
        for (at++; ; at++) {
          if (at >= field.length) fail('unterminated string');
          const ch = field[at];
          if (ch === '\\') {
            const next = field[++at];
            if (next !== '"' && next !== '\\') fail('bad escape');
            out += next;
          } else if (ch === '"') {
            at++;
            return out;
          } else if (ch < ' ' || ch > '~') fail('non-printable in string');
          else out += ch;
        }
      }
      if (c === '-' || (c >= '0' && c <= '9')) {
        const m = /^-?(\d{1,15})(\.\d{1,3})?/.exec(field.slice(at));
        if (!m || (m[2] && m[1].length > 12)) fail('bad number');
        at += m![0].length;
        return Number(m![0]);
      }
      if (c === '?') {
        const v = field[at + 1];
        if (v !== '0' && v !== '1') fail('bad boolean');
        at += 2;
        return v === '1';
      }
      if (c === ':') {
        const m = /^:([A-Za-z0-9+/=]*):/.exec(field.slice(at));
        if (!m) fail('bad byte sequence');
        at += m![0].length;
        return { bytes: m![1] };
      }
      const m = /^[A-Za-z*][!#$%&'*+\-.^_`|~0-9A-Za-z:/]*/.exec(field.slice(at));
      if (!m) fail('not a bare item');
      at += m![0].length;
      return { token: m![0] };
    };
    const items: Item[] = [];
    skip(' ');
    while (at < field.length) {
      const name = bareItem();
      if (typeof name !== 'string') fail('the item is not a String');
      const params: Record<string, Bare> = {};
      while (field[at] === ';') {
        at++;
        skip(' ');
        const key = /^[a-z*][a-z0-9_\-.*]*/.exec(field.slice(at));
        if (!key) fail('bad parameter key');
        at += key![0].length;
        // RFC 8941 keeps the last value of a repeated key; a server sending one twice says two things: refused.
        if (key![0] in params) fail(`parameter ${key![0]} twice`);
        if (field[at] === '=') {
          at++;
          params[key![0]] = bareItem();
        } else params[key![0]] = true;
      }
      items.push({ name: name as string, params });
      skip(' \t');
      if (at >= field.length) return items;
      if (field[at] !== ',') fail('expected a comma');
      at++;
      skip(' \t');
      if (at >= field.length) fail('trailing comma');
    }
    return fail('empty list');
  }
  const isInteger = (v: Bare): v is number => typeof v === 'number' && Number.isInteger(v);
  /** Every RateLimit-Policy item as the draft's §3.1 has it. */
  function expectPolicyItems(policies: Item[]) {
    for (const { params } of policies) {
      expect(isInteger(params.q) && params.q >= 0).toBe(true);
      if ('w' in params) expect(isInteger(params.w) && params.w > 0).toBe(true);
      if ('qu' in params) expect(QUOTA_UNITS).toContain(params.qu);
      if ('pk' in params) expect(params.pk).toHaveProperty('bytes');
    }
  }
  /** The one RateLimit item as the draft's §4.1 has it, naming a listed policy. */
  function expectLimitItem(limits: Item[], policies: Item[]) {
    expect(limits).toHaveLength(1);
    expect(policies.map((p) => p.name)).toContain(limits[0].name);
    const { r, t } = limits[0].params;
    expect(isInteger(r) && r >= 0).toBe(true);
    if ('t' in limits[0].params) expect(isInteger(t) && t >= 0).toBe(true);
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
    expectPolicyItems(policies);
    for (const policy of policies) expect(Object.keys(policy.params).sort()).toEqual(['q', 'w']);
    const limits = parseList(headers.RateLimit);
    expectLimitItem(limits, policies);
    expect(Object.keys(limits[0].params).sort()).toEqual(decision.outcome === 'banned' ? ['r'] : ['r', 't']);
    // The nearest exhaustion: no policy has fewer requests left.
    const left = decision.windows.map((w) => Math.max(0, w.limit - w.count));
    if (decision.outcome === 'allowed') expect(limits[0].params.r).toBe(Math.min(...left));
    else expect(limits[0].params.r).toBe(0);
    if (decision.outcome === 'limited') expect(limits[0].name).toBe(decision.window);
  });

  const refill = { amount: 1000, periodMs: 86_400_000, waitMs: 7_200_000 };
  const creditCases: Array<[string, Decision, string, string]> = [
    [
      'allowed, credits nearest exhaustion, with a refill',
      {
        outcome: 'allowed',
        windows: [{ ...minute, count: 3, resetMs: 40_000 }],
        credits: { balance: 12, cost: 5, refill },
      },
      '"minute";q=60;w=60, "credits";q=1000;w=86400',
      '"credits";r=12;t=7200',
    ],
    [
      'allowed, credits without a refill',
      {
        outcome: 'allowed',
        windows: [
          { ...minute, count: 3, resetMs: 40_000 },
          { ...day, count: 10, resetMs: 80_000_000 },
        ],
        credits: { balance: 40, cost: 1 },
      },
      '"minute";q=60;w=60, "day";q=1000;w=86400, "credits";q=40',
      '"credits";r=40',
    ],
    [
      'refused by the credits, a refill due',
      {
        outcome: 'limited',
        window: 'credits',
        retryAfterMs: 7_200_000,
        windows: [{ ...minute, count: 3, resetMs: 40_000 }],
        credits: { balance: 2, cost: 5, refill },
      },
      '"minute";q=60;w=60, "credits";q=1000;w=86400',
      '"credits";r=0;t=7200',
    ],
    [
      'credits exhausted with no refill',
      {
        outcome: 'exhausted',
        windows: [{ ...minute, count: 3, resetMs: 40_000 }],
        credits: { balance: 0, cost: 1 },
      },
      '"minute";q=60;w=60, "credits";q=0',
      '"credits";r=0',
    ],
    [
      'credits exhausted, a refill scheduled below the cost (waiting never covers it: no t)',
      {
        outcome: 'exhausted',
        windows: [{ ...minute, count: 3, resetMs: 40_000 }],
        credits: { balance: 5, cost: 10, refill: { amount: 5, periodMs: 86_400_000, waitMs: 7_200_000 } },
      },
      '"minute";q=60;w=60, "credits";q=5;w=86400',
      '"credits";r=0',
    ],
  ];

  it.each(creditCases)('with credits, %s: the credits policy and the RateLimit naming it parse', (...c) => {
    const [, decision, policyField, limitField] = c;
    const headers = rateLimitHeaders(decision, now);
    expect(headers['RateLimit-Policy']).toBe(policyField);
    expect(headers.RateLimit).toBe(limitField);
    const policies = parseList(headers['RateLimit-Policy']);
    expectPolicyItems(policies);
    const credits = policies.find((p) => p.name === 'credits')!;
    // The quota unit is the draft's default ("requests": no `qu`); a custom unit is not a registered value.
    expect(credits.params.qu ?? 'requests').toBe('requests');
    const limits = parseList(headers.RateLimit);
    expectLimitItem(limits, policies);
    expect(limits[0].name).toBe('credits');
    // The legacy headers describe the request window nearest exhaustion, never the credits (docs/rate-limits.md):
    // the minute's quota; what is left of it, 0 on a refusal.
    expect(headers['X-RateLimit-Limit']).toBe('60');
    expect(headers['X-RateLimit-Remaining']).toBe(decision.outcome === 'allowed' ? '57' : '0');
  });

  it('the parser reads what RFC 8941 allows in a parameter, as the draft’s own examples use it', () => {
    expect(parseList('"peruser";q=65535;qu="content-bytes";w=10;pk=:sdfjLJUOUH==:')).toEqual([
      { name: 'peruser', params: { q: 65535, qu: 'content-bytes', w: 10, pk: { bytes: 'sdfjLJUOUH==' } } },
    ]);
    expect(parseList('"burst";q=100;w=60,"daily";q=1000;w=86400').map((i) => i.name)).toEqual(['burst', 'daily']);
    expect(parseList('"a";acme-note=fast;acme-beta;acme-x=?0;acme-f=1.5;acme-s="a \\"b\\""')[0].params).toEqual({
      'acme-note': { token: 'fast' },
      'acme-beta': true,
      'acme-x': false,
      'acme-f': 1.5,
      'acme-s': 'a "b"',
    });
  });

  it('the parser itself refuses what the draft does not allow', () => {
    expect(() => parseList('minute;r=1')).toThrow();
    expect(() => parseList('"minute";r=1;r=2')).toThrow();
    expect(() => parseList('"minute", ')).toThrow();
    expect(() => parseList('"minute";R=1')).toThrow();
    expect(() => parseList('"minute";r=1 ;t=2')).toThrow();
    expect(() => parseList('"min\\ute";r=1')).toThrow();
    expect(() => parseList('"minute";r=1234567890123456')).toThrow();
    expect(() => parseList('')).toThrow();
    // Well-formed but not what the draft allows: a non-integer r, an unregistered quota unit.
    expect(parseList('"minute";r=1.5')[0].params.r).toBe(1.5);
    expect(() => expectLimitItem(parseList('"minute";r=1.5'), parseList('"minute";q=1'))).toThrow();
    expect(() => expectPolicyItems(parseList('"credits";q=5;qu="credits"'))).toThrow();
  });
});
