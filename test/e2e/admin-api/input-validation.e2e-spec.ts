import { generateApiKey, hashApiKey } from '../../../apps/gateway/src/consumers/api-key';
import { adminCall, mintKey } from '../../support/gateway';
import { call, expectErrorBody, Reply } from '../../support/http';
import { seededRandom } from '../../support/seeded-random';
import { withStack } from '../../support/with-stack';

/** Seeded, so that a failing fuzz case can be replayed with FUZZ_SEED (FUZZ_ROUNDS: more cases). */
const random = seededRandom;

/** Awkward characters: NUL and other controls, separators, surrogates (lone ones too), non-characters, emoji, RTL. */
const AWKWARD = [
  '\u0000',
  '\u0001',
  '\u001f',
  '\u007f',
  '\u0085',
  '\u00a0',
  '\u2028',
  '\ud800',
  '\udfff',
  '\ufeff',
  '\uffff',
  '😀',
  '\u202e',
  '%',
  '/',
  '\\',
  '"',
  "'",
  '..',
  ' ',
  '\n',
  'é',
  '日本',
];

class Fuzz {
  private readonly next: () => number;

  constructor(readonly seed: number) {
    this.next = random(seed);
  }

  int(max: number): number {
    return Math.floor(this.next() * max);
  }

  pick<T>(values: readonly T[]): T {
    return values[this.int(values.length)];
  }

  /** A string of random code units, awkward characters and plain letters; sometimes long. */
  text(): string {
    const length = this.pick([0, 1, 2, 5, 16, 17, 63, 64, 65, 300]);
    let out = '';
    for (let i = 0; i < length; i += 1) {
      const kind = this.int(4);
      out +=
        kind === 0
          ? this.pick(AWKWARD)
          : kind === 1
            ? String.fromCharCode(this.int(0x10000))
            : kind === 2
              ? String.fromCodePoint(this.int(0x110000))
              : 'abc-_.'[this.int(6)];
    }
    return out;
  }

  /** A path segment: random bytes (often not UTF-8) or random text, percent-encoded. */
  segment(): string {
    if (this.int(2) === 0) {
      const bytes = Array.from({ length: 1 + this.int(40) }, () => this.int(256));
      return bytes.map((b) => `%${b.toString(16).padStart(2, '0')}`).join('');
    }
    // encodeURIComponent refuses lone surrogates: send their replacement, as a client would.
    return encodeURIComponent(this.text().toWellFormed()) || '%00';
  }

  /** Any JSON value, nested a little. */
  value(depth = 0): unknown {
    switch (this.int(depth > 2 ? 7 : 9)) {
      case 0:
        return null;
      case 1:
        return this.int(2) === 0;
      case 2:
        return this.pick([0, -1, 1, 0.5, 1e21, -1e21, 2 ** 53, 2 ** 31, 7 * 86_400 + 1, Number.MAX_VALUE]);
      case 3:
        return this.pick([
          '2030-01-01T00:00:00Z',
          '0000-01-01T00:00:00Z',
          '9999-12-31T23:59:59.999Z',
          '2030-02-30T00:00:00Z',
          '2030-01-01',
          '+275760-09-13T00:00:00Z',
        ]);
      case 4:
        return this.pick([
          'free',
          'pro',
          'enterprise',
          '__proto__',
          'constructor',
          hashApiKey(generateApiKey()),
          '0'.repeat(64),
        ]);
      case 5:
      case 6:
        return this.text();
      case 7:
        return Array.from({ length: this.int(3) }, () => this.value(depth + 1));
      default:
        return Object.fromEntries(
          Array.from({ length: this.int(3) }, () => [
            this.pick(['name', 'plan', 'keyHash', '__proto__', 'limits', this.text()]),
            this.value(depth + 1),
          ]),
        );
    }
  }
}

/**
 * Issue #21: no client input makes the admin API answer 5xx; a NUL byte, a deep JSON document and an import
 * entry that is not an object are refused with 400 and the Error body; a consumer holds a bounded number of keys.
 */
describe('admin API input', () => {
  const stack = withStack({ pets: {}, gateway: { env: { CONSUMER_MAX_KEYS: '5' } } });

  const admin = (method: string, path: string, body?: unknown) => adminCall(stack.gateway, method, path, body);

  it.each([
    ['GET', '/consumers/%00', undefined],
    ['GET', '/consumers/a%00b', undefined],
    ['PATCH', '/consumers/%00', { plan: 'pro' }],
    ['POST', '/consumers/%00/disable', undefined],
    ['POST', '/consumers/%00/enable', undefined],
    ['POST', '/consumers/%00/keys', {}],
    ['POST', '/consumers/%00/revoke', undefined],
    ['GET', '/consumers/%00/usage', undefined],
    ['POST', '/consumers/%00/keys/00000000-0000-4000-8000-000000000000/rotate', {}],
  ])('refuses a NUL in the consumer name: %s %s → 400', async (method, path, body) => {
    expectErrorBody(await admin(method, path, body), 400, 'VALIDATION_FAILED');
  });

  it('refuses a NUL in an imported key hint with 400', async () => {
    // The full form (valid on every version): only the hint is wrong.
    const entry = {
      name: 'nul-hint',
      plan: 'free',
      keyHash: hashApiKey(generateApiKey()),
      keyHint: 'petk_\u0000',
      createdAt: '2026-01-01T00:00:00Z',
    };
    for (const consumers of [
      [entry],
      [
        {
          ...entry,
          keyHint: 'petk_ok',
          keys: [{ keyHash: entry.keyHash, keyHint: 'petk_\u0000', createdAt: entry.createdAt }],
        },
      ],
    ]) {
      const reply = await admin('POST', '/import', { consumers });
      expectErrorBody(reply, 400, 'VALIDATION_FAILED');
      expect((reply.body as { message: string }).message).toMatch(/keyHint/);
    }
  });

  it.each([
    ['an array nested 100,000 deep', `${'['.repeat(100_000)}${']'.repeat(100_000)}`],
    ['an object nested 100,000 deep', `${'{"a":'.repeat(100_000)}1${'}'.repeat(100_000)}`],
    ['consumers nested 100,000 deep', `{"consumers":${'['.repeat(100_000)}${']'.repeat(100_000)}}`],
  ])('refuses %s with 400', async (_case, text) => {
    for (const [method, path] of [
      ['POST', '/import'],
      ['POST', '/consumers'],
      ['PATCH', '/consumers/x'],
    ]) {
      const reply = await admin(method, path, text);
      expectErrorBody(reply, 400);
    }
  });

  it.each([
    ['an array', [[]]],
    ['null', [null]],
    ['a number', [1]],
    ['a string', ['acme']],
  ])('refuses an import entry that is %s with 400', async (_case, consumers) => {
    const reply = await admin('POST', '/import', { consumers });
    expectErrorBody(reply, 400, 'VALIDATION_FAILED');
    expect((reply.body as { message: string }).message).toBe('each entry of consumers must be an object');
  });

  it('says what is wrong with an import that has no consumers list', async () => {
    for (const [body, message] of [
      [{}, 'consumers is required'],
      [{ consumers: 'all' }, 'consumers must be an array'],
    ] as const) {
      const reply = await admin('POST', '/import', body);
      expectErrorBody(reply, 400, 'VALIDATION_FAILED');
      expect((reply.body as { message: string }).message).toBe(message);
    }
  });

  it('answers no 5xx to random bytes and text in every path parameter and body field of every route', async () => {
    const fuzz = new Fuzz(Number(process.env.FUZZ_SEED ?? Date.now() % 2 ** 31));
    const key = await mintKey(stack.gateway, 'pro', 'fuzz-target');
    expect(key).toMatch(/^petk_/);
    const keyId = ((await admin('GET', '/consumers/fuzz-target')).body as { keys: Array<{ id: string }> }).keys[0].id;
    const keyHash = hashApiKey(generateApiKey());
    // Each route with a valid form of its input; one part at a time is replaced by something random.
    const routes: Array<{
      method: string;
      path: (name: string, id: string) => string;
      body?: Record<string, unknown>;
      query?: Record<string, string>;
    }> = [
      { method: 'GET', path: () => '/consumers', query: { limit: '10', after: 'a' } },
      {
        method: 'POST',
        path: () => '/consumers',
        body: {
          name: 'fuzz-new',
          plan: 'enterprise',
          limits: { perMinute: 5, perDay: 50 },
          expiresAt: '2099-01-01T00:00:00Z',
        },
      },
      { method: 'GET', path: (n) => `/consumers/${n}` },
      { method: 'PATCH', path: (n) => `/consumers/${n}`, body: { plan: 'pro', limits: { perMinute: 5, perDay: 50 } } },
      { method: 'POST', path: (n) => `/consumers/${n}/disable` },
      { method: 'POST', path: (n) => `/consumers/${n}/enable` },
      { method: 'POST', path: (n) => `/consumers/${n}/keys`, body: { expiresAt: '2099-01-01T00:00:00Z' } },
      { method: 'POST', path: (n) => `/consumers/${n}/revoke` },
      { method: 'POST', path: (n, id) => `/consumers/${n}/keys/${id}/revoke` },
      { method: 'POST', path: (n, id) => `/consumers/${n}/keys/${id}/rotate`, body: { overlapSeconds: 60 } },
      { method: 'GET', path: (n) => `/consumers/${n}/usage` },
      { method: 'POST', path: (n) => `/consumers/${n}/unban` },
      {
        method: 'POST',
        path: () => '/import',
        body: {
          consumers: [
            {
              name: 'fuzz-import',
              plan: 'enterprise',
              limits: { perMinute: 5, perDay: 50 },
              keyHash,
              keyHint: 'petk_abcd…',
              createdAt: '2026-01-01T00:00:00Z',
              revokedAt: '2026-02-01T00:00:00Z',
              disabledAt: '2026-03-01T00:00:00Z',
              keys: [
                {
                  keyHash,
                  keyHint: 'petk_abcd…',
                  createdAt: '2026-01-01T00:00:00Z',
                  expiresAt: '2099-01-01T00:00:00Z',
                  revokedAt: '2026-02-01T00:00:00Z',
                },
              ],
            },
          ],
        },
      },
      { method: 'GET', path: () => '/export', query: { limit: '10', after: 'a' } },
    ];

    /** Every place a random value can go: a path parameter, a query parameter, a body field (nested ones too), the whole body. */
    const variants = (route: (typeof routes)[number]): Array<() => { path: string; body?: unknown }> => {
      const plain = (name = 'fuzz-target', id = keyId, query = route.query) =>
        `${route.path(name, id)}${query ? `?${new URLSearchParams(query).toString()}` : ''}`;
      const out: Array<() => { path: string; body?: unknown }> = [];
      if (route.path('N', 'I').includes('N')) out.push(() => ({ path: plain(fuzz.segment()), body: route.body }));
      if (route.path('N', 'I').includes('I'))
        out.push(() => ({ path: plain('fuzz-target', fuzz.segment()), body: route.body }));
      for (const field of Object.keys(route.query ?? {})) {
        out.push(() => ({ path: `${route.path('fuzz-target', keyId)}?${field}=${fuzz.segment()}`, body: route.body }));
      }
      const fieldPaths = (value: unknown, at: string[] = []): string[][] =>
        value && typeof value === 'object'
          ? Object.entries(value).flatMap(([k, v]) => [[...at, k], ...fieldPaths(v, [...at, k])])
          : [];
      for (const at of fieldPaths(route.body)) {
        out.push(() => {
          const body = structuredClone(route.body) as Record<string, unknown>;
          let target: Record<string, unknown> = body;
          for (const step of at.slice(0, -1)) target = target[step] as Record<string, unknown>;
          target[at[at.length - 1]] = fuzz.value();
          return { path: plain(), body };
        });
      }
      if (route.method !== 'GET') out.push(() => ({ path: plain(), body: fuzz.value() }));
      return out;
    };

    const failures: string[] = [];
    let sent = 0;
    for (const route of routes) {
      for (const variant of variants(route)) {
        for (let i = 0; i < Number(process.env.FUZZ_ROUNDS ?? 12); i += 1) {
          const { path, body } = variant();
          const reply: Reply = await adminCall(stack.gateway, route.method, path, body);
          sent += 1;
          const shaped =
            reply.status < 400 ||
            (typeof (reply.body as { code?: unknown })?.code === 'string' &&
              (reply.body as { status?: unknown }).status === reply.status);
          if (reply.status >= 500 || !shaped)
            failures.push(
              `${route.method} ${path} ${JSON.stringify(body)?.slice(0, 300)} → ${reply.status} ${reply.text.slice(0, 200)}`,
            );
        }
      }
    }
    console.log(`admin fuzz: seed ${fuzz.seed}, ${sent} requests, ${failures.length} failures`);
    expect(failures).toEqual([]);
  }, 180_000);

  describe('keys per consumer (CONSUMER_MAX_KEYS, 5 here)', () => {
    const activeKeys = async (name: string) =>
      ((await admin('GET', `/consumers/${name}`)).body as { keys: Array<{ state: string }> }).keys.filter(
        (k) => k.state === 'active',
      ).length;

    it('issues keys up to the cap, then refuses with 409 KEY_LIMIT_REACHED; concurrent issues never pass it', async () => {
      await mintKey(stack.gateway, 'pro', 'capped');
      const replies = await Promise.all(Array.from({ length: 10 }, () => admin('POST', '/consumers/capped/keys', {})));
      expect(replies.filter((r) => r.status === 201).length).toBe(4);
      for (const refused of replies.filter((r) => r.status !== 201)) {
        expectErrorBody(refused, 409, 'KEY_LIMIT_REACHED');
        expect((refused.body as { message: string }).message).toMatch(/at most 5 active keys/);
      }
      expect(await activeKeys('capped')).toBe(5);
      // A rotation with an overlap would make six: refused; without an overlap the old key stops at once: allowed.
      const keyId = ((await admin('GET', '/consumers/capped')).body as { keys: Array<{ id: string }> }).keys[0].id;
      expectErrorBody(
        await admin('POST', `/consumers/capped/keys/${keyId}/rotate`, { overlapSeconds: 60 }),
        409,
        'KEY_LIMIT_REACHED',
      );
      expect((await admin('POST', `/consumers/capped/keys/${keyId}/rotate`, { overlapSeconds: 0 })).status).toBe(201);
      expect(await activeKeys('capped')).toBe(5);
      // Revoking makes room again.
      const active = (
        (await admin('GET', '/consumers/capped')).body as { keys: Array<{ id: string; state: string }> }
      ).keys.find((k) => k.state === 'active')!;
      expect((await admin('POST', `/consumers/capped/keys/${active.id}/revoke`)).status).toBe(200);
      expect((await admin('POST', '/consumers/capped/keys', {})).status).toBe(201);
    });

    it('refuses an import that would give a consumer more active keys than the cap, and imports nothing of it', async () => {
      const keys = Array.from({ length: 6 }, () => ({ keyHash: hashApiKey(generateApiKey()) }));
      const reply = await admin('POST', '/import', { consumers: [{ name: 'imported-capped', plan: 'free', keys }] });
      expectErrorBody(reply, 409, 'KEY_LIMIT_REACHED');
      expect((reply.body as { message: string }).message).toMatch(/at most 5 active keys/);
      expectErrorBody(await admin('GET', '/consumers/imported-capped'), 404, 'NOT_FOUND');
      // The same consumer listed twice in one batch adds up.
      const twice = {
        consumers: [
          { name: 'imported-capped', plan: 'free', keys: keys.slice(0, 3) },
          { name: 'imported-capped', plan: 'free', keys: keys.slice(3) },
        ],
      };
      expectErrorBody(await admin('POST', '/import', twice), 409, 'KEY_LIMIT_REACHED');
      // Revoked keys are history, not credentials: they do not count.
      const history = keys.map((k) => ({ ...k, revokedAt: '2026-01-01T00:00:00Z' }));
      expect(
        (await admin('POST', '/import', { consumers: [{ name: 'imported-capped', plan: 'free', keys: history }] }))
          .status,
      ).toBe(200);
      const working = generateApiKey();
      expect(
        (
          await admin('POST', '/import', {
            consumers: [{ name: 'imported-capped', plan: 'free', keys: [{ keyHash: hashApiKey(working) }] }],
          })
        ).status,
      ).toBe(200);
      expect(
        (await call(`${stack.gateway.url}/v1/pets?limit=1`, { headers: { authorization: `Bearer ${working}` } }))
          .status,
      ).toBe(200);
    });
  });
});
