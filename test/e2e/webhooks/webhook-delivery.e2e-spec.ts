import { randomBytes } from 'node:crypto';
import { getDataSourceToken } from '@nestjs/typeorm';
import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import type { DataSource } from 'typeorm';
import { GATEWAY_DATA_SOURCE } from '../../../apps/gateway/src/database/data-source.options';
import { RETRY_DELAYS_MS } from '../../../apps/gateway/src/webhooks/retry-schedule';
import { adminCall, FakeClock, GatewayUnderTest } from '../../support/gateway';
import { call } from '../../support/http';
import { startSmtpSink, SmtpSink } from '../../support/smtp-sink';
import { WebhookReceiver } from '../../support/webhook-receiver';
import { withStack } from '../../support/with-stack';

const unique = (prefix: string) => `${prefix}-${randomBytes(4).toString('hex')}`;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const MINUTE = 60_000;

/** Polls `probe` until it answers true, for at most `ms` (a loaded machine); fails naming `what`. */
async function until(what: string, probe: () => boolean | Promise<boolean>, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

interface Delivery {
  id: string;
  webhookId: string;
  state: string;
  attemptCount: number;
  nextAttemptAt: string | null;
  createdAt: string;
  attempts: Array<{ attempt: number; at: string; statusCode: number | null; error: string | null }>;
}

/** An OpenAPI 3.0 schema as JSON Schema: `nullable: true` becomes "or null". */
function jsonSchemaOf(schema: Record<string, unknown>): Record<string, unknown> {
  const properties = Object.fromEntries(
    Object.entries((schema.properties ?? {}) as Record<string, Record<string, unknown>>).map(([name, p]) => {
      const { nullable, ...rest } = p;
      if (!nullable) return [name, rest];
      const { enum: values, ...typed } = rest;
      return [name, { anyOf: [{ ...typed, ...(values ? { enum: values } : {}) }, { type: 'null' }] }];
    }),
  );
  return { ...schema, properties, additionalProperties: false };
}

/**
 * Webhook delivery (issue #49, points 2 and 5; docs/webhooks.md) through two instances that share the database
 * (and Redis with REDIS_URL) and one injected clock: the receiver verifies every signature with standardwebhooks
 * and deduplicates by webhook-id; events reach the consumer's endpoint, a fleet-wide endpoint and the consumer's
 * email; a receiver that was down gets everything in creation order; a slow endpoint holds up no other; an
 * endpoint failing past WEBHOOK_DISABLE_AFTER_MS is disabled and its owner told by mail.
 */
describe('webhook delivery through two instances', () => {
  const clock = new FakeClock();
  const receiver = new WebhookReceiver(() => clock.now());
  const env: Record<string, string> = {
    OUTBOUND_ALLOW_LIST: '127.0.0.1/32',
    WEBHOOK_POLL_MS: '50',
    WEBHOOK_TIMEOUT_MS: '5000',
    WEBHOOK_DISABLE_AFTER_MS: String(MINUTE),
    ALERT_FLUSH_MS: '100',
    ALERT_RECONCILE_MS: '3600000',
    BAN_GRACE_MS: '600000',
  };
  let sink: SmtpSink;
  beforeAll(async () => {
    sink = await startSmtpSink();
    env.SMTP_URL = sink.url;
    await receiver.start();
  });
  const stack = withStack({
    pets: {},
    database: true,
    sharedKeyPrefix: 'hooks',
    gateways: { a: { env, clock }, b: { env, clock } },
    timeoutMs: 120_000,
  });
  afterAll(async () => {
    await receiver.close();
    await sink?.close();
  });
  // A test that kills the receiver and fails before bringing it back must not fail the ones after it.
  afterEach(async () => {
    if (!receiver.alive) await receiver.start();
  });

  const admin = (method: string, path: string, body?: unknown) => adminCall(stack.a, method, path, body);
  const shared = Boolean(process.env.REDIS_URL);

  /** A consumer on a day limit of 10 (80 %: the 8th request, 100 %: the 10th), with a contact email. */
  async function consumer(): Promise<{ name: string; key: string; email: string }> {
    const name = unique('hooks');
    const email = `${name}@example.com`;
    const reply = await admin('POST', '/consumers', {
      name,
      plan: 'enterprise',
      limits: { perMinute: 1000, perDay: 10 },
      email,
    });
    expect(reply.status).toBe(201);
    return { name, key: (reply.body as { key: { key: string } }).key.key, email };
  }

  async function endpoint(base: string, path: string, body: Record<string, unknown> = {}): Promise<string> {
    const reply = await admin('POST', base, { url: receiver.url(path), ...body });
    expect(reply.status).toBe(201);
    const created = reply.body as { id: string; secret: string };
    receiver.expect(path, created.secret);
    return created.id;
  }

  const deliveriesOf = async (name: string, id: string): Promise<Delivery[]> =>
    ((await admin('GET', `/consumers/${name}/webhook-endpoints/${id}/deliveries`)).body as { items: Delivery[] }).items;

  const burst = (key: string, n: number, gateways: GatewayUnderTest[]) =>
    Promise.all(
      Array.from({ length: n }, (_, i) =>
        call(`${gateways[i % gateways.length].url}/v1/pets?limit=1`, { headers: { authorization: `Bearer ${key}` } }),
      ),
    );

  /** The consumer's outbox messages, in creation order: what each endpoint must get, in that order. */
  async function messagesOf(name: string): Promise<string[]> {
    const source = stack.a.app.get<DataSource>(getDataSourceToken(GATEWAY_DATA_SOURCE), { strict: false });
    const rows: Array<{ id: string }> = await source.query(
      `SELECT id FROM "${(source.options as { schema: string }).schema}"."outbox_messages" WHERE consumer = $1 AND kind <> 'webhook.endpoint_disabled' ORDER BY seq`,
      [name],
    );
    return rows.map((r) => `msg_${r.id}`);
  }

  it("a burst over 80 % and 100 % from both instances: one event each, to the consumer's endpoint, a fleet-wide one and its email, signed, one webhook-id per event", async () => {
    const c = await consumer();
    await endpoint(`/consumers/${c.name}/webhook-endpoints`, '/burst');
    const fleet = `/fleet-${randomBytes(3).toString('hex')}`;
    await endpoint('/webhook-endpoints', fleet);
    const replies = await burst(c.key, 14, shared ? [stack.a, stack.b] : [stack.a]);
    expect(replies.filter((r) => r.status === 200)).toHaveLength(10);
    await until(
      'both events at both endpoints',
      () => receiver.at('/burst').length >= 2 && receiver.at(fleet).length >= 2,
    );
    await until('both mails', () => sink.mails.filter((m) => m.to.includes(c.email)).length >= 2);
    // A little longer: a third event, or a repeat, would show now.
    await sleep(1000);
    const ids = receiver.at('/burst').map((m) => m.webhookId);
    expect(ids).toEqual(await messagesOf(c.name));
    expect(receiver.at(fleet).map((m) => m.webhookId)).toEqual(ids);
    expect(receiver.at('/burst').map((m) => [m.body.type, m.body.threshold])).toEqual([
      ['quota.threshold_crossed', 80],
      ['quota.threshold_crossed', 100],
    ]);
    const mails = sink.mails.filter((m) => m.to.includes(c.email)).map((m) => m.subject);
    expect(mails.sort()).toEqual([
      `${c.name}: 100 % of the day limit reached`,
      `${c.name}: 80 % of the day limit reached`,
    ]);
    expect(receiver.refused).toEqual([]);
    // What arrived is what the admin document's webhooks section (x-webhooks) says, schema and all.
    const doc = (await admin('GET', '/docs-json')).body as {
      'x-webhooks': Record<
        string,
        { post: { requestBody: { content: Record<string, { schema: { $ref: string } }> } } }
      >;
      components: { schemas: Record<string, Record<string, unknown>> };
    };
    expect(Object.keys(doc['x-webhooks'])).toEqual([
      'quota.threshold_crossed',
      'credits.low_balance',
      'credits.exhausted',
      'webhook.test',
    ]);
    const ref = doc['x-webhooks']['quota.threshold_crossed'].post.requestBody.content['application/json'].schema.$ref;
    const ajv = new Ajv({ strict: false, allErrors: true });
    addFormats(ajv);
    const validate = ajv.compile(jsonSchemaOf(doc.components.schemas[ref.split('/').pop()!]));
    for (const { body } of receiver.at('/burst'))
      expect([body, validate(body), validate.errors]).toEqual([body, true, null]);
  });

  it('a receiver down then back gets every message, in creation order, nothing twice after deduplication', async () => {
    const c = await consumer();
    const id = await endpoint(`/consumers/${c.name}/webhook-endpoints`, '/down');
    await receiver.kill();
    // Two threshold events and three test events, in this order of creation.
    await burst(c.key, 10, [stack.a]);
    await until('both events written', async () => (await messagesOf(c.name)).length === 2);
    for (let i = 0; i < 3; i += 1)
      expect((await admin('POST', `/consumers/${c.name}/webhook-endpoints/${id}/test`)).status).toBe(202);
    const expected = await messagesOf(c.name);
    expect(expected).toHaveLength(5);
    // The oldest fails (connection refused) and is retried on the schedule; the newer ones wait behind it.
    await until('the first attempt', async () => (await deliveriesOf(c.name, id)).some((d) => d.attemptCount === 1));
    clock.advance(RETRY_DELAYS_MS[0] * 1.1 + 100);
    await until('the second attempt', async () => (await deliveriesOf(c.name, id)).some((d) => d.attemptCount === 2));
    const waiting = await deliveriesOf(c.name, id);
    expect(waiting.filter((d) => d.attemptCount === 0)).toHaveLength(4);
    await receiver.start();
    clock.advance(RETRY_DELAYS_MS[1] * 1.1 + 100);
    await until('all five', () => receiver.at('/down').length === 5);
    expect(receiver.at('/down').map((m) => m.webhookId)).toEqual(expected);
    expect((await deliveriesOf(c.name, id)).map((d) => d.state)).toEqual(Array(5).fill('delivered'));
    expect(receiver.refused).toEqual([]);
  });

  it('a slow endpoint holds up no other endpoint', async () => {
    const c = await consumer();
    const slow = await endpoint(`/consumers/${c.name}/webhook-endpoints`, '/slow');
    const fast = await endpoint(`/consumers/${c.name}/webhook-endpoints`, '/fast');
    receiver.answer({ kind: 'slow', ms: 3000 }, '/slow');
    let slowAnswered = false;
    let fastArrivedWhileSlowPending: boolean | undefined;
    receiver.onRequest = (path) => {
      if (path === '/fast') fastArrivedWhileSlowPending ??= !slowAnswered;
    };
    expect((await admin('POST', `/consumers/${c.name}/webhook-endpoints/${slow}/test`)).status).toBe(202);
    await until('the slow endpoint reached', async () => (await deliveriesOf(c.name, slow)).length === 1);
    expect((await admin('POST', `/consumers/${c.name}/webhook-endpoints/${fast}/test`)).status).toBe(202);
    await until('the fast one delivered', () => receiver.at('/fast').length === 1);
    slowAnswered = receiver.at('/slow').length === 1;
    expect(fastArrivedWhileSlowPending).toBe(true);
    expect(slowAnswered).toBe(false);
    await until('the slow one delivered too', () => receiver.at('/slow').length === 1);
    receiver.onRequest = undefined;
  });

  it('an endpoint failing for WEBHOOK_DISABLE_AFTER_MS is disabled, listed as failing, and its owner told by mail', async () => {
    const c = await consumer();
    const id = await endpoint(`/consumers/${c.name}/webhook-endpoints`, '/broken');
    receiver.answer({ kind: 'fail', status: 503 }, '/broken');
    expect((await admin('POST', `/consumers/${c.name}/webhook-endpoints/${id}/test`)).status).toBe(202);
    await until('the first failure', async () => (await deliveriesOf(c.name, id))[0]?.attemptCount === 1);
    type Failing = { id: string; enabled: boolean; failingSince: string | null; lastAttemptAt: string | null };
    const failing = (await admin('GET', '/webhook-endpoints/failing')).body as { items: Failing[] };
    // Each row carries its newest attempt: the console reads no deliveries for it.
    const [first] = (await deliveriesOf(c.name, id))[0].attempts as Array<{ at: string }>;
    expect(failing.items.find((e) => e.id === id)).toMatchObject({
      failingSince: expect.any(String),
      lastError: 'HTTP 503',
      lastStatus: 503,
      lastAttemptAt: first.at,
    });
    clock.advance(RETRY_DELAYS_MS[0] * 1.1 + 100);
    await until('the second failure', async () => (await deliveriesOf(c.name, id))[0]?.attemptCount === 2);
    expect((await admin('GET', `/consumers/${c.name}/webhook-endpoints/${id}`)).body).toMatchObject({ enabled: true });
    // Past the span (a minute here): the third failure disables it.
    clock.advance(RETRY_DELAYS_MS[1] * 1.1 + 100);
    await until('the third failure', async () => (await deliveriesOf(c.name, id))[0]?.attemptCount === 3);
    const disabled = (await admin('GET', `/consumers/${c.name}/webhook-endpoints/${id}`)).body as Record<
      string,
      unknown
    >;
    expect(disabled).toMatchObject({
      enabled: false,
      disabledReason: expect.stringMatching(/^every delivery failed since /),
    });
    const mail = await sink.next(c.email, /Webhook endpoint disabled/);
    expect(mail.text).toContain(receiver.url('/broken'));
    const listed = (await admin('GET', '/webhook-endpoints/failing')).body as { items: Failing[] };
    const attempts = (await deliveriesOf(c.name, id))[0].attempts as Array<{ at: string }>;
    expect(listed.items.find((e) => e.id === id)).toMatchObject({
      enabled: false,
      lastStatus: 503,
      lastAttemptAt: attempts[2].at,
    });
    expect(attempts[2].at).not.toBe(first.at);
    // Disabled: a later attempt is not made, whatever the time.
    clock.advance(60 * MINUTE);
    await sleep(500);
    expect((await deliveriesOf(c.name, id))[0].attemptCount).toBe(3);
  });
});

/** The retry times follow the schedule (immediately, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h; ±10 %), then given up. */
describe('the retry schedule under the injected clock', () => {
  const clock = new FakeClock();
  const receiver = new WebhookReceiver(() => clock.now());
  beforeAll(() => receiver.start());
  const stack = withStack({
    petsUrl: 'http://127.0.0.1:9',
    gateway: {
      clock,
      // Never disabled within the schedule's 27 hours: the span is a week here.
      env: {
        OUTBOUND_ALLOW_LIST: '127.0.0.1/32',
        WEBHOOK_POLL_MS: '50',
        WEBHOOK_DISABLE_AFTER_MS: String(7 * 86_400_000),
      },
    },
  });
  afterAll(() => receiver.close());

  it('makes eight attempts at the scheduled times, then gives the delivery up', async () => {
    const admin = (method: string, path: string, body?: unknown) => adminCall(stack.gateway, method, path, body);
    const name = unique('sched');
    expect((await admin('POST', '/consumers', { name, plan: 'free' })).status).toBe(201);
    const created = (await admin('POST', `/consumers/${name}/webhook-endpoints`, { url: receiver.url('/x') })).body as {
      id: string;
      secret: string;
    };
    receiver.expect('/x', created.secret);
    receiver.answer({ kind: 'fail', status: 500 });
    const test = (await admin('POST', `/consumers/${name}/webhook-endpoints/${created.id}/test`)).body as Delivery;
    const read = async () =>
      (
        (await admin('GET', `/consumers/${name}/webhook-endpoints/${created.id}/deliveries`)).body as {
          items: Delivery[];
        }
      ).items[0];
    for (let n = 1; n <= 8; n += 1) {
      await until(`attempt ${n}`, async () => (await read()).attemptCount === n);
      const delivery = await read();
      if (n === 8) {
        expect(delivery).toMatchObject({ state: 'failed', nextAttemptAt: null });
        break;
      }
      const at = Date.parse(delivery.attempts[n - 1].at);
      const delay = Date.parse(delivery.nextAttemptAt!) - at;
      expect([n, delay >= RETRY_DELAYS_MS[n - 1] * 0.9 && delay <= RETRY_DELAYS_MS[n - 1] * 1.1]).toEqual([n, true]);
      clock.set(Date.parse(delivery.nextAttemptAt!));
    }
    const done = await read();
    expect(done.attempts.map((a) => a.attempt)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(done.attempts.every((a) => a.statusCode === 500 && a.error === 'HTTP 500')).toBe(true);
    // The first attempt is immediate: made at the clock's time of the test event, within a poll or so.
    expect(Date.parse(done.attempts[0].at) - Date.parse(test.createdAt)).toBeLessThan(RETRY_DELAYS_MS[0] * 0.9);
    // Every attempt carried the same webhook-id, and the receiver verified each signature.
    const ids = new Set(receiver.requestIds());
    expect([...ids]).toEqual([test.webhookId]);
    expect(receiver.refused).toEqual([]);
  });
});
