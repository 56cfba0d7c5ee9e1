import { randomBytes } from 'node:crypto';
import { adminCall, createGatewayTestDatabase, GatewayUnderTest, mintKey, startGateway } from '../../support/gateway';
import { call, expectErrorBody, Reply } from '../../support/http';
import { startPetsService } from '../../support/pets-service';
import { withStack } from '../../support/with-stack';

const as = (key: string) => ({ headers: { authorization: `Bearer ${key}` } });
const unique = (prefix: string) => `${prefix}-${randomBytes(4).toString('hex')}`;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const shared = Boolean(process.env.REDIS_URL);
/** Refusals are not strikes for a minute (a burst on a loaded machine is not banned); spend flushed often. */
const ENV = { BAN_GRACE_MS: '60000', USAGE_FLUSH_MS: '200' };
const ENTERPRISE = { perMinute: 1_000_000, perDay: 100_000_000 };

interface LedgerEntry {
  kind: string;
  amount: number;
  balanceAfter: number;
  reason: string | null;
  actor: string;
}
interface Ledger {
  balance: number | null;
  entries: LedgerEntry[];
  spendPerDay: Array<{ day: string; spent: number }>;
  projectedExhaustionAt: string | null;
}
interface Billing {
  credits: {
    balance: number;
    refill: unknown;
    refillSet: boolean;
    nextRefillAt: string | null;
    costs: Record<string, number>;
  } | null;
}

const billingOf = async (g: GatewayUnderTest, name: string) =>
  (await adminCall(g, 'GET', `/consumers/${name}/billing`)).body as Billing;
const ledgerOf = async (g: GatewayUnderTest, name: string) =>
  (await adminCall(g, 'GET', `/consumers/${name}/credits/ledger?days=7`)).body as Ledger;
const sumOf = (ledger: Ledger) =>
  ledger.entries.reduce((s, e) => s + e.amount, 0) - ledger.spendPerDay.reduce((s, d) => s + d.spent, 0);

/**
 * Prepaid credits (issue #38) through the gateways: bursts exact to the unit straight at two instances (with
 * REDIS_URL: shared counters; without, at one), refusals consuming from no policy, the admin API's ledger.
 */
describe('prepaid credits', () => {
  const stack = withStack({
    pets: {},
    database: true,
    sharedKeyPrefix: 'credits',
    gateways: { a: { env: ENV }, b: { env: ENV } },
    timeoutMs: 180_000,
  });
  const targets = () => (shared ? [stack.a, stack.b] : [stack.a]);
  const burst = (key: string, n: number): Promise<Reply[]> =>
    Promise.all(
      Array.from({ length: n }, (_, i) => call(`${targets()[i % targets().length].url}/v1/pets?limit=1`, as(key))),
    );

  it('a consumer without credits is not charged: credits null, no credits policy', async () => {
    const name = unique('free');
    const key = await mintKey(stack.a, 'free', name);
    const reply = await call(`${stack.a.url}/v1/pets?limit=1`, as(key));
    expect(reply.headers.get('ratelimit-policy')).not.toContain('credits');
    expect((await billingOf(stack.a, name)).credits).toBeNull();
    expect((await ledgerOf(stack.a, name)).balance).toBeNull();
  });

  it.each([
    [1, 100],
    [5, 20],
  ])(
    '100 credits at cost %i: a burst of 1,000 gets exactly %i answers, the balance ends at 0',
    async (cost, admitted) => {
      const name = unique('ent');
      const key = await mintKey(stack.a, 'enterprise', name, ENTERPRISE);
      if (cost !== 1)
        expect(
          (await adminCall(stack.a, 'PATCH', `/consumers/${name}/billing`, { costs: { listPets: cost } })).status,
        ).toBe(200);
      const topUp = await adminCall(stack.a, 'POST', `/consumers/${name}/credits/top-ups`, {
        amount: 100,
        reason: 'invoice 1',
      });
      expect(topUp.status).toBe(201);
      expect(topUp.body).toMatchObject({
        balance: 100,
        entry: { kind: 'top-up', amount: 100, balanceAfter: 100, reason: 'invoice 1' },
      });

      const replies = await burst(key, 1_000);
      expect(replies.filter((r) => r.status === 200)).toHaveLength(admitted);
      const refused = replies.filter((r) => r.status !== 200);
      for (const reply of refused) expectErrorBody(reply, 402, 'CREDITS_EXHAUSTED');
      expect(refused[0].headers.get('retry-after')).toBeNull();
      expect(refused[0].headers.get('ratelimit')).toBe('"credits";r=0');
      expect(replies.find((r) => r.status === 200)!.headers.get('ratelimit-policy')).toMatch(/"credits";q=\d+$/);

      // The refusals consumed nothing: the minute window counted only what was admitted.
      const usage = (await adminCall(stack.a, 'GET', `/consumers/${name}/usage`)).body as {
        windows: Array<{ name: string; used: number }>;
      };
      expect(usage.windows.find((w) => w.name === 'minute')?.used).toBe(admitted);
      const billing = await billingOf(stack.b, name);
      expect(billing.credits).toMatchObject({ balance: 0, refill: null, refillSet: false, nextRefillAt: null });
      expect(billing.credits?.costs.listPets).toBe(cost);

      // The ledger, once both instances flushed their spend: 100 topped up, 100 spent today.
      await sleep(1_000);
      const ledger = await ledgerOf(stack.a, name);
      expect(ledger.balance).toBe(0);
      expect(ledger.spendPerDay).toHaveLength(7);
      expect(ledger.spendPerDay.at(-1)?.spent).toBe(100);
      expect(sumOf(ledger)).toBe(0);
    },
  );

  it('a refill below the cost answers 402 without Retry-After (waiting never pays for it); a covered cost 429 to the refill', async () => {
    const name = unique('ent');
    const key = await mintKey(stack.a, 'enterprise', name, ENTERPRISE);
    const terms = { costs: { listPets: 10, getPet: 5 }, creditRefill: { amount: 5, every: 'day' } };
    expect((await adminCall(stack.a, 'PATCH', `/consumers/${name}/billing`, terms)).status).toBe(200);
    await adminCall(stack.a, 'PUT', `/consumers/${name}/credits`, { balance: 0, reason: 'start' });
    const expensive = await call(`${stack.a.url}/v1/pets?limit=1`, as(key));
    expectErrorBody(expensive, 402, 'CREDITS_EXHAUSTED');
    expect(expensive.headers.get('retry-after')).toBeNull();
    expect(expensive.headers.get('ratelimit')).toBe('"credits";r=0');
    // getPet costs 5, which the refill of 5 covers (the refill of today was applied by the request above).
    expect((await call(`${stack.a.url}/v1/pets/1`, as(key))).status).not.toBe(402);
    const covered = await call(`${stack.a.url}/v1/pets/1`, as(key));
    expectErrorBody(covered, 429, 'RATE_LIMITED');
    expect(Number(covered.headers.get('retry-after'))).toBeGreaterThan(0);
  });

  it('a refusal by a window spends no credit', async () => {
    const name = unique('ent');
    const key = await mintKey(stack.a, 'enterprise', name, { perMinute: 3, perDay: 1_000 });
    await adminCall(stack.a, 'POST', `/consumers/${name}/credits/top-ups`, { amount: 50, reason: 'start' });
    const replies = await burst(key, 10);
    expect(replies.filter((r) => r.status === 200)).toHaveLength(3);
    for (const r of replies.filter((r) => r.status !== 200)) expectErrorBody(r, 429, 'RATE_LIMITED');
    expect((await billingOf(stack.a, name)).credits?.balance).toBe(47);
  });

  it('a set, and a refill applied once however many instances see its period begin', async () => {
    const name = unique('ent');
    const key = await mintKey(stack.a, 'enterprise', name, ENTERPRISE);
    const set = await adminCall(stack.a, 'PUT', `/consumers/${name}/credits`, { balance: 4, reason: 'trial' });
    expect(set.status).toBe(200);
    expect(set.body).toEqual({ balance: 4 });
    const patch = await adminCall(stack.a, 'PATCH', `/consumers/${name}/billing`, {
      creditRefill: { amount: 30, every: 'day' },
    });
    expect(patch.status).toBe(200);
    const replies = await burst(key, 60);
    // Topped up to 30 at the first decision of the day, whichever instance took it; then 30 answers.
    expect(replies.filter((r) => r.status === 200)).toHaveLength(30);
    const refused = replies.filter((r) => r.status !== 200);
    for (const r of refused) expectErrorBody(r, 429, 'RATE_LIMITED');
    const retryAfter = Number(refused[0].headers.get('retry-after'));
    const untilMidnight = Math.ceil((86_400_000 - (Date.now() % 86_400_000)) / 1000);
    expect(Math.abs(retryAfter - untilMidnight)).toBeLessThanOrEqual(5);
    expect(refused[0].headers.get('ratelimit')).toBe(`"credits";r=0;t=${retryAfter}`);
    await sleep(1_000);
    const ledger = await ledgerOf(stack.b, name);
    expect(ledger.entries.map((e) => e.kind)).toEqual(['refill', 'set']);
    expect(ledger.entries[0]).toMatchObject({ amount: 26, balanceAfter: 30, actor: 'gateway', reason: null });
    expect(ledger.balance).toBe(0);
    expect(sumOf(ledger)).toBe(0);
    expect((await billingOf(stack.a, name)).credits).toMatchObject({
      refill: { amount: 30, every: 'day' },
      refillSet: true,
    });
    // Credits ended: no longer charged.
    expect(
      (await adminCall(stack.a, 'PUT', `/consumers/${name}/credits`, { balance: null, reason: 'end' })).body,
    ).toEqual({
      balance: null,
    });
    await sleep(300);
    expect((await call(`${stack.b.url}/v1/pets?limit=1`, as(key))).status).toBe(200);
  });

  it('refuses bad input with 400 and the Error body', async () => {
    const name = unique('ent');
    await mintKey(stack.a, 'enterprise', name, ENTERPRISE);
    for (const body of [
      { amount: 0, reason: 'x' },
      { amount: 5, reason: '' },
      { amount: 1.5, reason: 'x' },
      { amount: 5 },
    ])
      expectErrorBody(
        await adminCall(stack.a, 'POST', `/consumers/${name}/credits/top-ups`, body),
        400,
        'VALIDATION_FAILED',
      );
    expectErrorBody(
      await adminCall(stack.a, 'PUT', `/consumers/${name}/credits`, { balance: -1, reason: 'x' }),
      400,
      'VALIDATION_FAILED',
    );
    expectErrorBody(
      await adminCall(stack.a, 'PATCH', `/consumers/${name}/billing`, { costs: { deletePet: 1 } }),
      400,
      'VALIDATION_FAILED',
    );
    expectErrorBody(
      await adminCall(stack.a, 'PATCH', `/consumers/${name}/billing`, { creditRefill: { amount: 5, every: 'week' } }),
      400,
      'VALIDATION_FAILED',
    );
    expectErrorBody(
      await adminCall(stack.a, 'GET', `/consumers/${name}/credits/ledger?days=0`),
      400,
      'VALIDATION_FAILED',
    );
    expectErrorBody(
      await adminCall(stack.a, 'POST', `/consumers/nobody-here/credits/top-ups`, { amount: 1, reason: 'x' }),
      404,
      'NOT_FOUND',
    );
  });
});

/** A balance is money: a lost counter store is rebuilt from the ledger and the spend, never from zero or a refill. */
describe('a balance after the counter store is lost', () => {
  it('an embedded gateway restarted resumes exactly the ledger’s balance', async () => {
    const pets = await startPetsService();
    const database = await createGatewayTestDatabase();
    let gateway = await startGateway({ petsUrl: pets.url, database, env: ENV });
    try {
      const name = unique('ent');
      const key = await mintKey(gateway, 'enterprise', name, ENTERPRISE);
      await adminCall(gateway, 'POST', `/consumers/${name}/credits/top-ups`, { amount: 40, reason: 'restart' });
      for (let i = 0; i < 15; i += 1) expect((await call(`${gateway.url}/v1/pets?limit=1`, as(key))).status).toBe(200);
      await gateway.close();
      gateway = await startGateway({
        petsUrl: pets.url,
        database,
        env: ENV,
        keyPrefix: `${process.env.REDIS_KEY_PREFIX ?? 'test:'}${randomBytes(6).toString('hex')}:`,
      });
      // A fresh counter store (a new prefix on Redis, new in-process counters): rebuilt, not refilled, not zero.
      expect((await billingOf(gateway, name)).credits?.balance).toBe(25);
      const replies = await Promise.all(
        Array.from({ length: 40 }, () => call(`${gateway.url}/v1/pets?limit=1`, as(key))),
      );
      expect(replies.filter((r) => r.status === 200)).toHaveLength(25);
    } finally {
      await gateway.close();
      await database.drop();
      await pets.close();
    }
  }, 180_000);
});
