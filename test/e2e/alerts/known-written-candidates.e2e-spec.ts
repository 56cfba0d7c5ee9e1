import { randomBytes } from 'node:crypto';
import { AppMetrics } from '@app/platform';
import { ThresholdEvents } from '../../../apps/gateway/src/alerts/threshold-events';
import {
  ThresholdCandidate,
  ThresholdEventsRepository,
} from '../../../apps/gateway/src/alerts/threshold-events.repository';
import { ThresholdReconciler } from '../../../apps/gateway/src/alerts/threshold-reconciler';
import { adminCall, GatewayUnderTest, mintKey } from '../../support/gateway';
import { call } from '../../support/http';
import { withStack } from '../../support/with-stack';

const as = (key: string) => ({ headers: { authorization: `Bearer ${key}` } });
const unique = (prefix: string) => `${prefix}-${randomBytes(4).toString('hex')}`;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** No periodic reconciliation (the tests run it); events written every 100 ms; a balance of 20 or less is low. */
const ENV = {
  BAN_GRACE_MS: '600000',
  USAGE_FLUSH_MS: '200',
  ALERT_FLUSH_MS: '100',
  ALERT_RECONCILE_MS: '3600000',
  ALERT_CREDITS_LOW_BALANCE: '20',
};

/**
 * Candidates whose event is known written are dropped before their write (docs/alerts.md, "The request path"): by
 * the instance's memory of the events it wrote or found, then by one query for the rest of the batch; only the
 * others cost a transaction (ThresholdEventsRepository.record, still the last word).
 */
describe('candidates of events known written', () => {
  const stack = withStack({
    pets: {},
    database: true,
    sharedKeyPrefix: 'known',
    gateways: { a: { env: ENV }, b: { env: ENV } },
    timeoutMs: 120_000,
  });
  afterEach(() => jest.restoreAllMocks());

  const send = async (g: GatewayUnderTest, key: string, n: number): Promise<number[]> => {
    const statuses: number[] = [];
    for (let i = 0; i < n; i += 1) statuses.push((await call(`${g.url}/v1/pets?limit=1`, as(key))).status);
    return statuses;
  };
  const eventsOf = (name: string) => stack.a.app.get(ThresholdEventsRepository).eventsOf(name);
  const settled = async (name: string, count: number) => {
    for (let waited = 0; waited < 10_000 && (await eventsOf(name)).length < count; waited += 100) await sleep(100);
    await sleep(400);
    return eventsOf(name);
  };
  const knownMetric = async (g: GatewayUnderTest): Promise<number> => {
    const metric = g.app.get(AppMetrics).registry.getSingleMetric('threshold_candidates_known_total');
    return (await metric!.get()).values.reduce((sum, { value }) => sum + value, 0);
  };
  const spies = (g: GatewayUnderTest) => {
    const repository = g.app.get(ThresholdEventsRepository);
    return { record: jest.spyOn(repository, 'record'), query: jest.spyOn(repository, 'alreadyWritten') };
  };

  it("a reconciliation of thresholds already written: the writer's memory drops them, another instance's one query does", async () => {
    const name = unique('reached');
    const key = await mintKey(stack.a, 'enterprise', name, { perMinute: 1_000, perDay: 1_000_000 });
    expect((await adminCall(stack.a, 'PATCH', `/consumers/${name}/billing`, { perMonth: 10 })).status).toBe(200);
    expect(await send(stack.a, key, 10)).toEqual(new Array(10).fill(200));
    expect((await settled(name, 2)).map((e) => [e.policy, e.threshold, e.source])).toEqual([
      ['month', 80, 'request'],
      ['month', 100, 'request'],
    ]);
    await sleep(400); // the usage history has the 10 answers: the reconciliation finds the month reached

    // The instance that wrote them knows them: no query, no transaction.
    let { record, query } = spies(stack.a);
    const knownBefore = await knownMetric(stack.a);
    expect(await stack.a.app.get(ThresholdReconciler).reconcile()).toBe(0);
    expect(record).not.toHaveBeenCalled();
    const asked = query.mock.calls.flatMap(([candidates]) => candidates.filter((c) => c.consumer === name));
    expect(asked).toEqual([]);
    expect((await knownMetric(stack.a)) - knownBefore).toBeGreaterThanOrEqual(2);
    jest.restoreAllMocks();

    // The other instance does not: one query finds them written, still no transaction for them.
    ({ record, query } = spies(stack.b));
    expect(await stack.b.app.get(ThresholdReconciler).reconcile()).toBe(0);
    expect(record.mock.calls.filter(([candidate]) => candidate.consumer === name)).toEqual([]);
    expect(query).toHaveBeenCalledTimes(1);
    expect(query.mock.calls[0][0].filter((c) => c.consumer === name).map((c) => c.threshold)).toEqual([80, 100]);
    jest.restoreAllMocks();
    // And now it knows them too: its next reconciliation asks nothing about them.
    ({ query } = spies(stack.b));
    await stack.b.app.get(ThresholdReconciler).reconcile();
    expect(query.mock.calls.flatMap(([candidates]) => candidates.filter((c) => c.consumer === name))).toEqual([]);
    expect(await eventsOf(name)).toHaveLength(2);
  });

  it('the same crossing many times in one batch: one transaction writes it, the rest are dropped', async () => {
    const name = unique('burst');
    await mintKey(stack.a, 'free', name);
    const now = Date.now();
    const candidate: ThresholdCandidate = {
      consumer: name,
      policy: 'day',
      threshold: 80,
      periodStartMs: now - 1_000,
      periodEndMs: now - 1_000 + 86_400_000,
      limit: 10,
      used: 8,
      balance: null,
      crossedAtMs: now,
      source: 'request',
    };
    const { record } = spies(stack.a);
    // The same day window named from decisions a few milliseconds apart, as two instances' would be.
    const batch = Array.from({ length: 20 }, (_, i) => ({ ...candidate, periodStartMs: candidate.periodStartMs + i }));
    expect(await stack.a.app.get(ThresholdEvents).writeAll(batch)).toBe(1);
    expect(record).toHaveBeenCalledTimes(1);
    expect(await eventsOf(name)).toEqual([expect.objectContaining({ policy: 'day', threshold: 80 })]);
  });

  it('credits: a crossing already written for its arming generation is found by the query; a new generation is not', async () => {
    const name = unique('credits');
    const key = await mintKey(stack.a, 'enterprise', name, { perMinute: 1_000, perDay: 1_000_000 });
    const topUp = async (amount: number) =>
      expect(
        (await adminCall(stack.a, 'POST', `/consumers/${name}/credits/top-ups`, { amount, reason: 'test' })).status,
      ).toBe(201);
    await topUp(25);
    await send(stack.a, key, 5); // 25 → 20: low
    expect(await settled(name, 1)).toHaveLength(1);
    const low: ThresholdCandidate = {
      consumer: name,
      policy: 'credits',
      threshold: 20,
      periodStartMs: 0,
      periodEndMs: 0,
      limit: null,
      used: null,
      balance: 20,
      crossedAtMs: Date.now(),
      source: 'reconciler',
    };
    const { record } = spies(stack.b);
    expect(await stack.b.app.get(ThresholdEvents).writeAll([low, low])).toBe(0);
    expect(record).not.toHaveBeenCalled();
    // A top-up above the level arms a new generation: its fall is not known written, and is written once.
    await topUp(10);
    expect(await stack.b.app.get(ThresholdEvents).writeAll([{ ...low, crossedAtMs: Date.now() + 1 }])).toBe(1);
    expect(record).toHaveBeenCalledTimes(1);
    expect(await eventsOf(name)).toHaveLength(2);
  });
});
