import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import { Client } from 'pg';
import type { Histogram } from 'prom-client';
import { AppMetrics } from '@app/platform';
import { generateApiKey, hashApiKey, keyHint } from '../../../apps/gateway/src/consumers/api-key';
import { GatewayUnderTest, startGateway } from '../../support/gateway';
import { withStack } from '../../support/with-stack';

const FLEET = 10_000;
const CONNECTIONS = 64;
/** Far below the burst's rate at any machine speed: counted per key, it would refuse most of the fleet. */
const QUERIES_PER_SECOND = 50;
const FALSE_POSITIVE_RATE = 0.01;

/** Key hashes the gateway looked up, by outcome (found, not_found, error), and the queries that carried them. */
async function lookups(gateway: GatewayUnderTest): Promise<{ hashes: Record<string, number>; queries: number }> {
  const registry = gateway.app.get(AppMetrics).registry;
  const hashes: Record<string, number> = {};
  for (const { labels, value } of (await registry.getSingleMetric('gateway_key_store_queries_total')!.get()).values)
    hashes[String(labels.outcome)] = value;
  const batches = registry.getSingleMetric('gateway_key_store_batch_size') as Histogram;
  const total = (await batches.get()).values.find((v) => v.metricName === 'gateway_key_store_batch_size_count');
  return { hashes, queries: total!.value };
}

/** `keys` sent once each, `connections` requests at a time; the statuses in the keys' order. */
async function burst(url: string, keys: string[], connections: number, address: (i: number) => string) {
  const statuses = new Array<number>(keys.length);
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < keys.length; i = next++) {
      const reply = await fetch(`${url}/v1/pets?limit=1`, {
        headers: { authorization: `Bearer ${keys[i]}`, 'x-forwarded-for': address(i) },
      });
      await reply.arrayBuffer();
      statuses[i] = reply.status;
    }
  };
  await Promise.all(Array.from({ length: connections }, worker));
  return statuses;
}

const count = (statuses: number[]) =>
  statuses.reduce<Record<number, number>>((counts, s) => ({ ...counts, [s]: (counts[s] ?? 0) + 1 }), {});

/**
 * A gateway that restarts in front of a fleet of 10,000 consumers starts with an empty key cache, and every
 * consumer's next request carries a key it has never seen. Those are looked up in batches (up to
 * KEY_LOOKUP_BATCH_SIZE hashes a query, KEY_LOOKUPS_PER_SECOND queries a second), so none is answered 503 even
 * with a budget far below the burst's rate; random keys sent alongside still cost no query but the key filter's
 * false positives and the few hashes not in the filter looked up a second. Runs on the engine the run selects.
 */
describe('a restarted gateway in front of 10,000 consumers', () => {
  const stack = withStack({ database: true });
  // The pets service's answer, from a stub: the burst measures the gateway, not the pets service's database.
  const upstream = createServer((_request, response) =>
    response.writeHead(200, { 'content-type': 'application/json', 'content-length': 2 }).end('[]'),
  );
  beforeAll(() => new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve)));
  afterAll(() => new Promise<void>((resolve) => upstream.close(() => resolve())));
  const upstreamUrl = () => `http://127.0.0.1:${(upstream.address() as { port: number }).port}`;

  it('answers every known key of a burst at once, without 503, in few queries; random keys alongside cost none', async () => {
    const keys = Array.from({ length: FLEET }, () => generateApiKey());
    const sql = new Client({ connectionString: stack.database.url });
    await sql.connect();
    try {
      // In bulk, as an import would leave them: the consumers, then one key each (its SHA-256 in hex).
      const ids = keys.map(() => randomUUID());
      await sql.query(
        `INSERT INTO "gateway"."consumers" (id, name, plan) SELECT id, 'fleet-' || n, 'pro' FROM unnest($1::uuid[]) WITH ORDINALITY AS t(id, n)`,
        [ids],
      );
      await sql.query(
        `INSERT INTO "gateway"."api_keys" (id, consumer_id, key_hash, hint) SELECT gen_random_uuid(), id, hash, hint FROM unnest($1::uuid[], $2::text[], $3::text[]) AS t(id, hash, hint)`,
        [ids, keys.map(hashApiKey), keys.map(keyHint)],
      );
    } finally {
      await sql.end();
    }

    // Started after the seeding, as a restart is: its key filter holds the fleet's keys, its cache none.
    const gateway = await startGateway({
      petsUrl: upstreamUrl(),
      database: stack.database,
      env: { TRUST_PROXY: 'loopback', KEY_LOOKUPS_PER_SECOND: String(QUERIES_PER_SECOND) },
    });
    try {
      const started = Date.now();
      let stop = false;
      const random: string[] = [];
      // Random keys from 200 addresses meanwhile, until the fleet's burst is over.
      const flood = (async () => {
        const statuses: number[] = [];
        while (!stop) {
          const batch = Array.from({ length: 4 }, () => generateApiKey());
          random.push(...batch);
          statuses.push(...(await burst(gateway.url, batch, 4, (i) => `198.51.100.${(random.length + i) % 200}`)));
        }
        return statuses;
      })();
      // Each consumer from an address of its own (a refused key counts against its address, as anonymous traffic).
      const fleet = await burst(gateway.url, keys, CONNECTIONS, (i) => `10.${i >> 16}.${(i >> 8) & 255}.${i & 255}`);
      stop = true;
      const floodStatuses = await flood;
      const seconds = (Date.now() - started) / 1000;

      expect(count(fleet)).toEqual({ 200: FLEET });
      expect(floodStatuses.every((status) => status === 401 || status === 429)).toBe(true);
      const { hashes, queries } = await lookups(gateway);
      // Each known key looked up once; of the random keys, only the filter's false positives and the one hash a
      // second not in the filter (1 % of the budget, at least 1).
      expect(hashes.found).toBe(FLEET);
      expect(hashes.not_found ?? 0).toBeLessThanOrEqual(
        Math.ceil(random.length * FALSE_POSITIVE_RATE) + Math.ceil(seconds) + 1,
      );
      // Within the budget, which counts queries: 10,000 keys in at most 50 queries a second.
      expect(queries).toBeLessThanOrEqual(QUERIES_PER_SECOND * (Math.ceil(seconds) + 1));
    } finally {
      await gateway.close();
    }
  }, 120_000); // ~20 s alone; 60-75 s in CI beside the compose build and two other workers
});
