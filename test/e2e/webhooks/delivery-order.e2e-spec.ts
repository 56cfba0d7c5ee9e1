import { randomBytes, randomUUID } from 'node:crypto';
import { getDataSourceToken } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { GATEWAY_DATA_SOURCE, schemaOf } from '../../../apps/gateway/src/database/data-source.options';
import { AddOutboxMessageSeq1797200000000 } from '../../../apps/gateway/src/database/migrations/1797200000000-AddOutboxMessageSeq';
import { WebhookDeliveriesRepository } from '../../../apps/gateway/src/webhooks/webhook-deliveries.repository';
import { adminCall } from '../../support/gateway';
import { idSorting, migratedGatewayDatabase } from '../../support/migrated-gateway-database';
import { withStack } from '../../support/with-stack';

const unique = (prefix: string) => `${prefix}-${randomBytes(4).toString('hex')}`;
const DAY_MS = 86_400_000;
const LEASE_MS = 60_000;

/**
 * Delivery order (issue #49, docs/webhooks.md, "Order"), by direct calls on the gateway's real database: two
 * messages written in the same millisecond, the second with an id that sorts first, reach an endpoint in the order
 * they were written (their seq). The newer one is not attempted while the older one is pending, however their ids
 * sort.
 */
describe('webhook deliveries follow the outbox order exactly', () => {
  const stack = withStack({
    pets: {},
    database: true,
    // No worker: the test fans out, claims and records attempts itself, each at the time it names.
    gateway: { env: { OUTBOUND_ALLOW_LIST: '127.0.0.1/32', WEBHOOKS_ENABLED: 'false', ALERT_RECONCILE_MS: '3600000' } },
  });
  const source = () => stack.gateway.app.get<DataSource>(getDataSourceToken(GATEWAY_DATA_SOURCE), { strict: false });
  const repository = () => stack.gateway.app.get(WebhookDeliveriesRepository);

  /** A pending threshold message, as ThresholdEventsRepository.record writes one (the database sets its seq). */
  const writeMessage = (id: string, consumer: string, at: number) =>
    source().query(
      `INSERT INTO "${schemaOf(source())}"."outbox_messages" (id, kind, consumer, payload, created_at, available_at, state, attempts) ` +
        `VALUES ($1, 'quota.threshold_crossed', $2, $3::jsonb, $4, $4, 'pending', 0)`,
      [id, consumer, JSON.stringify({ id: randomUUID(), type: 'quota.threshold_crossed', consumer }), new Date(at)],
    );

  it('holds a message written in the same millisecond behind an older one still pending, whatever their ids', async () => {
    const name = unique('order');
    expect((await adminCall(stack.gateway, 'POST', '/consumers', { name, plan: 'free' })).status).toBe(201);
    const created = await adminCall(stack.gateway, 'POST', `/consumers/${name}/webhook-endpoints`, {
      url: 'http://127.0.0.1:9/hook',
    });
    expect(created.status).toBe(201);
    const endpointId = (created.body as { id: string }).id;
    const claimAt = async (now: number) =>
      (await repository().claim(now, 10, now + LEASE_MS)).filter((d) => d.endpoint?.id === endpointId);
    const fail = { ok: false, status: 503, error: 'HTTP 503', latencyMs: 1 };
    const ok = { ok: true, status: 204, error: null, latencyMs: 1 };

    const now = Date.now();
    const older = idSorting('f');
    const newer = idSorting('0');
    await writeMessage(older, name, now);
    expect(await repository().fanOut(now)).toBe(1);
    const [first] = await claimAt(now);
    expect(first.messageId).toBe(older);
    const failed = await repository().recordAttempt(first, fail, now, DAY_MS, 0.5);
    expect(failed.state).toBe('pending');
    const retryAt = failed.nextAttemptAt!.getTime();

    // Written in the same millisecond, its id sorting first: newer all the same, so it waits.
    await writeMessage(newer, name, now);
    expect(await repository().fanOut(now)).toBe(1);
    expect(await claimAt(now)).toEqual([]);

    // At the older one's retry, that one goes (one at a time per endpoint), and the newer one only after it.
    const [retried] = await claimAt(retryAt);
    expect(retried.messageId).toBe(older);
    expect((await repository().recordAttempt(retried, ok, retryAt, DAY_MS)).state).toBe('delivered');
    const [next] = await claimAt(retryAt);
    expect(next.messageId).toBe(newer);
  });

  it("holds a test event's delivery behind an older message no instance has fanned out yet", async () => {
    const name = unique('fanout');
    expect((await adminCall(stack.gateway, 'POST', '/consumers', { name, plan: 'free' })).status).toBe(201);
    const created = await adminCall(stack.gateway, 'POST', `/consumers/${name}/webhook-endpoints`, {
      url: 'http://127.0.0.1:9/hook',
    });
    const endpointId = (created.body as { id: string }).id;
    const claimAt = async (now: number) =>
      (await repository().claim(now, 10, now + LEASE_MS)).filter((d) => d.endpoint?.id === endpointId);
    const now = Date.now();
    // A threshold message written, not fanned out yet (another instance's fan-out holds it, or no tick took it).
    const threshold = randomUUID();
    await writeMessage(threshold, name, now);
    // A test event, whose delivery the admin route writes at once: newer, so it must not go first.
    const test = await adminCall(stack.gateway, 'POST', `/consumers/${name}/webhook-endpoints/${endpointId}/test`);
    expect(test.status).toBe(202);
    expect(await claimAt(Date.now())).toEqual([]);
    // Once fanned out, the older message goes first.
    expect(await repository().fanOut(Date.now())).toBeGreaterThanOrEqual(1);
    const [first] = await claimAt(Date.now());
    expect(first.messageId).toBe(threshold);
  });
});

/** An attempt that ends after its endpoint was removed records nothing: no attempt row without its delivery. */
describe('an attempt recorded after its endpoint was removed', () => {
  const stack = withStack({
    pets: {},
    database: true,
    gateway: { env: { OUTBOUND_ALLOW_LIST: '127.0.0.1/32', WEBHOOKS_ENABLED: 'false', ALERT_RECONCILE_MS: '3600000' } },
  });

  it('leaves no orphan attempt row', async () => {
    const source = stack.gateway.app.get<DataSource>(getDataSourceToken(GATEWAY_DATA_SOURCE), { strict: false });
    const repository = stack.gateway.app.get(WebhookDeliveriesRepository);
    const name = unique('removed');
    expect((await adminCall(stack.gateway, 'POST', '/consumers', { name, plan: 'free' })).status).toBe(201);
    const created = await adminCall(stack.gateway, 'POST', `/consumers/${name}/webhook-endpoints`, {
      url: 'http://127.0.0.1:9/hook',
    });
    const endpointId = (created.body as { id: string }).id;
    const test = await adminCall(stack.gateway, 'POST', `/consumers/${name}/webhook-endpoints/${endpointId}/test`);
    expect(test.status).toBe(202);
    const now = Date.now();
    const [claimed] = (await repository.claim(now, 10, now + LEASE_MS)).filter((d) => d.endpoint?.id === endpointId);
    expect(claimed).toBeDefined();
    // The endpoint is removed while its attempt is in flight; then the attempt ends.
    expect(
      (await adminCall(stack.gateway, 'DELETE', `/consumers/${name}/webhook-endpoints/${endpointId}`)).status,
    ).toBe(204);
    await repository.recordAttempt(claimed, { ok: false, status: 503, error: 'HTTP 503', latencyMs: 1 }, now, DAY_MS);
    const orphans: unknown[] = await source.query(
      `SELECT 1 FROM "${schemaOf(source)}"."webhook_attempts" WHERE delivery_id = $1`,
      [claimed.id],
    );
    expect(orphans).toEqual([]);
  });
});

/** The migration numbers the messages already written in their old order, (created_at, id), and their deliveries. */
describe('AddOutboxMessageSeq on existing rows', () => {
  let migrated: Awaited<ReturnType<typeof migratedGatewayDatabase>> | undefined;
  let source: DataSource;

  beforeAll(async () => {
    migrated = await migratedGatewayDatabase();
    source = migrated.source;
  });
  afterAll(() => migrated?.close());

  it('gives existing messages a seq in (created_at, id) order, carries it to their deliveries, and goes on from there', async () => {
    const migration = new AddOutboxMessageSeq1797200000000();
    const runner = source.createQueryRunner();
    try {
      // The schema as it was before: messages and deliveries without seq.
      await migration.down(runner);
      const at = (ms: number) => new Date(Date.UTC(2026, 0, 1) + ms);
      // Inserted out of order: the oldest last, and two of one millisecond whose ids sort the other way round.
      const rows = [
        { id: idSorting('f'), at: at(5) },
        { id: idSorting('0'), at: at(5) },
        { id: randomUUID(), at: at(9) },
        { id: randomUUID(), at: at(1) },
      ];
      for (const row of rows) {
        await runner.query(
          `INSERT INTO "gateway"."outbox_messages" (id, kind, consumer, payload, created_at, available_at, state, attempts) ` +
            `VALUES ($1, 'webhook.test', 'c', '{}'::jsonb, $2, $2, 'dispatched', 0)`,
          [row.id, row.at],
        );
        await runner.query(
          `INSERT INTO "gateway"."webhook_deliveries" (id, message_id, consumer, kind, message_created_at, next_attempt_at, created_at) ` +
            `VALUES ($1, $2, 'c', 'webhook.test', $3, $3, $3)`,
          [randomUUID(), row.id, row.at],
        );
      }
      await migration.up(runner);

      const oldOrder = [rows[3], rows[1], rows[0], rows[2]].map((r) => r.id);
      const messages: Array<{ id: string; seq: string }> = await runner.query(
        `SELECT id, seq FROM "gateway"."outbox_messages" ORDER BY seq`,
      );
      expect(messages.map((m) => [m.id, m.seq])).toEqual(oldOrder.map((id, i) => [id, String(i + 1)]));
      const deliveries: Array<{ message_id: string; message_seq: string }> = await runner.query(
        `SELECT message_id, message_seq FROM "gateway"."webhook_deliveries" ORDER BY message_seq`,
      );
      expect(deliveries.map((d) => [d.message_id, d.message_seq])).toEqual(messages.map((m) => [m.id, m.seq]));
      // The next message written comes after them all.
      const [next]: Array<{ seq: string }> = await runner.query(
        `INSERT INTO "gateway"."outbox_messages" (id, kind, consumer, payload, created_at, available_at, state, attempts) ` +
          `VALUES ($1, 'webhook.test', 'c', '{}'::jsonb, $2, $2, 'dispatched', 0) RETURNING seq`,
        [randomUUID(), at(0)],
      );
      expect(next.seq).toBe('5');
    } finally {
      await runner.release();
    }
  });
});
