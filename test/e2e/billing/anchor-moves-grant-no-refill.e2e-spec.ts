import { randomBytes } from 'node:crypto';
import { adminCall, FakeClock, GatewayUnderTest, mintKey, startGateway } from '../../support/gateway';
import { call, expectErrorBody, Reply } from '../../support/http';
import { RunningPets, startPetsService } from '../../support/pets-service';
import { hasRedisServer, OwnRedisServer } from '../../support/redis-server';

const as = (key: string) => ({ headers: { authorization: `Bearer ${key}` } });
const unique = (prefix: string) => `${prefix}-${randomBytes(4).toString('hex')}`;
const at = (iso: string) => Date.parse(iso);
/** Refusals are never strikes enough for a ban here: the test counts what credits admit, nothing else. */
const ENV = { BAN_THRESHOLD: '1000000', USAGE_FLUSH_MS: '200' };
const ENTERPRISE = { perMinute: 1_000_000, perDay: 100_000_000 };

interface Billing {
  currentPeriod: { start: string; end: string };
  credits: { balance: number; nextRefillAt: string | null } | null;
}
interface Ledger {
  entries: Array<{ kind: string; amount: number; balanceAfter: number; actor: string }>;
}
interface AuditRow {
  action: string;
  changes: Record<string, { before: unknown; after: unknown }>;
}

/** A counter store for the gateway under test: its environment, and what to stop afterwards. */
interface Engine {
  name: string;
  start(): Promise<{ env: Record<string, string>; inProcess: boolean; stop(): Promise<void> }>;
}

const engines: Engine[] = [
  { name: 'in-process', start: async () => ({ env: {}, inProcess: true, stop: async () => undefined }) },
];
if (process.env.REDIS_URL) {
  engines.push({ name: 'Redis', start: async () => ({ env: {}, inProcess: false, stop: async () => undefined }) });
} else if (hasRedisServer) {
  engines.push({
    name: 'Redis (a server of its own)',
    start: async () => {
      const redis = await OwnRedisServer.start();
      return { env: { REDIS_URL: redis.url }, inProcess: false, stop: () => redis.stop() };
    },
  });
} else {
  console.log('anchor-moves: neither REDIS_URL nor redis-server: the Redis store is not tested in this run');
}

/**
 * Refills bound to periods, not to edits (issue #45, docs/billing.md "Moving the anchor"): a consumer with a
 * monthly refill of 100 whose anchor an operator moves three times, each move making the period in progress start
 * later by the new anchor alone. Before, each move handed out a fresh refill (400 requests for one month's 100, four
 * refill rows); now the period keeps its start, which is its refill's id, and ends at the last anchor's next reset.
 * On the in-process store and on Redis, through HTTP, on the gateway's injected clock.
 */
describe.each(engines)('anchor moves in the $name store', (engine) => {
  let pets: RunningPets;
  let gateway: GatewayUnderTest;
  let stopStore: () => Promise<void>;
  const clock = new FakeClock();

  beforeAll(async () => {
    pets = await startPetsService();
    const store = await engine.start();
    stopStore = store.stop;
    clock.set(at('2027-03-15T00:00:00.000Z'));
    gateway = await startGateway({
      petsUrl: pets.url,
      clock,
      env: { ...ENV, ...store.env },
      adjust: store.inProcess ? (config) => (config.redis = undefined) : undefined,
    });
  }, 180_000);
  afterAll(async () => {
    await gateway?.close();
    await pets?.close();
    await stopStore?.();
  });

  const burst = async (key: string, n: number): Promise<Reply[]> =>
    Promise.all(Array.from({ length: n }, () => call(`${gateway.url}/v1/pets?limit=1`, as(key))));
  const admitted = (replies: Reply[]) => replies.filter((r) => r.status === 200).length;
  const billingOf = async (name: string) =>
    (await adminCall(gateway, 'GET', `/consumers/${name}/billing`)).body as Billing;
  const refillRows = async (name: string) =>
    ((await adminCall(gateway, 'GET', `/consumers/${name}/credits/ledger?days=90`)).body as Ledger).entries.filter(
      (e) => e.kind === 'refill',
    );
  /**
   * The refill rows once `count` are written, or after `waitMs` (a decision writes its refill row after answering:
   * a row that should not exist is given a second to show up).
   */
  const refillRowsWhen = async (name: string, count: number, waitMs = 5_000) => {
    const deadline = Date.now() + waitMs;
    let rows = await refillRows(name);
    while (rows.length < count && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      rows = await refillRows(name);
    }
    return rows;
  };

  it('grant no second refill for the period in progress; the next period, from the last anchor, refills once', async () => {
    const name = unique('acme');
    const key = await mintKey(gateway, 'enterprise', name, ENTERPRISE);
    // On 15 March: months cut on the 1st at midnight, a monthly refill of 100, credits in force at 0.
    const setUp = await adminCall(gateway, 'PATCH', `/consumers/${name}/billing`, {
      billingAnchor: '2027-01-01T00:00:00Z',
      creditRefill: { amount: 100, every: 'month' },
    });
    expect(setUp.status).toBe(200);
    expect(
      (await adminCall(gateway, 'PUT', `/consumers/${name}/credits`, { balance: 0, reason: 'start' })).status,
    ).toBe(200);

    // 10 April, 12:00: the period is 1 Apr -> 1 May; its first decision refills to 100.
    clock.set(at('2027-04-10T12:00:00.000Z'));
    expect((await billingOf(name)).currentPeriod).toEqual({
      start: '2027-04-01T00:00:00.000Z',
      end: '2027-05-01T00:00:00.000Z',
    });
    expect(admitted(await burst(key, 150))).toBe(100);
    expect(await refillRowsWhen(name, 1)).toHaveLength(1);

    // Three moves, each to a reset that alone would start the period later (5, 8, 9 April): nothing more admitted.
    for (const day of ['05', '08', '09']) {
      clock.advance(60_000);
      const moved = await adminCall(gateway, 'PATCH', `/consumers/${name}/billing`, {
        billingAnchor: `2027-01-${day}T00:00:00Z`,
      });
      expect(moved.status).toBe(200);
      const period = { start: '2027-04-01T00:00:00.000Z', end: `2027-05-${day}T00:00:00.000Z` };
      expect((moved.body as Billing).currentPeriod).toEqual(period);
      const replies = await burst(key, 150);
      expect(admitted(replies)).toBe(0);
      // Short of credits with a refill to come: 429, Retry-After to the period's new end (the next refill).
      expectErrorBody(replies[0], 429, 'RATE_LIMITED');
      const untilEnd = Math.ceil((at(period.end) - clock.now()) / 1000);
      expect(Math.abs(Number(replies[0].headers.get('retry-after')) - untilEnd)).toBeLessThanOrEqual(5);
      expect((await billingOf(name)).credits).toMatchObject({ balance: 0, nextRefillAt: period.end });
    }
    expect(await refillRowsWhen(name, 2, 1_000)).toHaveLength(1);

    // Every move is in the audit with its effect: the period in progress keeps its start (no refill), ends later.
    const audit = await adminCall(gateway, 'GET', `/audit?limit=10&action=consumer.billing&target=${name}`);
    const moves = (audit.body as { items: AuditRow[] }).items
      .filter((row) => row.changes.billingPeriod)
      .map((row) => row.changes.billingPeriod);
    expect(moves).toHaveLength(4);
    for (const day of ['05', '08', '09'])
      expect(moves).toContainEqual({
        before: { start: '2027-04-01T00:00:00.000Z', end: expect.any(String) },
        after: { start: '2027-04-01T00:00:00.000Z', end: `2027-05-${day}T00:00:00.000Z` },
      });

    // The old reset (1 May) and the days after it refill nothing: the period was lengthened to 9 May.
    clock.set(at('2027-05-08T23:59:00.000Z'));
    expect(admitted(await burst(key, 20))).toBe(0);
    // 9 May, the last anchor's reset: the next period, refilled once.
    clock.set(at('2027-05-09T00:00:01.000Z'));
    expect((await billingOf(name)).currentPeriod).toEqual({
      start: '2027-05-09T00:00:00.000Z',
      end: '2027-06-09T00:00:00.000Z',
    });
    expect(admitted(await burst(key, 150))).toBe(100);
    expect(await refillRowsWhen(name, 2)).toHaveLength(2);
    const rows = await refillRowsWhen(name, 3, 1_000);
    expect(rows).toHaveLength(2);
    for (const row of rows) expect(row).toMatchObject({ amount: 100, balanceAfter: 100, actor: 'gateway' });
  }, 120_000);

  it('an import that moves the anchor is a move like any: no refill for the period in progress', async () => {
    const name = unique('imported');
    const key = await mintKey(gateway, 'enterprise', name, ENTERPRISE);
    clock.set(at('2027-07-15T00:00:00.000Z'));
    await adminCall(gateway, 'PATCH', `/consumers/${name}/billing`, {
      billingAnchor: '2027-01-01T00:00:00Z',
      creditRefill: { amount: 50, every: 'month' },
    });
    await adminCall(gateway, 'PUT', `/consumers/${name}/credits`, { balance: 0, reason: 'start' });
    clock.set(at('2027-08-10T12:00:00.000Z'));
    expect(admitted(await burst(key, 60))).toBe(50);

    const imported = await adminCall(gateway, 'POST', '/import', {
      consumers: [{ name, plan: 'enterprise', limits: ENTERPRISE, billingAnchor: '2027-01-09T00:00:00Z' }],
    });
    expect(imported.status).toBe(200);
    expect(imported.body).toMatchObject({ updated: 1 });
    expect((await billingOf(name)).currentPeriod).toEqual({
      start: '2027-08-01T00:00:00.000Z',
      end: '2027-09-09T00:00:00.000Z',
    });
    expect(admitted(await burst(key, 60))).toBe(0);
    expect(await refillRowsWhen(name, 2, 1_000)).toHaveLength(1);
    const audit = await adminCall(gateway, 'GET', `/audit?limit=5&action=import.update&target=${name}`);
    expect((audit.body as { items: AuditRow[] }).items[0].changes.billingPeriod).toEqual({
      before: { start: '2027-08-01T00:00:00.000Z', end: '2027-09-01T00:00:00.000Z' },
      after: { start: '2027-08-01T00:00:00.000Z', end: '2027-09-09T00:00:00.000Z' },
    });
  }, 60_000);
});
