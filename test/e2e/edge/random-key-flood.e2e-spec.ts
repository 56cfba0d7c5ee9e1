import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { AppMetrics } from '@app/platform';
import { generateApiKey, hashApiKey } from '../../../apps/gateway/src/consumers/api-key';
import { KeyCache } from '../../../apps/gateway/src/keys/key-cache';
import { KeyLookupRepository } from '../../../apps/gateway/src/keys/key-lookup.repository';
import {
  createGatewayTestDatabase,
  FakeClock,
  GatewayTestDatabase,
  GatewayUnderTest,
  mintKey,
  startGateway,
} from '../../support/gateway';
import { call, expectErrorBody } from '../../support/http';
import { RunningPets, startPetsService } from '../../support/pets-service';

const ADDRESSES = 200;
const FALSE_POSITIVE_RATE = 0.01;

const withKey = (key: string, address?: string) => ({
  headers: { authorization: `Bearer ${key}`, ...(address ? { 'x-forwarded-for': address } : {}) },
});

async function metricSum(gateway: GatewayUnderTest, name: string): Promise<number> {
  const metric = await gateway.app.get(AppMetrics).registry.getSingleMetric(name)!.get();
  return metric.values.reduce((sum, v) => sum + v.value, 0);
}

/** Queries of the consumers database on a key-cache miss (the KeyCache's metric). */
const storeQueries = (gateway: GatewayUnderTest) => metricSum(gateway, 'gateway_key_store_queries_total');

/** Hashes in the instance's key filter: one more once it has heard a new key's change. */
const filterKeys = (gateway: GatewayUnderTest) => metricSum(gateway, 'gateway_key_filter_keys');

/**
 * Random well-formed keys against `gateways`, `workers` requests at a time, each from one of 200 forwarded
 * addresses (TRUST_PROXY=loopback: the test's socket is the trusted proxy), until stopped.
 */
function flood(gateways: GatewayUnderTest[], workers = 40) {
  let stopped = false;
  let sent = 0;
  const statuses = new Map<number, number>();
  const worker = async (w: number) => {
    while (!stopped) {
      const i = sent++;
      const reply = await fetch(
        `${gateways[w % gateways.length].url}/v1/pets?limit=1`,
        withKey(generateApiKey(), `198.51.100.${i % ADDRESSES}`),
      );
      await reply.arrayBuffer();
      statuses.set(reply.status, (statuses.get(reply.status) ?? 0) + 1);
    }
  };
  const running = Promise.all(Array.from({ length: workers }, (_, w) => worker(w)));
  return {
    get sent() {
      return sent;
    },
    async stop(): Promise<{ sent: number; statuses: Map<number, number> }> {
      stopped = true;
      await running;
      return { sent, statuses };
    },
  };
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

let pets: RunningPets;
beforeAll(async () => {
  pets = await startPetsService();
});
afterAll(async () => {
  await pets?.close();
});

/**
 * Issue #21 point 3: a flood of random well-formed keys from many addresses must not shut new customers out.
 * The key filter answers unknown keys without the database; the test counts the hashes looked up, which without
 * the filter would be most of the flood's (KEY_LOOKUPS_PER_SECOND 20 bounds queries, each carrying a batch).
 * Runs on the engine the run selects: embedded PGlite (LISTEN/NOTIFY, in-process counters) or DATABASE_URL's
 * PostgreSQL with REDIS_URL (pub/sub, shared counters).
 */
describe('a flood of random keys does not shut new customers out', () => {
  let database: GatewayTestDatabase;
  let a: GatewayUnderTest;
  let b: GatewayUnderTest;
  const env = { TRUST_PROXY: 'loopback', KEY_LOOKUPS_PER_SECOND: '20' };

  beforeAll(async () => {
    database = await createGatewayTestDatabase();
    const keyPrefix = `${process.env.REDIS_KEY_PREFIX ?? 'test:'}flood-${randomBytes(4).toString('hex')}:`;
    a = await startGateway({ petsUrl: pets.url, database, keyPrefix, env });
    b = await startGateway({ petsUrl: pets.url, database, keyPrefix, env });
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
    await database?.drop();
  });

  it('accepts every fresh valid key during the flood as soon as its change is heard; only false positives reach the database', async () => {
    // Ten keys issued before the flood, ten during it; each used first on the instance that did not issue it.
    const before = await Promise.all(
      Array.from({ length: 10 }, (_, i) => mintKey(i % 2 ? b : a, 'pro').then((key) => ({ key, on: i % 2 ? a : b }))),
    );
    const queriesBefore = [await storeQueries(a), await storeQueries(b)];
    const started = Date.now();
    const load = flood([a, b]);
    await pause(1_500);
    const statuses: number[] = [];
    for (const { key, on } of before)
      statuses.push((await call(`${on.url}/v1/pets?limit=1`, withKey(key, '192.0.2.1'))).status);
    let slowestChangeMs = 0;
    for (let i = 0; i < 10; i += 1) {
      const other = i % 2 ? a : b;
      const held = await filterKeys(other);
      const key = await mintKey(i % 2 ? b : a, 'pro');
      // The key's change reaches the other instance a few milliseconds after the admin API answers, more on a
      // loaded machine; until then the key is not in its filter, and the flood spends the lookups of such keys (a
      // key used there before was refused 401 in CI). Used once heard: what the flood must not take from it.
      const minted = Date.now();
      while ((await filterKeys(other)) <= held && Date.now() - minted < 5_000) await pause(5);
      slowestChangeMs = Math.max(slowestChangeMs, Date.now() - minted);
      statuses.push((await call(`${other.url}/v1/pets?limit=1`, withKey(key, '192.0.2.1'))).status);
    }
    // Heard within the propagation bound the control plane promises (docs/control-plane.md: within a second).
    expect(slowestChangeMs).toBeLessThan(1_000);
    await pause(500);
    const { sent, statuses: floodStatuses } = await load.stop();
    const seconds = Math.ceil((Date.now() - started) / 1000);
    const queries = (await storeQueries(a)) - queriesBefore[0] + (await storeQueries(b)) - queriesBefore[1];

    expect(statuses).toEqual(Array(20).fill(200));
    // The flood really was one: more random keys per second than the budget, refused 401 (then 429 per address).
    expect(sent).toBeGreaterThan(2 * 20 * 2);
    expect([...floodStatuses.keys()].every((status) => status === 401 || status === 429)).toBe(true);
    // One query per fresh key, plus the filter's false positives (at most 1 % of the random keys), plus the few
    // hashes not in the filter that each instance still looks up (1 % of its budget of 20: 1 a second).
    expect(queries).toBeLessThanOrEqual(20 + Math.ceil(sent * FALSE_POSITIVE_RATE) + 2 * (seconds + 1));
  }, 60_000);

  it('reads every valid key hash in pages for the filter: revoked and expired keys left out', async () => {
    for (let i = 0; i < 16; i += 1) await mintKey(i % 2 ? a : b, 'free');
    const revoked = await mintKey(a, 'pro', `revoked-${randomBytes(3).toString('hex')}`);
    const expiring = await mintKey(a, 'pro', `expired-${randomBytes(3).toString('hex')}`);
    const sql = new Client({ connectionString: database.url });
    await sql.connect();
    try {
      await sql.query(`UPDATE "gateway"."api_keys" SET revoked_at = now() WHERE key_hash = $1`, [hashApiKey(revoked)]);
      await sql.query(`UPDATE "gateway"."api_keys" SET expires_at = now() - interval '1 second' WHERE key_hash = $1`, [
        hashApiKey(expiring),
      ]);
      const all = (await sql.query<{ key_hash: string }>(`SELECT key_hash FROM "gateway"."api_keys"`)).rows.map(
        (r) => r.key_hash,
      );
      const repository = a.app.get(KeyLookupRepository);
      const paged: string[] = [];
      for await (const page of repository.validKeyHashPages(7)) {
        expect(page.length).toBeLessThanOrEqual(7);
        paged.push(...page);
      }
      const expected = all.filter((hash) => hash !== hashApiKey(revoked) && hash !== hashApiKey(expiring)).sort();
      expect(expected.length).toBeGreaterThan(14);
      expect([...paged].sort()).toEqual(expected);
      expect(new Set(paged).size).toBe(paged.length);
      expect(await repository.countValidKeyHashes()).toBe(expected.length);
    } finally {
      await sql.end();
    }
  });

  it("accepts on instance B, at once, a key issued on instance A: the change put it in B's filter", async () => {
    const cacheB = b.app.get(KeyCache);
    // From a fresh build: the count is then exactly the valid keys, and a rebuild that lands during the test (the
    // catch-up build 10 s after start, on a slow machine) cannot move it except by the new key. Without it, the
    // count also held every hash the changes of the tests above had added (revoked, expired, added twice), and a
    // rebuild landing here dropped them: 56 held, 38 after, in a CI run on a loaded machine.
    await cacheB.rebuildFilter();
    expect(cacheB.filterState.complete).toBe(true);
    const heldBefore = cacheB.filterState.keys;
    const load = flood([b], 20);
    try {
      await pause(500);
      const key = await mintKey(a, 'business');
      // The very first request on B, under the flood (which spends the one lookup a second that hashes not in the
      // filter may take): accepted because the change put the key in B's filter. No retry, no waiting for a TTL.
      expect((await call(`${b.url}/v1/pets?limit=1`, withKey(key, '192.0.2.2'))).status).toBe(200);
      expect(cacheB.filterState.keys).toBe(heldBefore + 1);
    } finally {
      await load.stop(); // a failed assertion must not leave the flood running into the next test's shutdown
    }
  }, 60_000);
});

describe('cached keys under a flood: never trusted past the TTL', () => {
  // Its own key prefix: on Redis, the run's prefix names the change channel every other test file's gateways
  // publish on, and the fake clock never refills the lookup budget this test spends on purpose.
  it('refuses a key revoked without a message once its TTL has passed, although the budget is spent', async () => {
    const database = await createGatewayTestDatabase();
    const clock = new FakeClock();
    const keyPrefix = `${process.env.REDIS_KEY_PREFIX ?? 'test:'}ttl-${randomBytes(4).toString('hex')}:`;
    const gateway = await startGateway({
      petsUrl: pets.url,
      database,
      clock,
      keyPrefix,
      // One query a second of one key: a single lookup waiting or running spends the whole budget.
      env: { TRUST_PROXY: 'loopback', KEY_LOOKUPS_PER_SECOND: '1', KEY_LOOKUP_BATCH_SIZE: '1' },
    });
    const sql = new Client({ connectionString: database.url });
    try {
      await sql.connect();
      const key = await mintKey(gateway, 'business');
      const first = await call(`${gateway.url}/v1/pets?limit=1`, withKey(key));
      // The body names the cause of anything but 200 (key store, rate-limit store or pets unavailable).
      expect(`${first.status} ${first.text}`).toMatch(/^200 /);
      // Revoked in the database with no message (as if it was lost): only the TTL (30 s) bounds the trust.
      await sql.query(`UPDATE "gateway"."api_keys" SET revoked_at = now() WHERE key_hash = $1`, [hashApiKey(key)]);
      expect((await call(`${gateway.url}/v1/pets?limit=1`, withKey(key))).status).toBe(200);

      clock.advance(30_001);
      const load = flood([gateway], 20);
      // Fresh keys spend the whole lookup budget (1 a second) at the same time, and keep its one place taken.
      const fresh = await Promise.all(Array.from({ length: 12 }, () => mintKey(gateway, 'pro')));
      const freshStatuses = Promise.all(
        fresh.map((k) => call(`${gateway.url}/v1/pets?limit=1`, withKey(k)).then((r) => r.status)),
      );
      const replies = [];
      for (let i = 0; i < 5; i += 1) replies.push(await call(`${gateway.url}/v1/pets?limit=1`, withKey(key)));
      await freshStatuses;
      await load.stop(); // before any assertion: a failed one must not leave the flood running
      expect(await freshStatuses).toContain(503);
      for (const reply of replies) expectErrorBody(reply, 401, 'UNAUTHORIZED');
    } finally {
      await sql.end();
      await gateway.close();
      await database.drop();
    }
  }, 60_000);
});

describe('a valid key from an address banned for anonymous requests', () => {
  it("is the consumer's; a key not in the filter from that address gets the ban's 429", async () => {
    const gateway = await startGateway({
      petsUrl: pets.url,
      env: {
        TRUST_PROXY: 'loopback',
        ANON_RATE_LIMIT_PER_MINUTE: '5',
        BAN_THRESHOLD: '3',
        BAN_GRACE_MS: '0',
        KEY_LOOKUPS_PER_SECOND: '100',
      },
    });
    try {
      const address = '203.0.113.9';
      const queriesBefore = await storeQueries(gateway);
      const started = Date.now();
      let last = await call(`${gateway.url}/v1/pets?limit=1`, withKey(generateApiKey(), address));
      for (let i = 0; i < 20 && (last.body as { code?: string }).code !== 'KEY_BANNED'; i += 1) {
        last = await call(`${gateway.url}/v1/pets?limit=1`, withKey(generateApiKey(), address));
      }
      expectErrorBody(last, 429, 'KEY_BANNED');
      // None of its keys was in the filter: the guessing cost no query but the one a second (1 % of a budget of
      // 100) that hashes not in the filter may still take.
      expect((await storeQueries(gateway)) - queriesBefore).toBeLessThanOrEqual(
        Math.ceil((Date.now() - started) / 1000) + 1,
      );

      const key = await mintKey(gateway, 'pro');
      const reply = await call(`${gateway.url}/v1/pets?limit=1`, withKey(key, address));
      expect(reply.status).toBe(200);
      expect(reply.headers.get('x-ratelimit-limit')).toBe('300');
      expectErrorBody(
        await call(`${gateway.url}/v1/pets?limit=1`, withKey(generateApiKey(), address)),
        429,
        'KEY_BANNED',
      );
    } finally {
      await gateway.close();
    }
  }, 60_000);
});
