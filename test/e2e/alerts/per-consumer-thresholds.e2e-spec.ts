import { randomBytes } from 'node:crypto';
import { ThresholdEventsRepository } from '../../../apps/gateway/src/alerts/threshold-events.repository';
import { adminCall, mintKey } from '../../support/gateway';
import { call } from '../../support/http';
import { withStack } from '../../support/with-stack';

const as = (key: string) => ({ headers: { authorization: `Bearer ${key}` } });
const unique = (prefix: string) => `${prefix}-${randomBytes(4).toString('hex')}`;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const ENV = { BAN_GRACE_MS: '600000', ALERT_FLUSH_MS: '100', ALERT_RECONCILE_MS: '3600000' };

/**
 * A consumer's own alert thresholds (issue #49 point 1, docs/alerts.md): set through the billing route, validated,
 * returned by it and audited, and the ones its next crossings are compared with (each side on its own: a side it
 * has not set is its plan's); null: its plan's again.
 */
describe("a consumer's own alert thresholds", () => {
  const stack = withStack({ pets: {}, gateway: { env: ENV } });

  const send = async (key: string, n: number): Promise<number[]> => {
    const statuses: number[] = [];
    for (let i = 0; i < n; i += 1) statuses.push((await call(`${stack.gateway.url}/v1/pets?limit=1`, as(key))).status);
    return statuses;
  };
  const eventsOf = (name: string) => stack.gateway.app.get(ThresholdEventsRepository).eventsOf(name);
  const settled = async (name: string, count: number) => {
    for (let waited = 0; waited < 10_000 && (await eventsOf(name)).length < count; waited += 100) await sleep(100);
    await sleep(400);
    return eventsOf(name);
  };
  const setAlerts = (name: string, alerts: unknown) =>
    adminCall(stack.gateway, 'PATCH', `/consumers/${name}/billing`, { alerts });

  it('set, read and audited; its windows cross its own percents, its balance its own low level', async () => {
    const name = unique('own');
    const key = await mintKey(stack.gateway, 'enterprise', name, { perMinute: 1_000, perDay: 10 });
    const set = await setAlerts(name, { thresholdsPercent: [30, 60], creditsLowBalance: 5 });
    expect(set.status).toBe(200);
    expect((set.body as { alerts: unknown }).alerts).toEqual({ thresholdsPercent: [30, 60], creditsLowBalance: 5 });
    const read = await adminCall(stack.gateway, 'GET', `/consumers/${name}/billing`);
    expect((read.body as { alerts: unknown }).alerts).toEqual({ thresholdsPercent: [30, 60], creditsLowBalance: 5 });
    const audit = await adminCall(stack.gateway, 'GET', `/audit?target=${name}&action=consumer.billing`);
    expect((audit.body as { items: Array<{ changes: unknown }> }).items.map((row) => row.changes)).toEqual([
      { alerts: { before: null, after: { thresholdsPercent: [30, 60], creditsLowBalance: 5 } } },
    ]);
    // The same again changes nothing: no second audit row.
    expect((await setAlerts(name, { creditsLowBalance: 5, thresholdsPercent: [30, 60] })).status).toBe(200);
    const again = await adminCall(stack.gateway, 'GET', `/audit?target=${name}&action=consumer.billing`);
    expect((again.body as { items: unknown[] }).items).toHaveLength(1);

    expect(
      (await adminCall(stack.gateway, 'POST', `/consumers/${name}/credits/top-ups`, { amount: 8, reason: 't' })).status,
    ).toBe(201);
    // A day limit of 10: 30 % is the 3rd request, 60 % the 6th; 80 % and 100 % (the gateway's) raise nothing.
    // Credits 8 → 0: the low level 5 at the 3rd request, 0 at the 8th.
    expect(await send(key, 9)).toEqual([...new Array(8).fill(200), 402]);
    const events = await settled(name, 4);
    expect(events.map((e) => [e.type, e.policy, e.threshold, e.used ?? e.balance])).toEqual([
      // The 3rd request crosses both (one decision time: by threshold).
      ['credits.low_balance', 'credits', 5, 5],
      ['quota.threshold_crossed', 'day', 30, 3],
      ['quota.threshold_crossed', 'day', 60, 6],
      ['credits.exhausted', 'credits', 0, 0],
    ]);
  });

  it("a side left out is its plan's; null brings back the plan's for both", async () => {
    const name = unique('side');
    const key = await mintKey(stack.gateway, 'enterprise', name, { perMinute: 1_000, perDay: 10 });
    expect((await setAlerts(name, { creditsLowBalance: 0 })).status).toBe(200);
    // Its windows: the gateway's 80 % and 100 %.
    await send(key, 10);
    expect((await settled(name, 2)).map((e) => e.threshold)).toEqual([80, 100]);

    const cleared = await setAlerts(name, null);
    expect(cleared.status).toBe(200);
    expect((cleared.body as { alerts: unknown }).alerts).toBeNull();
    // An empty object states nothing of its own either.
    expect(((await setAlerts(name, {})).body as { alerts: unknown }).alerts).toBeNull();
  });

  it('a new setting is in force for the next request (every instance forgets the consumer it cached)', async () => {
    const name = unique('next');
    const key = await mintKey(stack.gateway, 'enterprise', name, { perMinute: 1_000, perDay: 10 });
    await send(key, 1); // cached with the gateway's thresholds
    expect((await setAlerts(name, { thresholdsPercent: [20] })).status).toBe(200);
    await send(key, 9);
    expect((await settled(name, 1)).map((e) => [e.threshold, e.used])).toEqual([[20, 2]]);
  });

  it.each([
    [{ thresholdsPercent: [80, 50] }, 'alerts.thresholdsPercent must be in ascending order without repeats'],
    [{ thresholdsPercent: [50, 50] }, 'alerts.thresholdsPercent must be in ascending order without repeats'],
    [{ thresholdsPercent: [10, 20, 30, 40, 50, 60] }, 'alerts.thresholdsPercent takes at most 5 thresholds'],
    [{ thresholdsPercent: [] }, 'alerts.thresholdsPercent must not be empty'],
    [{ thresholdsPercent: [0, 50] }, 'alerts.thresholdsPercent must hold percents from 1 to 100'],
    [{ thresholdsPercent: [50, 101] }, 'alerts.thresholdsPercent must hold percents from 1 to 100'],
    [{ thresholdsPercent: [50.5] }, 'alerts.thresholdsPercent must hold whole percents'],
    [{ thresholdsPercent: ['80'] }, 'alerts.thresholdsPercent must hold whole percents'],
    [{ thresholdsPercent: 80 }, 'alerts.thresholdsPercent must be a list of whole percents'],
    [{ creditsLowBalance: -1 }, 'alerts.creditsLowBalance must be at least 0'],
    [{ creditsLowBalance: 2.5 }, 'alerts.creditsLowBalance must be an integer'],
    [{ lowBalance: 5 }, 'lowBalance'],
    ['80', 'alerts must be'],
  ])('refuses alerts %j with a 400 naming the rule', async (alerts, message) => {
    const name = unique('bad');
    await mintKey(stack.gateway, 'free', name);
    const reply = await setAlerts(name, alerts);
    expect(reply.status).toBe(400);
    expect(reply.body).toMatchObject({ code: 'VALIDATION_FAILED' });
    expect(JSON.stringify(reply.body)).toContain(message);
  });
});
