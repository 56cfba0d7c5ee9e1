import { randomBytes } from 'node:crypto';
import { Clock } from '../../../apps/gateway/src/clock';
import { UsageService } from '../../../apps/gateway/src/usage/usage.service';
import { UsageOutcome } from '../../../apps/gateway/src/usage-export/usage-aggregate';
import { UsageExportOutbox } from '../../../apps/gateway/src/usage-export/usage-export-outbox';
import { UsageExporter } from '../../../apps/gateway/src/usage-export/usage-exporter';
import {
  adminCall,
  createGatewayTestDatabase,
  GatewayTestDatabase,
  GatewayUnderTest,
  mintKey,
  startGateway,
} from '../../support/gateway';
import { call } from '../../support/http';
import { HttpReceiver } from '../../support/http-receiver';
import { RunningPets, startPetsService } from '../../support/pets-service';

const DAY_MS = 86_400_000;
const SOURCE = 'urn:petstore:gateway:test';
const TOKEN = 'ingest-token-1';
type Tally = Record<UsageOutcome, number>;
const zero = (): Tally => ({ ok: 0, client_error: 0, rate_limited: 0, server_error: 0 });
const outcomeOf = (status: number): UsageOutcome =>
  status === 429 ? 'rate_limited' : status >= 500 ? 'server_error' : status >= 400 ? 'client_error' : 'ok';

interface UsageEvent {
  specversion: string;
  id: string;
  source: string;
  type: string;
  subject: string;
  time: string;
  data: { operation: string; outcome: UsageOutcome; bucket: string; count: number; credits?: number };
}

/** The gateways' clock: the wall clock, moved forward by the test to settle the minutes it sent traffic in. */
class MovableClock extends Clock {
  offsetMs = 0;
  now(): number {
    return Date.now() + this.offsetMs;
  }
}

async function until(condition: () => Promise<boolean> | boolean, what: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * Issue #49 point 4, done when "the exported sums equal the usage history": two instances export the per-minute
 * usage through the outbox to an OpenMeter-like receiver on loopback (CloudEvents batches, deduplicated on id +
 * source), which is down for a while, then loses acknowledgements, then is back; one instance restarts between.
 * After deduplication, the values sum per consumer and UTC day to exactly the usage history's own (its admin
 * API) and to what the test saw answered, and each consumer's credits to what its balance lost. Runs on the
 * embedded engine and on PostgreSQL + Redis.
 */
describe('usage export delivery', () => {
  let pets: RunningPets;
  let database: GatewayTestDatabase;
  let receiver: HttpReceiver;
  let a: GatewayUnderTest;
  let b: GatewayUnderTest;
  const clock = new MovableClock();
  const keyPrefix = `${process.env.REDIS_KEY_PREFIX ?? 'test:'}export-${randomBytes(4).toString('hex')}:`;
  const seen = new Map<string, Tally>();
  /** What the receiver holds, deduplicated on (source, id); and every event it was sent, duplicates included. */
  const stored = new Map<string, UsageEvent>();
  let received = 0;
  let mode: 'down' | 'ack-lost' | 'up' = 'up';
  let ackLostLeft = 0;
  const alpha = `alpha-${randomBytes(3).toString('hex')}`;
  const beta = `beta-${randomBytes(3).toString('hex')}`;
  const gamma = `gamma-${randomBytes(3).toString('hex')}`;

  const start = () =>
    startGateway({
      petsUrl: pets.url,
      database,
      keyPrefix,
      clock,
      env: {
        // The test flushes itself; the minutes settle when the test moves the clock past them.
        USAGE_FLUSH_MS: '300000',
        USAGE_EVENTS_FORMAT: 'cloudevents',
        USAGE_EVENTS_URL: `http://127.0.0.1:${receiver.port}/api/v1/events`,
        USAGE_EVENTS_SOURCE: SOURCE,
        USAGE_EVENTS_TOKEN: TOKEN,
        USAGE_EVENTS_ALLOW_LIST: '127.0.0.1/32',
        USAGE_EVENTS_SETTLE_MS: '305000',
        USAGE_EVENTS_INTERVAL_MS: '100',
        USAGE_EVENTS_RETRY_MAX_MS: '400',
      },
    });

  async function send(gateway: GatewayUnderTest, consumer: string, key: string, path: string, init: RequestInit = {}) {
    const reply = await call(`${gateway.url}${path}`, {
      ...init,
      headers: { authorization: `Bearer ${key}`, ...(init.headers as Record<string, string>) },
    });
    const tally = seen.get(consumer) ?? zero();
    tally[outcomeOf(reply.status)] += 1;
    seen.set(consumer, tally);
    return reply.status;
  }

  /** Writes what both instances hold, then moves the clock past the settle time of every minute so far. */
  async function flushAndSettle(): Promise<void> {
    await a.app.get(UsageService).flush();
    await b.app.get(UsageService).flush();
    clock.offsetMs += 305_000 + 2 * 60_000;
  }

  const pending = async () => (await a.app.get(UsageExportOutbox).countByState()).pending ?? 0;

  beforeAll(async () => {
    receiver = await HttpReceiver.start();
    receiver.answer((request, response) => {
      if (mode === 'down') return void response.writeHead(503).end();
      const ok =
        request.url === '/api/v1/events' &&
        request.headers['content-type'] === 'application/cloudevents-batch+json' &&
        request.headers.authorization === `Bearer ${TOKEN}`;
      if (!ok) return void response.writeHead(400).end();
      for (const event of JSON.parse(request.body) as UsageEvent[]) {
        received += 1;
        stored.set(`${event.source} ${event.id}`, event);
      }
      // Taken in, but the answer is lost: the exporter must send it again, and the dedup keeps one.
      if (mode === 'ack-lost' && ackLostLeft > 0) {
        ackLostLeft -= 1;
        return void response.writeHead(500).end();
      }
      response.writeHead(204).end();
    });
    pets = await startPetsService();
    database = await createGatewayTestDatabase();
    a = await start();
    b = await start();
  }, 60_000);
  afterAll(async () => {
    await a?.close();
    await b?.close();
    await database?.drop();
    await pets?.close();
    await receiver?.close();
  });

  it('sums per consumer and day to the usage history exactly, across a restart and a receiver that was down', async () => {
    const alphaKey = await mintKey(a, 'enterprise', alpha, { perMinute: 6, perDay: 100_000 });
    const betaKey = await mintKey(a, 'business', beta);
    const gammaKey = await mintKey(a, 'enterprise', gamma, { perMinute: 1_000, perDay: 100_000 });
    expect((await adminCall(a, 'PATCH', `/consumers/${gamma}/billing`, { costs: { listPets: 3 } })).status).toBe(200);
    expect(
      (await adminCall(a, 'POST', `/consumers/${gamma}/credits/top-ups`, { amount: 20, reason: 'prepaid' })).status,
    ).toBe(201);
    // Their keys reach the other instance through the change channel.
    await new Promise((resolve) => setTimeout(resolve, 300));

    // The receiver is down: every attempt gets 503.
    mode = 'down';
    const json = { method: 'POST', headers: { 'content-type': 'application/json' } };
    // alpha past its minute (on either engine: each instance alone sees more than 6): 429s.
    for (let i = 0; i < 8; i += 1) {
      await send(a, alpha, alphaKey, '/v1/pets');
      await send(b, alpha, alphaKey, '/v1/pets');
    }
    expect(seen.get(alpha)!.rate_limited).toBeGreaterThan(0);
    for (let i = 0; i < 3; i += 1) await send(i % 2 ? a : b, beta, betaKey, '/v1/pets');
    expect(await send(a, beta, betaKey, '/v1/pets', { ...json, body: '{"name":""}' })).toBe(400);
    expect(await send(b, beta, betaKey, '/v1/pets/999999999')).toBe(404);
    for (let i = 0; i < 4; i += 1) await send(i % 2 ? a : b, gamma, gammaKey, '/v1/pets');
    await flushAndSettle();

    await until(
      async () => (await pending()) > 0 && receiver.requests.length >= 2,
      'attempts while the receiver is down',
    );
    expect(stored.size).toBe(0);

    // An instance restarts (its lease given up on the way down); more traffic, in later minutes.
    await a.close();
    a = await start();
    for (let i = 0; i < 3; i += 1) await send(i % 2 ? a : b, beta, betaKey, '/v1/pets');
    // gamma's balance runs out (20 credits at 3 a request): 402s, which spend nothing.
    for (let i = 0; i < 6; i += 1) await send(i % 2 ? a : b, gamma, gammaKey, '/v1/pets');
    await send(a, alpha, alphaKey, '/v1/pets/999999999');
    await flushAndSettle();

    // Back, but the first two acknowledgements are lost; then everything is acknowledged.
    ackLostLeft = 2;
    mode = 'ack-lost';
    await until(async () => ackLostLeft === 0, 'two lost acknowledgements');
    mode = 'up';
    // Every answer exported (after deduplication), and nothing left in the outbox.
    const answers = () =>
      [...seen.values()].reduce((sum, t) => sum + t.ok + t.client_error + t.rate_limited + t.server_error, 0);
    const exported = () => [...stored.values()].reduce((sum, event) => sum + event.data.count, 0);
    await until(async () => exported() >= answers() && (await pending()) === 0, 'every answer exported');
    await a.app.get(UsageExporter).tick();
    expect(exported()).toBe(answers());
    expect(received).toBeGreaterThan(stored.size); // sent at least once: some twice
    expect(await a.app.get(UsageExportOutbox).countByState()).toEqual({ acknowledged: expect.any(Number) });

    const events = [...stored.values()];
    expect(events.every((e) => e.specversion === '1.0' && e.source === SOURCE && e.data.bucket === 'minute')).toBe(
      true,
    );
    expect(new Set(events.map((e) => e.subject))).toEqual(new Set([alpha, beta, gamma]));
    expect(new Set(events.map((e) => e.data.operation))).toEqual(new Set(['listPets', 'getPet', 'createPet']));

    // Per consumer and UTC day, the deduplicated values equal the history's (its admin API) and what was seen.
    const sums = new Map<string, Tally>();
    const credits = new Map<string, number>();
    for (const event of events) {
      const start = Date.parse(event.time);
      const key = `${event.subject} ${new Date(start - (start % DAY_MS)).toISOString()}`;
      const tally = sums.get(key) ?? zero();
      tally[event.data.outcome] += event.data.count;
      sums.set(key, tally);
      credits.set(event.subject, (credits.get(event.subject) ?? 0) + (event.data.credits ?? 0));
    }
    for (const consumer of [alpha, beta, gamma]) {
      const reply = await adminCall(b, 'GET', `/consumers/${consumer}/usage/history?granularity=day`);
      expect(reply.status).toBe(200);
      const days = (
        reply.body as {
          buckets: Array<{
            start: string;
            requests: number;
            ok: number;
            clientErrors: number;
            rateLimited: number;
            serverErrors: number;
          }>;
        }
      ).buckets.filter((day) => day.requests > 0);
      const total = zero();
      for (const day of days) {
        const history: Tally = {
          ok: day.ok,
          client_error: day.clientErrors,
          rate_limited: day.rateLimited,
          server_error: day.serverErrors,
        };
        expect(sums.get(`${consumer} ${day.start}`)).toEqual(history);
        for (const outcome of Object.keys(total) as UsageOutcome[]) total[outcome] += history[outcome];
      }
      expect(total).toEqual(seen.get(consumer));
      expect([...sums.keys()].filter((key) => key.startsWith(`${consumer} `))).toHaveLength(days.length);
    }
    // Credits: 3 for each of gamma's admitted answers (its refused ones spent nothing); the others have none.
    expect(credits.get(gamma)).toBe(3 * seen.get(gamma)!.ok);
    expect(credits.get(gamma)).toBeGreaterThan(0);
    const gammaEvents = events.filter((e) => e.subject === gamma);
    expect(gammaEvents.filter((e) => e.data.outcome !== 'ok').every((e) => e.data.credits === 0)).toBe(true);
    expect(credits.get(alpha)).toBe(0);
    expect(credits.get(beta)).toBe(0);
  }, 120_000);
});
