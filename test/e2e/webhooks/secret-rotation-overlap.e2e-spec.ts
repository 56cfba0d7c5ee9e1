import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { adminCall, FakeClock } from '../../support/gateway';
import { expectErrorBody } from '../../support/http';
import type { ReceivedRequest } from '../../support/http-receiver';
import { WebhookReceiver } from '../../support/webhook-receiver';
import { withStack } from '../../support/with-stack';

const unique = (prefix: string) => `${prefix}-${randomBytes(4).toString('hex')}`;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const HOUR = 3_600_000;

/**
 * Rotating a webhook endpoint's secret with an overlap (docs/webhooks.md, "Rotating a secret"): through the real
 * worker, each delivery of the overlap carries both signatures (a receiver verifying with either secret accepts it,
 * with `standardwebhooks`), after the overlap only the new one; 0 stops the old secret at once; a rotation during an
 * overlap ends it; a wrong overlap is a 400 that changes nothing; the audit says until when, never a secret.
 */
describe('webhook secret rotation with an overlap', () => {
  const clock = new FakeClock();
  const receiver = new WebhookReceiver(() => clock.now());
  const arrived: ReceivedRequest[] = [];
  receiver.onRequest = (_path, request) => arrived.push(request);
  beforeAll(() => receiver.start());
  afterAll(() => receiver.close());
  const stack = withStack({
    petsUrl: 'http://127.0.0.1:9',
    database: true,
    gateway: { env: { OUTBOUND_ALLOW_LIST: '127.0.0.1/32', WEBHOOK_POLL_MS: '50' }, clock },
  });
  const admin = (method: string, path: string, body?: unknown) => adminCall(stack.gateway, method, path, body);

  /** Sends a test event and answers the request that reached the receiver. */
  async function testDelivery(base: string): Promise<ReceivedRequest> {
    const before = arrived.length;
    expect((await admin('POST', `${base}/test`)).status).toBe(202);
    const deadline = Date.now() + 20_000;
    while (arrived.length === before) {
      if (Date.now() > deadline) throw new Error('no delivery reached the receiver');
      await sleep(25);
    }
    return arrived[arrived.length - 1];
  }

  /** Whether `secret` verifies `request`, judged at the gateway's clock (its timestamp tolerance). */
  function verifies(secret: string, request: ReceivedRequest): boolean {
    const realNow = Date.now;
    const now = clock.now();
    Date.now = () => now;
    try {
      new Webhook(secret).verify(request.body, request.headers as Record<string, string>);
      return true;
    } catch {
      return false;
    } finally {
      Date.now = realNow;
    }
  }
  const signatures = (request: ReceivedRequest) => String(request.headers['webhook-signature']).split(' ').length;

  async function endpoint(): Promise<{ name: string; base: string; secret: string }> {
    const name = unique('rotate');
    expect((await admin('POST', '/consumers', { name, plan: 'free' })).status).toBe(201);
    const path = `/${name}`;
    const created = await admin('POST', `/consumers/${name}/webhook-endpoints`, { url: receiver.url(path) });
    expect(created.status).toBe(201);
    const { id, secret } = created.body as { id: string; secret: string };
    return { name, base: `/consumers/${name}/webhook-endpoints/${id}`, secret };
  }

  async function rotate(
    base: string,
    body?: unknown,
  ): Promise<{ secret: string; previousSecretSignsUntil: string | null }> {
    const reply = await admin('POST', `${base}/rotate-secret`, body);
    expect(reply.status).toBe(200);
    return reply.body as { secret: string; previousSecretSignsUntil: string | null };
  }

  it('signs with both secrets for 24 hours by default, then with the new one only', async () => {
    const { base, secret: old } = await endpoint();
    const at = clock.now();
    const rotated = await rotate(base);
    expect(Date.parse(rotated.previousSecretSignsUntil!) - at).toBeGreaterThanOrEqual(24 * HOUR);
    expect(Date.parse(rotated.previousSecretSignsUntil!) - at).toBeLessThan(24 * HOUR + 60_000);
    expect((await admin('GET', base)).body).toMatchObject({
      previousSecretSignsUntil: rotated.previousSecretSignsUntil,
    });

    const during = await testDelivery(base);
    expect(signatures(during)).toBe(2);
    expect([verifies(old, during), verifies(rotated.secret, during)]).toEqual([true, true]);

    clock.advance(24 * HOUR + 1000);
    const after = await testDelivery(base);
    expect(signatures(after)).toBe(1);
    expect([verifies(old, after), verifies(rotated.secret, after)]).toEqual([false, true]);
  });

  it('stops the old secret at once with an overlap of 0 (a leaked secret)', async () => {
    const { base, secret: old } = await endpoint();
    const rotated = await rotate(base, { overlapSeconds: 0 });
    expect(rotated.previousSecretSignsUntil).toBeNull();
    const delivery = await testDelivery(base);
    expect(signatures(delivery)).toBe(1);
    expect([verifies(old, delivery), verifies(rotated.secret, delivery)]).toEqual([false, true]);
  });

  it('ends an overlap with the next rotation: only the secret it replaced signs beside the newest', async () => {
    const { base, secret: first } = await endpoint();
    const second = await rotate(base, { overlapSeconds: 3600 });
    const third = await rotate(base, { overlapSeconds: 3600 });
    const delivery = await testDelivery(base);
    expect([first, second.secret, third.secret].map((secret) => verifies(secret, delivery))).toEqual([
      false,
      true,
      true,
    ]);
  });

  it('takes two rotations sent at once one after the other: the later one keeps the earlier one signing', async () => {
    const { base, secret: original } = await endpoint();
    const [one, two] = await Promise.all([
      rotate(base, { overlapSeconds: 3600 }),
      rotate(base, { overlapSeconds: 3600 }),
    ]);
    // Whichever came second replaced the first's secret, not the original one: both new secrets sign, no other does.
    const delivery = await testDelivery(base);
    expect([original, one.secret, two.secret].map((secret) => verifies(secret, delivery))).toEqual([false, true, true]);
  });

  it('refuses a wrong overlap with a 400 naming the rule, and keeps the secret', async () => {
    const { name, base, secret } = await endpoint();
    const cases: Array<[unknown, string]> = [
      [{ overlapSeconds: -1 }, 'overlapSeconds must be at least 0'],
      [{ overlapSeconds: 604_801 }, 'overlapSeconds must be at most 604800'],
      [{ overlapSeconds: 1.5 }, 'overlapSeconds must be an integer'],
      [{ overlapSeconds: '3600' }, 'overlapSeconds must be an integer'],
    ];
    for (const [body, message] of cases) {
      const reply = await admin('POST', `${base}/rotate-secret`, body);
      expectErrorBody(reply, 400, 'VALIDATION_FAILED');
      expect([body, (reply.body as { message: string }).message]).toEqual([body, message]);
    }
    expect((await admin('GET', base)).body).toMatchObject({
      secret: `whsec_…${secret.slice(-4)}`,
      previousSecretSignsUntil: null,
    });
    const delivery = await testDelivery(base);
    expect(verifies(secret, delivery)).toBe(true);

    // The audit: until when the old one signs, never a secret.
    const rotated = await rotate(base, { overlapSeconds: 600 });
    const audit = await admin('GET', `/audit?target=${name}&action=webhook-endpoint.rotate-secret&limit=10`);
    expect(audit.text).toContain(rotated.previousSecretSignsUntil!);
    expect(audit.text).not.toContain(secret.slice(6));
    expect(audit.text).not.toContain(rotated.secret.slice(6));
  });
});
