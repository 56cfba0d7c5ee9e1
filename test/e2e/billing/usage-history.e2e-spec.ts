import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import {
  adminCall,
  createGatewayTestDatabase,
  GatewayTestDatabase,
  GatewayUnderTest,
  mintKey,
  startGateway,
} from '../../support/gateway';
import { call, expectErrorBody, Reply } from '../../support/http';
import { RunningPets, startPetsService } from '../../support/pets-service';
import { hasRedisServer, OwnRedisServer } from '../../support/redis-server';
import { emptyCounts } from '../../../apps/gateway/src/usage/usage-counts';
import { UsageRepository } from '../../../apps/gateway/src/usage/usage.repository';
import { UsageService } from '../../../apps/gateway/src/usage/usage.service';

type Tally = { requests: number; ok: number; clientErrors: number; rateLimited: number; serverErrors: number };
const FIELDS: Array<keyof Tally> = ['requests', 'ok', 'clientErrors', 'rateLimited', 'serverErrors'];
const ANONYMOUS = '(anonymous)';

const zero = (): Tally => ({ requests: 0, ok: 0, clientErrors: 0, rateLimited: 0, serverErrors: 0 });

/** What the test saw answered, per consumer (the anonymous row for answers without a valid key). */
class Seen {
  readonly by = new Map<string, Tally>();
  count(consumer: string, status: number): void {
    const t = this.by.get(consumer) ?? zero();
    t.requests += 1;
    if (status === 429) t.rateLimited += 1;
    else if (status >= 500) t.serverErrors += 1;
    else if (status >= 400) t.clientErrors += 1;
    else t.ok += 1;
    this.by.set(consumer, t);
  }
  of(consumer: string): Tally {
    return this.by.get(consumer) ?? zero();
  }
  total(): Tally {
    const all = zero();
    for (const t of this.by.values()) for (const f of FIELDS) all[f] += t[f];
    return all;
  }
}

function sumBuckets(reply: Reply): Tally {
  expect(reply.status).toBe(200);
  const sum = zero();
  for (const bucket of (reply.body as { buckets: Tally[] }).buckets) for (const f of FIELDS) sum[f] += bucket[f];
  return sum;
}

/** RFC 4180 as the export writes it (no quoting needed: names have no commas), per consumer. */
function sumCsv(text: string): Map<string, Tally> {
  const [header, ...lines] = text.trimEnd().split('\r\n');
  expect(header).toBe('consumer,start,requests,ok,client_errors,server_errors,rate_limited');
  const by = new Map<string, Tally>();
  for (const line of lines) {
    const [consumer, start, requests, ok, clientErrors, serverErrors, rateLimited] = line.split(',');
    expect(new Date(start).toISOString()).toBe(start);
    const t = by.get(consumer) ?? zero();
    t.requests += Number(requests);
    t.ok += Number(ok);
    t.clientErrors += Number(clientErrors);
    t.serverErrors += Number(serverErrors);
    t.rateLimited += Number(rateLimited);
    by.set(consumer, t);
  }
  return by;
}

const withKey = (key: string) => ({ headers: { authorization: `Bearer ${key}` } });

/**
 * Issue #23: every /v1 answer of two instances, counted per consumer in the gateway's database, exact, kept
 * across a Redis restart and a restart of both instances. Runs on the embedded engine and on PostgreSQL/Redis.
 */
describe('usage history', () => {
  let pets: RunningPets;
  let database: GatewayTestDatabase;
  let redis: OwnRedisServer | undefined;
  let keyPrefix: string;
  let a: GatewayUnderTest;
  let b: GatewayUnderTest;
  const seen = new Seen();
  let petsStopped = false;
  const alpha = `alpha-${randomBytes(3).toString('hex')}`;
  const beta = `beta-${randomBytes(3).toString('hex')}`;

  /** Both instances share the database and (with a redis-server) a Redis of the test's own. */
  const env = (flushMs: string): Record<string, string> => ({
    USAGE_FLUSH_MS: flushMs,
    BAN_THRESHOLD: '2',
    BAN_GRACE_MS: '0',
    ANON_RATE_LIMIT_PER_MINUTE: '3',
    ...(redis ? { REDIS_URL: redis.url } : {}),
  });
  const start = (flushMs: string) => startGateway({ petsUrl: pets.url, database, keyPrefix, env: env(flushMs) });

  async function send(gateway: GatewayUnderTest, consumer: string, path: string, key?: string): Promise<number> {
    const reply = await call(`${gateway.url}${path}`, key ? withKey(key) : {});
    seen.count(consumer, reply.status);
    return reply.status;
  }

  beforeAll(async () => {
    pets = await startPetsService();
    database = await createGatewayTestDatabase();
    // Redis restarts need a server of the test's own; on the embedded run the instances count in memory.
    redis = process.env.REDIS_URL && hasRedisServer ? await OwnRedisServer.start() : undefined;
    keyPrefix = `${process.env.REDIS_KEY_PREFIX ?? 'test:'}usage-${randomBytes(4).toString('hex')}:`;
    // A flush interval longer than the test: what reaches the database is written by the shutdown.
    a = await start('300000');
    b = await start('300000');
  }, 60_000);
  afterAll(async () => {
    await a?.close();
    await b?.close();
    await database?.drop();
    if (!petsStopped) await pets?.close();
    await redis?.stop();
  });

  it('counts a known mix through two instances exactly, written on shutdown, kept across a restart of both', async () => {
    const alphaKey = await mintKey(a, 'enterprise', alpha, { perMinute: 8, perDay: 100_000 });
    const second = await adminCall(a, 'POST', `/consumers/${alpha}/keys`);
    const alphaKey2 = (second.body as { key: string }).key;
    const betaKey = await mintKey(a, 'business', beta);
    // Their keys reach the other instance through the change channel.
    await new Promise((resolve) => setTimeout(resolve, 300));

    for (let i = 0; i < 3; i += 1) {
      await send(a, alpha, '/v1/pets', alphaKey);
      await send(b, alpha, '/v1/pets', alphaKey2);
    }
    expect(await send(b, alpha, '/v1/pets/999999999', alphaKey)).toBe(404);
    expect(await send(a, alpha, '/v1/pets?limit=abc', alphaKey)).toBe(400);
    for (let i = 0; i < 12; i += 1) await send(i % 2 ? a : b, alpha, '/v1/pets', alphaKey);
    for (let i = 0; i < 4; i += 1) await send(b, beta, '/v1/pets', betaKey);
    // Without a key, then guessing keys: 401s, the anonymous limit's 429s, and a ban.
    for (let i = 0; i < 10; i += 1) await send(a, ANONYMOUS, '/v1/pets');
    for (let i = 0; i < 5; i += 1)
      await send(b, ANONYMOUS, '/v1/pets', `petk_${randomBytes(24).toString('base64url')}`);
    // The pets service stops: 503.
    await pets.close();
    petsStopped = true;
    expect(await send(a, beta, '/v1/pets', betaKey)).toBe(503);
    expect(await send(b, beta, '/v1/pets', betaKey)).toBe(503);

    expect(seen.of(alpha).rateLimited).toBeGreaterThan(0);
    expect(seen.of(ANONYMOUS).rateLimited).toBeGreaterThan(0);
    expect(seen.of(ANONYMOUS).clientErrors).toBeGreaterThan(0);
    expect(seen.of(alpha).clientErrors).toBe(2);

    // Both instances stop (each writes its batch) and start again on the same database.
    await a.close();
    await b.close();
    a = await start('200');
    b = await start('200');

    expect(sumBuckets(await adminCall(a, 'GET', `/consumers/${alpha}/usage/history`))).toEqual(seen.of(alpha));
    expect(sumBuckets(await adminCall(b, 'GET', `/consumers/${beta}/usage/history?granularity=day`))).toEqual(
      seen.of(beta),
    );
    expect(sumBuckets(await adminCall(b, 'GET', '/usage/history'))).toEqual(seen.total());
    expect(sumBuckets(await adminCall(b, 'GET', '/usage/history?granularity=day'))).toEqual(seen.total());
  }, 60_000);

  it('lists every bucket of the range in time order, empty ones included, with latency percentiles', async () => {
    const reply = await adminCall(a, 'GET', `/consumers/${alpha}/usage/history`);
    const body = reply.body as {
      consumer: string;
      granularity: string;
      buckets: Array<{ start: string; requests: number; p50Ms: number | null; p95Ms: number | null }>;
    };
    expect(body.consumer).toBe(alpha);
    expect(body.granularity).toBe('hour');
    expect(body.buckets).toHaveLength(24);
    const starts = body.buckets.map((bucket) => Date.parse(bucket.start));
    for (let i = 1; i < starts.length; i += 1) expect(starts[i] - starts[i - 1]).toBe(3_600_000);
    expect(starts[23]).toBe(Date.now() - (Date.now() % 3_600_000));
    const busy = body.buckets.filter((bucket) => bucket.requests > 0);
    expect(busy.length).toBeGreaterThanOrEqual(1);
    for (const bucket of busy) expect(bucket.p95Ms).toBeGreaterThanOrEqual(bucket.p50Ms!);
    expect(body.buckets.filter((bucket) => bucket.requests === 0).every((bucket) => bucket.p50Ms === null)).toBe(true);
  });

  it('ranks the consumers (the anonymous row left out) and exports a CSV that sums to the JSON', async () => {
    const top = await adminCall(a, 'GET', '/usage/top?by=requests&limit=100');
    expect(top.status).toBe(200);
    const ranked = (top.body as { consumers: Array<Tally & { consumer: string }> }).consumers;
    expect(ranked.map((r) => r.consumer)).toEqual([alpha, beta]);
    expect(ranked[0]).toMatchObject(seen.of(alpha));
    const limited = await adminCall(a, 'GET', '/usage/top?by=rateLimited&limit=1');
    expect((limited.body as { consumers: Array<{ consumer: string }> }).consumers.map((r) => r.consumer)).toEqual([
      alpha,
    ]);

    const csv = await adminCall(a, 'GET', '/usage/export');
    expect(csv.status).toBe(200);
    expect(csv.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    const rows = sumCsv(csv.text);
    expect(rows.get(alpha)).toEqual(
      sumBuckets(await adminCall(a, 'GET', `/consumers/${alpha}/usage/history?granularity=day`)),
    );
    expect(rows.get(beta)).toEqual(seen.of(beta));
    expect(rows.get(ANONYMOUS)).toEqual(seen.of(ANONYMOUS));
    const hourly = sumCsv((await adminCall(a, 'GET', '/usage/export?granularity=hour')).text);
    expect(hourly).toEqual(rows);
  });

  it('answers the CLI: usage NAME --history, usage --top, usage --export FILE', async () => {
    const keys = async (...args: string[]) =>
      (
        await promisify(execFile)(process.execPath, [join(__dirname, '../../../scripts/keys.js'), ...args], {
          env: { ...process.env, ADMIN_URL: a.adminUrl, ADMIN_TOKEN: a.adminToken },
        })
      ).stdout
        .trim()
        .split('\n');
    const a1 = seen.of(alpha);
    const history = await keys('usage', alpha, '--history', '--granularity', 'day');
    expect(history[0]).toBe(`${alpha}, by day (UTC)`);
    expect(history).toHaveLength(2 + 30 + 1);
    expect(history[history.length - 1]).toBe(
      ['total', a1.requests, a1.ok, a1.clientErrors, a1.rateLimited, a1.serverErrors].join('\t'),
    );
    const top = await keys('usage', '--top', '--by', 'requests', '--limit', '1');
    expect(top.slice(2).map((line) => line.split('\t').slice(0, 6))).toEqual([
      [alpha, a1.requests, a1.ok, a1.clientErrors, a1.rateLimited, a1.serverErrors].map(String),
    ]);
    const dir = mkdtempSync(join(tmpdir(), 'usage-export-'));
    try {
      const file = join(dir, 'usage.csv');
      const exported = await keys('usage', '--export', file);
      expect(exported[0]).toMatch(/^Exported \d+ line\(s\) of usage to /);
      const rows = sumCsv(readFileSync(file, 'utf8'));
      expect(rows.get(alpha)).toEqual(a1);
      expect(rows.get(ANONYMOUS)).toEqual(seen.of(ANONYMOUS));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('writes every USAGE_FLUSH_MS while running, and the history never depends on Redis', async () => {
    const before = sumBuckets(await adminCall(a, 'GET', `/consumers/${alpha}/usage/history`));
    // The pets service is gone: these are 503s, counted like any answer.
    const key = await mintKey(a, 'business', `gamma-${randomBytes(3).toString('hex')}`);
    for (let i = 0; i < 3; i += 1) await call(`${a.url}/v1/pets`, withKey(key));
    if (redis) {
      await redis.stop();
      await redis.start();
    }
    await new Promise((resolve) => setTimeout(resolve, 800));
    const fleet = sumBuckets(await adminCall(a, 'GET', '/usage/history'));
    expect(fleet.requests).toBe(seen.total().requests + 3);
    expect(sumBuckets(await adminCall(b, 'GET', `/consumers/${alpha}/usage/history`))).toEqual(before);
  });

  it('retention: deletes hourly and daily rows older than USAGE_RETENTION_DAYS (400), keeps the others', async () => {
    const repository = a.app.get(UsageRepository);
    const day = 86_400_000;
    const today = Date.now() - (Date.now() % day);
    const old = { ...emptyCounts(), requests: 5, ok: 5 };
    await repository.write([
      { hour: today - 401 * day, consumer: 'retired', keyId: 'k-old', ...old },
      { hour: today - 399 * day, consumer: 'retired', keyId: 'k-old', ...old },
    ]);
    const fleet = sumBuckets(await adminCall(a, 'GET', '/usage/history'));
    const retired = () => repository.history('retired', 'day', new Date(today - 500 * day), new Date(today));
    expect((await retired()).map((p) => p.requests)).toEqual([5, 5]);
    // Each of its hourly and daily rows, and the fleet's row of that hour and day.
    expect(await a.app.get(UsageService).prune()).toBe(4);
    expect((await retired()).map((p) => (today - p.start) / day)).toEqual([399]);
    expect(sumBuckets(await adminCall(a, 'GET', '/usage/history'))).toEqual(fleet);
  });

  describe('the range', () => {
    const hourAgo = new Date(Date.now() - (Date.now() % 3_600_000) - 3_600_000).toISOString();
    const cases: Array<[string, string]> = [
      [
        '?from=2026-11-01T00:30:00Z',
        'from must be at the start of an hour (such as 2026-11-01T13:00:00Z) with granularity=hour',
      ],
      [
        '?granularity=day&from=2026-11-01T01:00:00Z',
        'from must be at the start of a UTC day (such as 2026-11-01T00:00:00Z) with granularity=day',
      ],
      ['?from=2026-11-02T00:00:00Z&to=2026-11-01T00:00:00Z', 'from must be before to'],
      ['?from=2026-11-01T00:00:00Z&to=2026-11-01T00:00:00Z', 'from must be before to'],
      [
        '?from=2026-10-01T00:00:00Z&to=2026-11-01T01:00:00Z',
        'A call covers at most 31 days of hours (744 buckets): narrow from and to, or use granularity=day',
      ],
      [
        '?granularity=day&from=2025-01-01&to=2026-02-06',
        'A call covers at most 400 days of days (400 buckets): narrow from and to, or use granularity=day',
      ],
      ['?from=yesterday', 'from must be an ISO 8601 date-time with Z or an offset (2026-11-01T00:00:00Z), or a date'],
      [
        '?to=2026-11-01T00:00:00',
        'to must be an ISO 8601 date-time with Z or an offset (2026-11-01T00:00:00Z), or a date',
      ],
      ['?from=2026-02-30', 'from is not a real date'],
      ['?granularity=week', 'granularity must be one of hour, day'],
    ];
    it.each(cases)('refuses %s with a 400 naming the rule', async (query, message) => {
      const reply = await adminCall(a, 'GET', `/consumers/${alpha}/usage/history${query}`);
      expectErrorBody(reply, 400, 'VALIDATION_FAILED');
      expect((reply.body as { message: string }).message).toBe(message);
    });

    it('takes 31 days of hours, 400 days of days, an offset, and to alone', async () => {
      const ok = [
        '?from=2026-10-01T00:00:00Z&to=2026-11-01T00:00:00Z',
        '?granularity=day&from=2025-01-01&to=2026-02-05',
        `?to=${encodeURIComponent(hourAgo)}`,
        '?from=2026-11-01T02:00:00%2B02:00&to=2026-11-01T03:00:00Z',
      ];
      const lengths = [744, 400, 24, 3];
      for (const [i, query] of ok.entries()) {
        const reply = await adminCall(a, 'GET', `/consumers/${alpha}/usage/history${query}`);
        expect(reply.status).toBe(200);
        expect((reply.body as { buckets: unknown[] }).buckets).toHaveLength(lengths[i]);
      }
    });

    it('answers 404 for an unknown consumer, 400 for a bad top query', async () => {
      expectErrorBody(await adminCall(a, 'GET', '/consumers/nobody-here/usage/history'), 404, 'NOT_FOUND');
      expectErrorBody(await adminCall(a, 'GET', '/usage/top?limit=101'), 400, 'VALIDATION_FAILED');
      expectErrorBody(await adminCall(a, 'GET', '/usage/top?by=ok'), 400, 'VALIDATION_FAILED');
      expectErrorBody(await adminCall(a, 'GET', '/usage/export?from=2026-11-01T10:00:00Z'), 400, 'VALIDATION_FAILED');
    });

    it('shows a restricted token its own consumers only, and never the fleet', async () => {
      const created = await adminCall(a, 'POST', '/tokens', {
        name: 'portal-usage',
        scopes: ['usage:read', 'consumers:write'],
        ownConsumersOnly: true,
      });
      const token = (created.body as { token: string }).token;
      const own = `own-${randomBytes(3).toString('hex')}`;
      expect((await adminCall(a, 'POST', '/consumers', { name: own, plan: 'free' }, token)).status).toBe(201);
      expect((await adminCall(a, 'GET', `/consumers/${own}/usage/history`, undefined, token)).status).toBe(200);
      expectErrorBody(
        await adminCall(a, 'GET', `/consumers/${alpha}/usage/history`, undefined, token),
        403,
        'FORBIDDEN',
      );
      for (const path of ['/usage/history', '/usage/top', '/usage/export'])
        expectErrorBody(await adminCall(a, 'GET', path, undefined, token), 403, 'FORBIDDEN');
    });
  });
});
