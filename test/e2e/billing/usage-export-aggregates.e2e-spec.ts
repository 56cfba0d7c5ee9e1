import { randomBytes } from 'node:crypto';
import { GatewayUnderTest, mintKey, adminCall, startGateway } from '../../support/gateway';
import { call } from '../../support/http';
import { RunningPets, startPetsService } from '../../support/pets-service';
import { UsageService } from '../../../apps/gateway/src/usage/usage.service';
import {
  aggregateId,
  BUCKET_MS,
  UsageAggregate,
  UsageOutcome,
} from '../../../apps/gateway/src/usage-export/usage-aggregate';
import {
  AggregatesCursor,
  UsageAggregatesRepository,
} from '../../../apps/gateway/src/usage-export/usage-aggregates.repository';

const DAY_MS = 86_400_000;
type Tally = Record<UsageOutcome, number>;
const zero = (): Tally => ({ ok: 0, client_error: 0, rate_limited: 0, server_error: 0 });
const outcomeOf = (status: number): UsageOutcome =>
  status === 429 ? 'rate_limited' : status >= 500 ? 'server_error' : status >= 400 ? 'client_error' : 'ok';

/** Every aggregate of [from, to), read page after page of `rows` (hour, consumer) rows. */
async function readAll(
  repository: UsageAggregatesRepository,
  from: number,
  to: number,
  rows: number,
): Promise<UsageAggregate[]> {
  const all: UsageAggregate[] = [];
  let after: AggregatesCursor | undefined;
  do {
    const page = await repository.page(from, to, after, rows);
    all.push(...page.aggregates);
    after = page.next;
  } while (after);
  return all;
}

/** The aggregates' counts per consumer and UTC day, per outcome. */
function perConsumerAndDay(aggregates: UsageAggregate[]): Map<string, Tally> {
  const sums = new Map<string, Tally>();
  for (const aggregate of aggregates) {
    const key = `${aggregate.consumer} ${new Date(aggregate.start - (aggregate.start % DAY_MS)).toISOString()}`;
    const tally = sums.get(key) ?? zero();
    tally[aggregate.outcome] += aggregate.count;
    sums.set(key, tally);
  }
  return sums;
}

/**
 * Issue #49: the aggregates exported to a billing system sum, per consumer and UTC day, to exactly what the usage
 * history itself reports (its admin API), refused answers included, and re-reading them gives the same ids.
 * Runs on the embedded engine and on PostgreSQL.
 */
describe('usage export aggregates', () => {
  let pets: RunningPets;
  let gateway: GatewayUnderTest;
  const alpha = `alpha-${randomBytes(3).toString('hex')}`;
  const beta = `beta-${randomBytes(3).toString('hex')}`;
  const seen = new Map<string, Tally>();

  async function send(consumer: string, key: string | undefined, path: string, init: RequestInit = {}) {
    const reply = await call(`${gateway.url}${path}`, {
      ...init,
      headers: { ...(key ? { authorization: `Bearer ${key}` } : {}), ...(init.headers as Record<string, string>) },
    });
    const tally = seen.get(consumer) ?? zero();
    tally[outcomeOf(reply.status)] += 1;
    seen.set(consumer, tally);
    return reply.status;
  }

  beforeAll(async () => {
    pets = await startPetsService();
    // A flush interval longer than the test: the test flushes itself.
    gateway = await startGateway({
      petsUrl: pets.url,
      env: { USAGE_FLUSH_MS: '300000', ANON_RATE_LIMIT_PER_MINUTE: '3' },
    });
  }, 60_000);
  afterAll(async () => {
    await gateway?.close();
    await pets?.close();
  });

  it('sums per consumer and day to the usage history exactly, refused answers included, with stable ids', async () => {
    const alphaKey = await mintKey(gateway, 'enterprise', alpha, { perMinute: 6, perDay: 100_000 });
    const betaKey = await mintKey(gateway, 'business', beta);

    // Two operations (listPets, createPet; getPet's 404), bad requests, and alpha past its minute: 429s.
    for (let i = 0; i < 3; i += 1) await send(alpha, alphaKey, '/v1/pets');
    expect(await send(alpha, alphaKey, '/v1/pets/999999999')).toBe(404);
    expect(
      await send(alpha, alphaKey, '/v1/pets', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"name":""}',
      }),
    ).toBe(400);
    for (let i = 0; i < 4; i += 1) await send(alpha, alphaKey, '/v1/pets');
    for (let i = 0; i < 3; i += 1) await send(beta, betaKey, '/v1/pets');
    expect(await send(beta, betaKey, '/v1/pets?limit=abc')).toBe(400);
    // Answers without a key: in the history's anonymous row, billed to no one.
    for (let i = 0; i < 5; i += 1) await send('(anonymous)', undefined, '/v1/pets');
    expect(seen.get(alpha)!.rate_limited).toBeGreaterThan(0);
    expect(seen.get(alpha)!.client_error).toBe(2);
    expect(seen.get('(anonymous)')!.client_error).toBeGreaterThan(0);

    await gateway.app.get(UsageService).flush();

    // Read as the exporter will once the current hour has settled (its end plus USAGE_EVENTS_SETTLE_MS).
    const now = Date.now();
    const to = now - (now % BUCKET_MS.hour) + BUCKET_MS.hour;
    const from = now - (now % DAY_MS) - DAY_MS;
    const repository = gateway.app.get(UsageAggregatesRepository);
    const aggregates = await readAll(repository, from, to, 1000);

    expect(new Set(aggregates.map((a) => a.consumer))).toEqual(new Set([alpha, beta]));
    expect(aggregates.every((a) => a.count > 0 && a.bucket === 'hour' && a.start % BUCKET_MS.hour === 0)).toBe(true);
    const sums = perConsumerAndDay(aggregates);

    // The history's own totals per consumer and day (its admin API), and what the test saw answered.
    for (const consumer of [alpha, beta]) {
      const reply = await adminCall(gateway, 'GET', `/consumers/${consumer}/usage/history?granularity=day`);
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
      expect(days.length).toBeGreaterThanOrEqual(1);
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
      // No aggregate of a day the history does not have.
      expect([...sums.keys()].filter((key) => key.startsWith(`${consumer} `))).toHaveLength(days.length);
    }

    // Read again, a row per page: the same aggregates, the same ids.
    const again = await readAll(repository, from, to, 1);
    expect(again).toEqual(aggregates);
    expect(again.map(aggregateId)).toEqual(aggregates.map(aggregateId));
    expect(new Set(aggregates.map(aggregateId)).size).toBe(aggregates.length);
  }, 60_000);
});
