import { randomBytes } from 'node:crypto';
import { AppMetrics } from '@app/platform';
import Redis from 'ioredis';
import { ThresholdEvents } from '../../../apps/gateway/src/alerts/threshold-events';
import {
  NotWritten,
  ThresholdEvent,
  ThresholdEventsRepository,
} from '../../../apps/gateway/src/alerts/threshold-events.repository';
import { ThresholdReconciler } from '../../../apps/gateway/src/alerts/threshold-reconciler';
import { adminCall, FakeClock, GatewayUnderTest, mintKey } from '../../support/gateway';
import { call, Reply } from '../../support/http';
import { runIf } from '../../support/skip';
import { withStack } from '../../support/with-stack';

const as = (key: string) => ({ headers: { authorization: `Bearer ${key}` } });
const unique = (prefix: string) => `${prefix}-${randomBytes(4).toString('hex')}`;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const shared = Boolean(process.env.REDIS_URL);
/**
 * Refusals are never strikes (no ban in a burst); events written every 100 ms; no periodic reconciliation (the
 * tests run it when they mean to); a credit balance of 20 or less is low.
 */
const ENV = {
  BAN_GRACE_MS: '600000',
  USAGE_FLUSH_MS: '200',
  ALERT_FLUSH_MS: '100',
  ALERT_RECONCILE_MS: '3600000',
  ALERT_CREDITS_LOW_BALANCE: '20',
};
const ENTERPRISE = { perMinute: 1_000_000, perDay: 100_000_000 };

/**
 * Threshold events (issue #49, docs/alerts.md): exactly one event per consumer × policy × period × threshold across
 * the fleet, from the counters that enforce the limits, with its outbox message; none twice when two instances cross
 * together, none missed when the crossing instance never writes (reconciled by another), none for a period over, and a
 * top-up that lifts the balance above the low level arms it again, once. With REDIS_URL the bursts go to two instances
 * sharing the counters; without, to one (its counters are its own).
 */
describe('threshold events, exactly once', () => {
  const clock = new FakeClock();
  const stack = withStack({
    pets: {},
    database: true,
    sharedKeyPrefix: 'alerts',
    gateways: {
      a: { env: ENV },
      b: { env: ENV },
      // Dies without writing what it queued.
      victim: { env: ENV },
      // On a clock of its own and counters of its own: its periods end when the test says.
      late: { env: { ...ENV, REDIS_URL: '' }, clock },
    },
    timeoutMs: 180_000,
  });
  afterEach(() => jest.restoreAllMocks());

  const targets = () => (shared ? [stack.a, stack.b] : [stack.a]);
  const burst = (key: string, n: number): Promise<Reply[]> =>
    Promise.all(
      Array.from({ length: n }, (_, i) => call(`${targets()[i % targets().length].url}/v1/pets?limit=1`, as(key))),
    );
  const send = async (g: GatewayUnderTest, key: string, n: number): Promise<number[]> => {
    const statuses: number[] = [];
    for (let i = 0; i < n; i += 1) statuses.push((await call(`${g.url}/v1/pets?limit=1`, as(key))).status);
    return statuses;
  };
  /** threshold_events_total, summed over the instances and their labels. */
  const generatedMetric = async (gateways: GatewayUnderTest[]): Promise<number> => {
    let sum = 0;
    for (const g of gateways) {
      const metric = g.app.get(AppMetrics).registry.getSingleMetric('threshold_events_total');
      for (const { value } of (await metric!.get()).values) sum += value;
    }
    return sum;
  };
  const repository = () => stack.a.app.get(ThresholdEventsRepository);
  const eventsOf = (name: string) => repository().eventsOf(name);
  /** The events once `count` are written, and a little longer, so that a late duplicate would be seen. */
  const settled = async (name: string, count: number): Promise<Awaited<ReturnType<typeof eventsOf>>> => {
    for (let waited = 0; waited < 10_000 && (await eventsOf(name)).length < count; waited += 100) await sleep(100);
    await sleep(500);
    return eventsOf(name);
  };
  /** Each event has exactly one outbox message, which carries it, and there is no other message. */
  const expectOutboxOf = async (name: string, events: Array<ThresholdEvent & { source: string }>) => {
    const outbox = await repository().outboxOf(name);
    expect(outbox.map((m) => m.payload.id).sort()).toEqual(events.map((e) => e.id).sort());
    for (const message of outbox) {
      const event = events.find((e) => e.id === message.payload.id)!;
      // Pending until a webhooks worker fans it out into deliveries (docs/webhooks.md), dispatched after.
      expect(message).toMatchObject({ kind: event.type, state: expect.stringMatching(/^(pending|dispatched)$/) });
      const { source, ...carried } = event;
      expect(['request', 'reconciler']).toContain(source);
      expect(message.payload).toEqual(carried);
      expect(message.id).not.toBe(event.id);
    }
  };

  it('a burst over a day window from two instances at once: one event at 80 % and one at 100 %, each with its outbox message', async () => {
    const name = unique('day');
    const key = await mintKey(stack.a, 'enterprise', name, { perMinute: 1_000_000, perDay: 50 });
    const replies = await burst(key, 80);
    expect(replies.filter((r) => r.status === 200)).toHaveLength(50);
    // By threshold: two instances' decision times need not follow the counts they got.
    const events = (await settled(name, 2)).sort((x, y) => x.threshold - y.threshold);
    expect(events).toEqual([
      expect.objectContaining({ type: 'quota.threshold_crossed', policy: 'day', threshold: 80, limit: 50, used: 40 }),
      expect.objectContaining({ type: 'quota.threshold_crossed', policy: 'day', threshold: 100, limit: 50, used: 50 }),
    ]);
    // One period: the day window that opened with the burst, 24 hours long (named from each decision's reset: the
    // same window within milliseconds).
    expect(Math.abs(Date.parse(events[0].periodStart) - Date.parse(events[1].periodStart))).toBeLessThan(1_000);
    for (const event of events) expect(Date.parse(event.periodEnd!) - Date.parse(event.periodStart)).toBe(86_400_000);
    expect(events.map((e) => e.source)).toEqual(['request', 'request']);
    // Counted once by the instance that wrote each (the first test of the file: nothing counted before).
    expect(await generatedMetric([stack.a, stack.b, stack.victim, stack.late])).toBe(2);
    // A reconciliation reads the same window from the counters, its period named from a later reset: nothing more.
    expect(await stack.a.app.get(ThresholdReconciler).reconcile()).toBe(0);
    expect(await eventsOf(name)).toHaveLength(2);
    await expectOutboxOf(name, events);
  });

  it('a burst over a monthly quota from two instances at once: one event each, for the billing period', async () => {
    const name = unique('month');
    const key = await mintKey(stack.a, 'free', name);
    expect((await adminCall(stack.a, 'PATCH', `/consumers/${name}/billing`, { perMonth: 30 })).status).toBe(200);
    const billing = (await adminCall(stack.a, 'GET', `/consumers/${name}/billing`)).body as {
      currentPeriod: { start: string; end: string };
    };
    const replies = await burst(key, 45);
    expect(replies.filter((r) => r.status === 200)).toHaveLength(30);
    // By threshold: two instances' decision times need not follow the counts they got.
    const events = (await settled(name, 2)).sort((x, y) => x.threshold - y.threshold);
    expect(events).toEqual([
      expect.objectContaining({ policy: 'month', threshold: 80, limit: 30, used: 24 }),
      expect.objectContaining({ policy: 'month', threshold: 100, limit: 30, used: 30 }),
    ]);
    for (const event of events) {
      expect(event.periodStart).toBe(billing.currentPeriod.start);
      expect(event.periodEnd).toBe(billing.currentPeriod.end);
    }
    await expectOutboxOf(name, events);
  });

  it('credits: the low balance once; a top-up above it arms it again, once; one below it does not; then spent', async () => {
    const name = unique('credits');
    const key = await mintKey(stack.a, 'enterprise', name, ENTERPRISE);
    const topUp = async (amount: number) => {
      const reply = await adminCall(stack.a, 'POST', `/consumers/${name}/credits/top-ups`, { amount, reason: 'test' });
      expect(reply.status).toBe(201);
      return (reply.body as { entry: { id: string } }).entry.id;
    };
    const first = await topUp(30);
    // 30 → 15: the 10th request takes the balance to 20, the low level.
    expect(new Set(await send(stack.a, key, 15))).toEqual(new Set([200]));
    let events = await settled(name, 1);
    expect(events).toEqual([
      expect.objectContaining({
        type: 'credits.low_balance',
        policy: 'credits',
        threshold: 20,
        balance: 20,
        arming: first,
      }),
    ]);
    // 15 → 25: above the level again, armed; 25 → 15 falls through it: a second event, of the new generation.
    const second = await topUp(10);
    await send(shared ? stack.b : stack.a, key, 10);
    events = await settled(name, 2);
    expect(events.map((e) => [e.type, e.arming, e.balance])).toEqual([
      ['credits.low_balance', first, 20],
      ['credits.low_balance', second, 20],
    ]);
    // 15 → 17: still low, not armed again (the level 0 is: 17 is above it); spending on writes nothing until spent.
    const third = await topUp(2);
    const statuses = await send(stack.a, key, 18);
    expect(statuses.filter((s) => s === 200)).toHaveLength(17);
    expect(statuses.at(-1)).toBe(402);
    events = await settled(name, 3);
    expect(events.map((e) => e.type)).toEqual(['credits.low_balance', 'credits.low_balance', 'credits.exhausted']);
    expect(events[2]).toMatchObject({ threshold: 0, balance: 0, arming: third });
    // A reconciliation finds nothing missing.
    expect(await stack.b.app.get(ThresholdReconciler).reconcile()).toBe(0);
    expect(await eventsOf(name)).toHaveLength(3);
    await expectOutboxOf(name, events);
  });

  it('credits: a crossing undone by a top-up before it was written writes nothing; the next fall writes one', async () => {
    const name = unique('undone');
    const key = await mintKey(stack.a, 'enterprise', name, ENTERPRISE);
    const topUp = async (amount: number) =>
      expect(
        (await adminCall(stack.a, 'POST', `/consumers/${name}/credits/top-ups`, { amount, reason: 'test' })).status,
      ).toBe(201);
    await topUp(25);
    const events = stack.a.app.get(ThresholdEvents);
    const flush = jest.spyOn(events, 'flush').mockResolvedValue();
    // 25 → 20: the low level crossed, held in the queue; then lifted to 30 before the write.
    expect(await send(stack.a, key, 5)).toEqual(new Array(5).fill(200));
    await topUp(10);
    const record = jest.spyOn(stack.a.app.get(ThresholdEventsRepository), 'record');
    flush.mockRestore();
    await events.flush();
    expect(await Promise.all(record.mock.results.map((r) => r.value as Promise<NotWritten>))).toEqual(['undone']);
    expect(await eventsOf(name)).toEqual([]);
    // 30 → 20 falls through the level again: one event, armed by the second top-up.
    await send(stack.a, key, 10);
    expect(await settled(name, 1)).toEqual([
      expect.objectContaining({ type: 'credits.low_balance', threshold: 20, balance: 20 }),
    ]);
  });

  it('the instance that decided the crossings dies before writing them: a reconciliation elsewhere writes each exactly once', async () => {
    const name = unique('victim');
    const key = await mintKey(stack.a, 'enterprise', name, { perMinute: 1_000, perDay: 10 });
    expect((await adminCall(stack.a, 'PATCH', `/consumers/${name}/billing`, { perMonth: 10 })).status).toBe(200);
    // Its queue is never written: neither by its timer nor on its way down.
    jest.spyOn(stack.victim.app.get(ThresholdEvents), 'flush').mockResolvedValue();
    expect(await send(stack.victim, key, 10)).toEqual(new Array(10).fill(200));
    await sleep(600);
    await stack.victim.close();
    expect(await eventsOf(name)).toEqual([]);

    const reconciler = stack.b.app.get(ThresholdReconciler);
    await reconciler.reconcile();
    const events = await eventsOf(name);
    const reconciled = (policy: string, threshold: number) =>
      expect.objectContaining({ policy, threshold, limit: 10, used: 10, source: 'reconciler' });
    // The month from the usage history (and the shared counter); the day window from the shared counters only (on
    // in-process counters the dead instance's day window died with it).
    expect(events).toEqual(
      shared
        ? [reconciled('day', 80), reconciled('month', 80), reconciled('day', 100), reconciled('month', 100)]
        : [reconciled('month', 80), reconciled('month', 100)],
    );
    // Again, and from the other instance at the same time: nothing more.
    await Promise.all([reconciler.reconcile(), stack.a.app.get(ThresholdReconciler).reconcile()]);
    expect(await eventsOf(name)).toHaveLength(events.length);
    await expectOutboxOf(name, events);
  });

  it('a period over by the time of the write: neither the late flush nor a reconciliation writes anything', async () => {
    const name = unique('late');
    const key = await mintKey(stack.late, 'free', name);
    // The period in progress ends in 30 minutes (the anchor moved: the period is re-cut to end there).
    const anchor = new Date(clock.now() + 30 * 60_000).toISOString();
    expect(
      (await adminCall(stack.late, 'PATCH', `/consumers/${name}/billing`, { perMonth: 10, billingAnchor: anchor }))
        .status,
    ).toBe(200);
    const events = stack.late.app.get(ThresholdEvents);
    const flush = jest.spyOn(events, 'flush').mockResolvedValue();
    expect(await send(stack.late, key, 10)).toEqual(new Array(10).fill(200));
    await sleep(500); // the usage history has the 10 answers

    clock.advance(31 * 60_000);
    const record = jest.spyOn(stack.late.app.get(ThresholdEventsRepository), 'record');
    flush.mockRestore();
    await events.flush();
    // Both crossings were queued, and both refused for their period's end.
    const outcomes = await Promise.all(record.mock.results.map((r) => r.value as Promise<NotWritten>));
    expect(outcomes).toEqual(['period-over', 'period-over']);
    // The new period has used nothing: no threshold reached.
    expect(await stack.late.app.get(ThresholdReconciler).reconcile()).toBe(0);
    expect(await eventsOf(name)).toEqual([]);
    clock.reset();
  });

  runIf(shared, 'REDIS_URL (a Redis the instances share)').it(
    'Redis forgets the counters mid-period: crossing the same thresholds again writes nothing twice',
    async () => {
      const name = unique('forgot');
      const key = await mintKey(stack.a, 'free', name);
      expect((await adminCall(stack.a, 'PATCH', `/consumers/${name}/billing`, { perMonth: 20 })).status).toBe(200);
      await burst(key, 20);
      expect(await settled(name, 2)).toHaveLength(2);
      const redis = new Redis(process.env.REDIS_URL!);
      try {
        const keys = await redis.keys(`${stack.keyPrefix}rl:{consumer:${name}}*`);
        expect(keys.length).toBeGreaterThan(0);
        await redis.del(...keys);
      } finally {
        redis.disconnect();
      }
      // The month counts from 0 again: 80 % and 100 % are crossed a second time, in the same period.
      expect((await burst(key, 25)).filter((r) => r.status === 200)).toHaveLength(20);
      await sleep(1_000);
      expect(await eventsOf(name)).toHaveLength(2);
    },
  );
});
