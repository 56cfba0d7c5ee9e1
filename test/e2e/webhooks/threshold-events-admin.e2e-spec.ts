import { randomBytes } from 'node:crypto';
import {
  ThresholdCandidate,
  ThresholdEventsRepository,
} from '../../../apps/gateway/src/alerts/threshold-events.repository';
import { adminCall } from '../../support/gateway';
import { expectErrorBody } from '../../support/http';
import { WebhookReceiver } from '../../support/webhook-receiver';
import { withStack } from '../../support/with-stack';

const unique = (prefix: string) => `${prefix}-${randomBytes(4).toString('hex')}`;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const DAY_MS = 86_400_000;

type Page = { items: Array<Record<string, unknown> & { id: string }>; next: string | null };

/**
 * GET /consumers/{name}/threshold-events (docs/alerts.md): a consumer's events newest first, keyset-paged, filtered
 * by policy and type, each item exactly the body its webhooks were sent (the outbox message's payload); and
 * POST /webhook-endpoints/{id}/test: a fleet-wide endpoint gets a signed `webhook.test` naming the fleet (`*`).
 */
describe('threshold events and the fleet-wide test event through the admin API', () => {
  const receiver = new WebhookReceiver();
  const stack = withStack({
    petsUrl: 'http://127.0.0.1:9',
    database: true,
    gateway: { env: { OUTBOUND_ALLOW_LIST: '127.0.0.1/32', WEBHOOK_POLL_MS: '50', ALERT_RECONCILE_MS: '3600000' } },
  });
  beforeAll(() => receiver.start());
  afterAll(() => receiver.close());
  const admin = (method: string, path: string, body?: unknown) => adminCall(stack.gateway, method, path, body);
  const repository = () => stack.gateway.app.get(ThresholdEventsRepository);

  /** A window's crossing, written as the request path writes it, at `writtenAt` (so the list's order is known). */
  const cross = async (consumer: string, policy: 'day' | 'month', threshold: number, writtenAt: number) => {
    const candidate: ThresholdCandidate = {
      consumer,
      policy,
      threshold,
      periodStartMs: writtenAt - 1000,
      periodEndMs: writtenAt - 1000 + (policy === 'day' ? DAY_MS : 30 * DAY_MS),
      limit: 1000,
      used: threshold * 10,
      balance: null,
      crossedAtMs: writtenAt,
      source: 'request',
    };
    const written = await repository().record(candidate, writtenAt);
    if (typeof written === 'string') throw new Error(`not written: ${written}`);
    return written;
  };

  it("lists a consumer's events newest first, in pages, by policy and type, each the body its webhooks were sent", async () => {
    const name = unique('ev');
    expect((await admin('POST', '/consumers', { name, plan: 'free' })).status).toBe(201);
    const other = unique('ev');
    expect((await admin('POST', '/consumers', { name: other, plan: 'free' })).status).toBe(201);
    const base = Date.now();
    const written = [
      await cross(name, 'day', 80, base),
      await cross(name, 'month', 80, base + 1000),
      await cross(name, 'day', 100, base + 2000),
      await cross(name, 'month', 100, base + 3000),
    ];
    const elsewhere = await cross(other, 'day', 80, base + 4000);
    // A credit level: a top-up arms it, a fall through it is a credits.low_balance event.
    expect((await admin('POST', `/consumers/${name}/credits/top-ups`, { amount: 500, reason: 'x' })).status).toBe(201);
    const low = await repository().record(
      {
        consumer: name,
        policy: 'credits',
        threshold: 100,
        periodStartMs: 0,
        periodEndMs: 0,
        limit: null,
        used: null,
        balance: 90,
        crossedAtMs: Date.now() + 1000,
        source: 'request',
      },
      base + 5000,
    );
    if (typeof low === 'string') throw new Error(`not written: ${low}`);
    const newestFirst = [low, ...written.reverse()];

    const all = (await admin('GET', `/consumers/${name}/threshold-events`)).body as Page;
    expect(all).toEqual({ items: newestFirst, next: null });
    // One source of truth: each item is its outbox message's payload, byte for byte the webhook body.
    const outbox = await repository().outboxOf(name);
    expect(all.items.map((e) => outbox.find((m) => m.payload.id === e.id)?.payload)).toEqual(all.items);

    const first = (await admin('GET', `/consumers/${name}/threshold-events?limit=2`)).body as Page;
    expect(first).toEqual({ items: newestFirst.slice(0, 2), next: newestFirst[1].id });
    const second = (await admin('GET', `/consumers/${name}/threshold-events?limit=2&after=${first.next}`)).body as Page;
    expect(second).toEqual({ items: newestFirst.slice(2, 4), next: newestFirst[3].id });
    const last = (await admin('GET', `/consumers/${name}/threshold-events?limit=2&after=${second.next}`)).body as Page;
    expect(last).toEqual({ items: newestFirst.slice(4), next: null });

    const months = (await admin('GET', `/consumers/${name}/threshold-events?policy=month`)).body as Page;
    expect(months.items.map((e) => [e.policy, e.threshold])).toEqual([
      ['month', 100],
      ['month', 80],
    ]);
    const lows = (await admin('GET', `/consumers/${name}/threshold-events?type=credits.low_balance`)).body as Page;
    expect(lows).toEqual({ items: [low], next: null });
    const none = (await admin('GET', `/consumers/${name}/threshold-events?policy=day&type=credits.exhausted`))
      .body as Page;
    expect(none).toEqual({ items: [], next: null });

    // Another consumer's event is no page of this one's; bad filters are a 400 naming the rule.
    const foreign = await admin('GET', `/consumers/${name}/threshold-events?after=${elsewhere.id}`);
    expectErrorBody(foreign, 400, 'VALIDATION_FAILED');
    expect((foreign.body as { message: string }).message).toBe('after must be the next of a previous page');
    expect(((await admin('GET', `/consumers/${other}/threshold-events`)).body as Page).items).toEqual([elsewhere]);
    const badPolicy = await admin('GET', `/consumers/${name}/threshold-events?policy=week`);
    expectErrorBody(badPolicy, 400, 'VALIDATION_FAILED');
    expect((badPolicy.body as { message: string }).message).toBe('policy must be one of day, month, credits');
    expectErrorBody(await admin('GET', '/consumers/nobody-here/threshold-events'), 404, 'NOT_FOUND');
  });

  it('lists events written in the same millisecond in the order they were written, across pages', async () => {
    const name = unique('ms');
    expect((await admin('POST', '/consumers', { name, plan: 'free' })).status).toBe(201);
    // One flush crossing 80 % and 100 % of the day and of the month: four events, one writing time.
    const at = Date.now();
    const written = [
      await cross(name, 'day', 80, at),
      await cross(name, 'day', 100, at),
      await cross(name, 'month', 80, at),
      await cross(name, 'month', 100, at),
    ];
    const newestFirst = [...written].reverse().map((event) => event.id);
    const all = (await admin('GET', `/consumers/${name}/threshold-events`)).body as Page;
    expect(all.items.map((event) => event.id)).toEqual(newestFirst);
    const seen: string[] = [];
    let after: string | null = null;
    do {
      const page: Page = (
        await admin('GET', `/consumers/${name}/threshold-events?limit=1${after ? `&after=${after}` : ''}`)
      ).body as Page;
      seen.push(...page.items.map((event) => event.id));
      after = page.next;
    } while (after !== null);
    expect(seen).toEqual(newestFirst);
  });

  it('sends a fleet-wide endpoint a signed test event naming the fleet, to it alone, and audits it', async () => {
    const created = await admin('POST', '/webhook-endpoints', {
      url: receiver.url('/fleet'),
      eventTypes: ['credits.exhausted'],
    });
    expect(created.status).toBe(201);
    const { id, secret } = created.body as { id: string; secret: string };
    receiver.expect('/fleet', secret);
    const sent = await admin('POST', `/webhook-endpoints/${id}/test`);
    expect(sent.status).toBe(202);
    const delivery = sent.body as { id: string; webhookId: string; consumer: string; eventType: string; state: string };
    expect(delivery).toMatchObject({ endpointId: id, consumer: '*', eventType: 'webhook.test', state: 'pending' });
    const deadline = Date.now() + 20_000;
    while (receiver.at('/fleet').length === 0 && Date.now() < deadline) await sleep(50);
    expect(receiver.at('/fleet')).toEqual([
      {
        path: '/fleet',
        webhookId: delivery.webhookId,
        body: {
          id: expect.any(String),
          type: 'webhook.test',
          consumer: '*',
          endpoint: id,
          createdAt: expect.any(String),
        },
      },
    ]);
    expect(receiver.refused).toEqual([]);
    const audit = (await admin('GET', '/audit?action=webhook-endpoint.test&order=desc&limit=1')).body as {
      items: Array<{ targetConsumer: string | null; changes: Record<string, { after: unknown }> }>;
    };
    expect(audit.items[0]).toMatchObject({ targetConsumer: null, changes: { endpointId: { after: id } } });
    // A consumer's endpoint id is no fleet-wide endpoint.
    const name = unique('ev');
    expect((await admin('POST', '/consumers', { name, plan: 'free' })).status).toBe(201);
    const own = (await admin('POST', `/consumers/${name}/webhook-endpoints`, { url: receiver.url('/own') })).body as {
      id: string;
    };
    expectErrorBody(await admin('POST', `/webhook-endpoints/${own.id}/test`), 404, 'NOT_FOUND');
  });
});
