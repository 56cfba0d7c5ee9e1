import { randomBytes } from 'node:crypto';
import { getDataSourceToken } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import {
  ThresholdCandidate,
  ThresholdEventsRepository,
} from '../../../apps/gateway/src/alerts/threshold-events.repository';
import { FleetLeases } from '../../../apps/gateway/src/alerts/fleet-leases';
import { GATEWAY_DATA_SOURCE } from '../../../apps/gateway/src/database/data-source.options';
import { WebhookDeliveriesRepository } from '../../../apps/gateway/src/webhooks/webhook-deliveries.repository';
import { RETENTION_LEASE, WebhookRetention } from '../../../apps/gateway/src/webhooks/webhook-retention';
import { adminCall, GatewayUnderTest } from '../../support/gateway';
import { withStack } from '../../support/with-stack';

const unique = (prefix: string) => `${prefix}-${randomBytes(4).toString('hex')}`;
const DAY_MS = 86_400_000;
const HOOK_URL = 'http://127.0.0.1:9/hook';
/** No worker (the test records the attempts itself), no periodic reconciliation, no Redis. */
const ENV = {
  OUTBOUND_ALLOW_LIST: '127.0.0.1/32',
  WEBHOOKS_ENABLED: 'false',
  ALERT_RECONCILE_MS: '3600000',
  // Counters of their own: nothing here counts requests, and a credit top-up needs no shared store.
  REDIS_URL: '',
};

/**
 * Retention (docs/webhooks.md and docs/alerts.md, "Retention"), by direct calls on the gateway's real database with
 * the pruning's clock moved ahead: finished deliveries and their attempts go after WEBHOOK_RETENTION_DAYS (30),
 * then the fanned-out messages nothing refers to; pending deliveries and messages stay whatever their age; a
 * window's event goes ALERT_EVENT_RETENTION_DAYS (400) after its period ended, never while it is current; a credit
 * level's only once a later top-up re-armed it; and of two instances only the lease's holder prunes.
 */
describe('retention of deliveries, outbox messages and threshold events', () => {
  const stack = withStack({ pets: {}, database: true, gateways: { a: { env: ENV }, b: { env: ENV } } });
  const admin = (method: string, path: string, body?: unknown) => adminCall(stack.a, method, path, body);
  const source = () => stack.a.app.get<DataSource>(getDataSourceToken(GATEWAY_DATA_SOURCE), { strict: false });
  const schema = () => (source().options as { schema: string }).schema;
  const count = async (table: string, where: string, params: unknown[]): Promise<number> => {
    const [row]: Array<{ n: string }> = await source().query(
      `SELECT count(*) AS n FROM "${schema()}"."${table}" WHERE ${where}`,
      params,
    );
    return Number(row.n);
  };
  const retention = (g: GatewayUnderTest = stack.a) => g.app.get(WebhookRetention);
  const events = () => stack.a.app.get(ThresholdEventsRepository);

  it('deletes finished deliveries with their attempts and the messages nothing refers to; keeps what is pending', async () => {
    const name = unique('ret');
    expect((await admin('POST', '/consumers', { name, plan: 'free' })).status).toBe(201);
    const endpoint = (await admin('POST', `/consumers/${name}/webhook-endpoints`, { url: HOOK_URL })).body as {
      id: string;
    };
    const test = async () =>
      ((await admin('POST', `/consumers/${name}/webhook-endpoints/${endpoint.id}/test`)).body as { id: string }).id;
    const delivered = await test();
    const repository = stack.a.app.get(WebhookDeliveriesRepository);
    const now = Date.now();
    const [claimed] = await repository.claim(now, 1, now + 60_000);
    expect(claimed.id).toBe(delivered);
    await repository.recordAttempt(claimed, { ok: true, status: 204, error: null, latencyMs: 3 }, now, DAY_MS);
    const pending = await test();
    // A threshold event's message that no worker fanned out: pending, kept whatever its age.
    const written = await events().record(windowCandidate(name, now, now + DAY_MS), now);
    expect(typeof written).toBe('object');
    const messages = () => count('outbox_messages', 'consumer = $1', [name]);
    expect(await messages()).toBe(3);
    expect(await count('webhook_attempts', 'delivery_id = $1', [delivered])).toBe(1);

    // Within the 30 days: nothing goes.
    expect(await retention().prune(now + 29 * DAY_MS)).toMatchObject({ deliveries: 0, messages: 0 });
    expect(await count('webhook_deliveries', 'consumer = $1', [name])).toBe(2);
    // Past them: the delivered one and its attempt, then its message; the pending delivery and its message stay.
    const pruned = await retention().prune(now + 31 * DAY_MS);
    expect(pruned.deliveries).toBeGreaterThanOrEqual(1);
    expect(await count('webhook_deliveries', 'id = $1', [delivered])).toBe(0);
    expect(await count('webhook_attempts', 'delivery_id = $1', [delivered])).toBe(0);
    expect(await count('webhook_deliveries', 'id = $1', [pending])).toBe(1);
    expect(await count('outbox_messages', 'id = $1', [claimed.messageId])).toBe(0);
    expect(await messages()).toBe(2);
    expect(await count('outbox_messages', "consumer = $1 AND state = 'pending'", [name])).toBe(1);
  });

  it("deletes a window's event 400 days after its period ended, never while current; a credit level's once re-armed", async () => {
    const name = unique('ret');
    expect((await admin('POST', '/consumers', { name, plan: 'free' })).status).toBe(201);
    const now = Date.now();
    const write = async (candidate: ThresholdCandidate, at = now) => {
      const event = await events().record(candidate, at);
      if (typeof event === 'string') throw new Error(`not written: ${event}`);
      return event.id;
    };
    const endedSoon = await write(windowCandidate(name, now, now + DAY_MS, 'day'));
    const endsLater = await write(windowCandidate(name, now, now + 20 * DAY_MS, 'month'));
    const current = await write({ ...windowCandidate(name, now, now + 900 * DAY_MS, 'day'), threshold: 100 });
    // A credit level armed by a top-up, crossed; then a second top-up re-arms it: that generation's event may go.
    expect((await admin('POST', `/consumers/${name}/credits/top-ups`, { amount: 500, reason: 'x' })).status).toBe(201);
    const crossing = { ...creditsCandidate(name, 100), crossedAtMs: Date.now() + 5 };
    const rearmed = await write(crossing, crossing.crossedAtMs);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect((await admin('POST', `/consumers/${name}/credits/top-ups`, { amount: 500, reason: 'y' })).status).toBe(201);
    // Level 0 was crossed under the second top-up's generation and nothing re-armed it since: kept.
    const stillArmed = await write({ ...creditsCandidate(name, 0), crossedAtMs: Date.now() + 5 }, Date.now() + 5);
    const ids = async () => (await events().eventsOf(name)).map((e) => e.id).sort();
    expect(await ids()).toEqual([endedSoon, endsLater, current, rearmed, stillArmed].sort());

    // 399 days after the first period ended: nothing of this consumer goes.
    await retention().prune(now + DAY_MS + 399 * DAY_MS);
    expect(await ids()).toHaveLength(5);
    // 401 days after it: that event, and the re-armed credit level's (crossed 400+ days ago).
    await retention().prune(now + DAY_MS + 401 * DAY_MS);
    expect(await ids()).toEqual([endsLater, current, stillArmed].sort());
    // Much later: the month's too; the current period's and the armed level's never.
    await retention().prune(now + 800 * DAY_MS);
    expect(await ids()).toEqual([current, stillArmed].sort());
  });

  it('of two instances, only the holder of the retention lease prunes', async () => {
    // Whoever took it at start (each instance's first try is at a random moment of its first hour) gives it up.
    for (const g of [stack.a, stack.b]) await g.app.get(FleetLeases).release(RETENTION_LEASE);
    const first = await retention(stack.a).pruneIfHolder();
    expect(first).toBeDefined();
    expect(await retention(stack.b).pruneIfHolder()).toBeUndefined();
    expect(await retention(stack.a).pruneIfHolder()).toBeDefined();
  });
});

function windowCandidate(
  consumer: string,
  now: number,
  periodEndMs: number,
  policy: 'day' | 'month' = 'day',
): ThresholdCandidate {
  return {
    consumer,
    policy,
    threshold: 80,
    periodStartMs: now - 1000,
    periodEndMs,
    limit: 100,
    used: 80,
    balance: null,
    crossedAtMs: now,
    source: 'request',
  };
}

function creditsCandidate(consumer: string, level: number): ThresholdCandidate {
  return {
    consumer,
    policy: 'credits',
    threshold: level,
    periodStartMs: 0,
    periodEndMs: 0,
    limit: null,
    used: null,
    balance: level,
    crossedAtMs: Date.now(),
    source: 'request',
  };
}
