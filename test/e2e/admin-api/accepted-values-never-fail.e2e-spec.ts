import { randomBytes } from 'node:crypto';
import { adminCall, mintKey } from '../../support/gateway';
import { call, expectErrorBody } from '../../support/http';
import { withStack } from '../../support/with-stack';

const unique = (prefix: string) => `${prefix}-${randomBytes(4).toString('hex')}`;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Ledger {
  balance: number | null;
  spendPerDay: Array<{ day: string; spent: number }>;
  projectedExhaustionAt: string | null;
  exhaustion: string;
}

/**
 * No 500 from a value the admin API accepted (docs/errors.md, "Dates and date-times", "Text"): a projection past
 * the last date a date-time can write is null with its words, every date is parsed by the one strict parser (the
 * forms the document does not name are refused with 400 and the Error body), and text with control characters is
 * refused with 400 before PostgreSQL sees it.
 */
describe('values the admin API accepts never fail later', () => {
  const stack = withStack({
    pets: {},
    gateway: { env: { USAGE_FLUSH_MS: '200', BAN_GRACE_MS: '60000' } },
    timeoutMs: 120_000,
  });

  const admin = (method: string, path: string, body?: unknown) => adminCall(stack.gateway, method, path, body);

  it('answers the ledger of a balance of 1e9 with one credit spent: no date past the last one, "not-within-any-date"', async () => {
    const name = unique('large');
    const key = await mintKey(stack.gateway, 'free', name);
    const topUp = await admin('POST', `/consumers/${name}/credits/top-ups`, { amount: 1e9, reason: 'prepaid' });
    expect(topUp.status).toBe(201);
    expect(
      (await call(`${stack.gateway.url}/v1/pets?limit=1`, { headers: { authorization: `Bearer ${key}` } })).status,
    ).toBe(200);
    // The spend reaches the ledger's history at the next flush.
    let ledger: Ledger | undefined;
    for (let i = 0; i < 100; i += 1) {
      const reply = await admin('GET', `/consumers/${name}/credits/ledger?days=1`);
      expect(reply.status).toBe(200);
      ledger = reply.body as Ledger;
      if (ledger.spendPerDay.at(-1)?.spent === 1) break;
      await sleep(100);
    }
    expect(ledger?.spendPerDay.at(-1)?.spent).toBe(1);
    for (const days of [1, 7, 30, 366]) {
      const reply = await admin('GET', `/consumers/${name}/credits/ledger?days=${days}`);
      expect(reply.status).toBe(200);
      expect(reply.body).toMatchObject({
        balance: 1e9 - 1,
        projectedExhaustionAt: null,
        exhaustion: 'not-within-any-date',
      });
    }
  });

  it('still projects a date that exists, and says "not-expected" without spend', async () => {
    const name = unique('small');
    const key = await mintKey(stack.gateway, 'free', name);
    await admin('POST', `/consumers/${name}/credits/top-ups`, { amount: 100, reason: 'prepaid' });
    const idle = (await admin('GET', `/consumers/${name}/credits/ledger?days=1`)).body as Ledger;
    expect(idle).toMatchObject({ projectedExhaustionAt: null, exhaustion: 'not-expected' });
    await call(`${stack.gateway.url}/v1/pets?limit=1`, { headers: { authorization: `Bearer ${key}` } });
    let ledger: Ledger | undefined;
    for (let i = 0; i < 100 && ledger?.exhaustion !== 'projected'; i += 1) {
      ledger = (await admin('GET', `/consumers/${name}/credits/ledger?days=1`)).body as Ledger;
      if (ledger.exhaustion !== 'projected') await sleep(100);
    }
    expect(ledger?.exhaustion).toBe('projected');
    expect(Date.parse(ledger!.projectedExhaustionAt!)).toBeGreaterThan(Date.now());
  });

  describe('dates: exactly the documented forms', () => {
    let name: string;
    beforeAll(async () => {
      name = unique('dates');
      await mintKey(stack.gateway, 'free', name);
    });

    const refusedDateTimes: Array<[string, string]> = [
      ['2026-W48-1T00:00:00Z', 'billingAnchor must be an ISO 8601 date-time'],
      ['2026-333T00:00:00Z', 'billingAnchor must be an ISO 8601 date-time'],
      ['20261129T100000Z', 'billingAnchor must be an ISO 8601 date-time'],
      ['2026-11-29', 'billingAnchor must be an ISO 8601 date-time'],
      ['2026-11-29T10:00:00', 'billingAnchor must be an ISO 8601 date-time'],
      ['+275760-09-13T00:00:00Z', 'billingAnchor must be an ISO 8601 date-time'],
      ['+275761-01-01T00:00:00Z', 'billingAnchor must be an ISO 8601 date-time'],
      ['2026-02-30T00:00:00Z', 'billingAnchor is not a real date'],
      ['2026-11-29T24:00:00Z', 'billingAnchor is not a real date'],
    ];
    it.each(refusedDateTimes)('refuses billingAnchor %s with 400 and the Error body', async (value, message) => {
      const reply = await admin('PATCH', `/consumers/${name}/billing`, { billingAnchor: value });
      expectErrorBody(reply, 400, 'VALIDATION_FAILED');
      expect((reply.body as { message: string }).message).toBe(message);
    });

    it('takes a date-time with Z, an offset or a fraction, and the extremes of the four-digit year', async () => {
      for (const value of [
        '2026-11-29T10:00:00Z',
        '2026-11-29T10:00:00.250+05:30',
        '9999-12-31T23:59:59Z',
        '0001-01-01T00:00:00Z',
      ]) {
        const reply = await admin('PATCH', `/consumers/${name}/billing`, { billingAnchor: value });
        expect([reply.status, reply.text]).toEqual([200, expect.any(String)]);
        // What was taken is shown back: no Invalid Date anywhere behind it.
        expect((await admin('GET', `/consumers/${name}/billing`)).status).toBe(200);
      }
    });

    it.each([
      ['expiresAt of a new consumer', 'POST', () => '/consumers', (v: string) => ({ plan: 'free', expiresAt: v })],
      ['expiresAt of a new key', 'POST', () => `/consumers/${name}/keys`, (v: string) => ({ expiresAt: v })],
      [
        'expiresAt of a token',
        'POST',
        () => '/tokens',
        (v: string) => ({ name: unique('t'), scopes: ['consumers:read'], expiresAt: v }),
      ],
      ['an audit filter', 'GET', () => '/audit?from=', (v: string) => v],
      ['a usage range', 'GET', () => `/consumers/${name}/usage/history?from=`, (v: string) => v],
      [
        'a consumers-file date',
        'POST',
        () => '/import',
        (v: string) => ({ consumers: [{ name: unique('imp'), plan: 'free', createdAt: v }] }),
      ],
    ])('refuses the week, ordinal and basic forms in %s', async (_what, method, path, value) => {
      for (const form of ['2099-W48-1T00:00:00Z', '2099-333T00:00:00Z', '20991129T100000Z']) {
        const made = value(form);
        const reply =
          typeof made === 'string'
            ? await admin(method, `${path()}${encodeURIComponent(made)}`)
            : await admin(method, path(), made);
        expectErrorBody(reply, 400, 'VALIDATION_FAILED');
      }
    });
  });

  it('refuses null where a date-time may only be left out (it was an Invalid Date or the epoch)', async () => {
    for (const [path, body] of [
      ['/consumers', { plan: 'free', expiresAt: null }],
      ['/tokens', { name: unique('t'), scopes: ['consumers:read'], expiresAt: null }],
      ['/import', { consumers: [{ name: unique('imp'), plan: 'free', createdAt: null }] }],
    ] as const) {
      const reply = await admin('POST', path, body);
      expectErrorBody(reply, 400, 'VALIDATION_FAILED');
      expect((reply.body as { message: string }).message).toMatch(/(expiresAt|createdAt) must not be null/);
    }
  });

  describe('text: no control characters', () => {
    let name: string;
    beforeAll(async () => {
      name = unique('text');
      await mintKey(stack.gateway, 'free', name);
    });

    it.each([
      ['NUL', 'invoice\u000042', 'reason must not contain NUL characters'],
      [
        'a line break',
        'invoice\n42',
        'reason must not contain control characters (such as NUL, a line break or a tab)',
      ],
      ['a tab', 'invoice\t42', 'reason must not contain control characters (such as NUL, a line break or a tab)'],
      ['ESC', 'invoice\u001b[2J', 'reason must not contain control characters (such as NUL, a line break or a tab)'],
      ['DEL', 'invoice\u007f', 'reason must not contain control characters (such as NUL, a line break or a tab)'],
      ['a lone surrogate', 'invoice\ud800', 'reason must be well-formed Unicode (no lone surrogates)'],
    ])(
      'refuses a top-up reason with %s (400, never PostgreSQL 22021), and changes nothing',
      async (_what, reason, message) => {
        const before = (await admin('GET', `/consumers/${name}/billing`)).body as { credits: unknown };
        const reply = await admin('POST', `/consumers/${name}/credits/top-ups`, { amount: 5, reason });
        expectErrorBody(reply, 400, 'VALIDATION_FAILED');
        expect((reply.body as { message: string }).message).toBe(message);
        const set = await admin('PUT', `/consumers/${name}/credits`, { balance: 5, reason });
        expectErrorBody(set, 400, 'VALIDATION_FAILED');
        expect((await admin('GET', `/consumers/${name}/billing`)).body).toMatchObject({ credits: before.credits });
      },
    );

    it('refuses control characters in plan requests (tab and line breaks kept in a message) and audit filters', async () => {
      const base = { consumer: name, requestedPlan: 'pro', expectedVolume: '10/day' };
      expectErrorBody(
        await admin('POST', '/plan-requests', { ...base, expectedVolume: '10\n/day' }),
        400,
        'VALIDATION_FAILED',
      );
      expectErrorBody(
        await admin('POST', '/plan-requests', { ...base, message: 'hi\u0007' }),
        400,
        'VALIDATION_FAILED',
      );
      expect((await admin('POST', '/plan-requests', { ...base, message: 'line one\r\n\tline two' })).status).toBe(201);
      for (const filter of ['actor', 'target', 'action'])
        expectErrorBody(await admin('GET', `/audit?${filter}=a%00b`), 400, 'VALIDATION_FAILED');
    });

    it('takes a reason in any script', async () => {
      const reply = await admin('POST', `/consumers/${name}/credits/top-ups`, {
        amount: 5,
        reason: 'Überweisung – 請求書 42 €',
      });
      expect(reply.status).toBe(201);
    });
  });
});
