import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import {
  adminCall,
  createGatewayTestDatabase,
  GatewayTestDatabase,
  GatewayUnderTest,
  mintKey,
  startGateway,
} from '../support/gateway';
import { metric } from '../support/gateway-metrics';
import { call } from '../support/http';
import { RunningPets, startPetsService } from '../support/pets-service';
import { openSocket } from '../support/raw-http';
import { withStack } from '../support/with-stack';
import { emptyCounts } from '../../apps/gateway/src/usage/usage-counts';
import type { UsageBucket } from '../../apps/gateway/src/usage/usage-recorder';
import { UsageRepository } from '../../apps/gateway/src/usage/usage.repository';

const DAY_MS = 86_400_000;

/** Resolves with `promise`'s value, or rejects after `ms` (a hung gateway fails the test instead of its timeout). */
function within<T>(ms: number, what: string, promise: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>(
    (_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms)),
  );
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/**
 * The usage tables under load: an export whose client goes away mid-stream, and two instances flushing the same
 * rows every 100 ms. Runs on the embedded engine and on PostgreSQL (where lock order matters).
 */
describe('usage history under load', () => {
  describe('a CSV export whose client goes away while the answer is backed up', () => {
    let pets: RunningPets;
    let database: GatewayTestDatabase;
    let gateway: GatewayUnderTest;
    /** The test's own connection to the gateway's database (no query timeout: the seed takes a while on the embedded engine). */
    let client: Client;

    beforeAll(async () => {
      pets = await startPetsService();
      database = await createGatewayTestDatabase();
      gateway = await startGateway({ petsUrl: pets.url, database });
      client = new Client({ connectionString: database.url });
      await client.connect();
      // 400 consumers of long names × 200 days: a CSV of about 8 MB, more than the socket buffers hold.
      const schema = gateway.config.consumers.schema;
      await client.query(
        `INSERT INTO "${schema}"."usage_daily" ("day", "consumer", "requests", "ok") ` +
          `SELECT current_date - d, rpad('load-' || c || '-', 60, 'x'), 1, 1 FROM generate_series(1, 200) AS d, generate_series(1, 400) AS c`,
      );
    }, 120_000);
    afterAll(async () => {
      await client?.end();
      await gateway?.close();
      await database?.drop();
      await pets?.close();
    });

    it('ends the export (its transaction rolled back, its connection released): the gateway keeps answering', async () => {
      const today = Date.now() - (Date.now() % DAY_MS);
      const from = new Date(today - 200 * DAY_MS).toISOString();
      const socket = await openSocket(gateway.adminUrl);
      socket.write(
        `GET /usage/export?granularity=day&from=${from}&to=${new Date(today).toISOString()} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${gateway.adminToken}\r\n\r\n`,
      );
      // The first page arrives; then the client reads nothing while the gateway fills the buffers, and goes away.
      await new Promise((resolve) => socket.once('data', resolve));
      socket.pause();
      await new Promise((resolve) => setTimeout(resolve, 1000));
      socket.destroy();

      expect((await within(5000, 'GET /consumers', adminCall(gateway, 'GET', '/consumers'))).status).toBe(200);
      if (process.env.DATABASE_URL) {
        const idle = async () =>
          Number(
            (
              await client.query<{ n: string }>(
                `SELECT count(*) AS "n" FROM pg_stat_activity WHERE datname = current_database() AND state LIKE 'idle in transaction%'`,
              )
            ).rows[0].n,
          );
        const deadline = Date.now() + 5000;
        while ((await idle()) > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
        expect(await idle()).toBe(0);
      }
    }, 60_000);
  });

  describe('two instances flushing the same rows every 100 ms', () => {
    const env = { USAGE_FLUSH_MS: '100' };
    const stack = withStack({
      pets: {},
      database: true,
      sharedKeyPrefix: 'usage-load',
      gateways: { a: { env }, b: { env } },
      timeoutMs: 60_000,
    });

    it('two flushes of the same rows in opposite orders, at once, both commit (every instance locks in one order)', async () => {
      // The same 400 rows written by both instances' repositories at the same moment, one batch in each order: a
      // write that locked rows in its batch's order would deadlock (PostgreSQL then aborts one, after
      // deadlock_timeout). On the embedded engine, which runs one transaction at a time, it holds trivially.
      const hour = Math.floor(Date.now() / 3_600_000) * 3_600_000 - 48 * 3_600_000;
      const names = Array.from(
        { length: 400 },
        (_, i) => `lock-${String(i).padStart(3, '0')}-${randomBytes(2).toString('hex')}`,
      );
      const batch = (order: string[]): UsageBucket[] =>
        order.map((consumer) => ({ hour, consumer, keyId: `${consumer}-key`, ...emptyCounts(), requests: 1 }));
      const [repositoryA, repositoryB] = [stack.a.app.get(UsageRepository), stack.b.app.get(UsageRepository)];
      for (let round = 0; round < 5; round += 1) {
        await Promise.all([repositoryA.write(batch(names)), repositoryB.write(batch([...names].reverse()))]);
      }
      const history = await repositoryA.history(names[0], 'hour', new Date(hour), new Date(hour + 3_600_000));
      expect(history.map((bucket) => bucket.requests)).toEqual([10]);
    }, 60_000);

    it('never fails a flush under traffic and counts exactly', async () => {
      const { a, b } = stack;
      const consumers = Array.from({ length: 24 }, (_, i) => `load-${i}-${randomBytes(3).toString('hex')}`);
      const keys = new Map<string, string>();
      for (const name of consumers)
        keys.set(name, await mintKey(a, 'enterprise', name, { perMinute: 1_000_000, perDay: 10_000_000 }));
      // The keys reach the other instance through the change channel.
      await new Promise((resolve) => setTimeout(resolve, 300));
      const sent = new Map<string, number>(consumers.map((name) => [name, 0]));
      const until = Date.now() + 4000;
      // Each instance goes through the consumers in its own order (several at a time), so their batches overlap.
      const drive = async (gateway: GatewayUnderTest, order: string[]) => {
        while (Date.now() < until) {
          for (let i = 0; i < order.length; i += 4) {
            await Promise.all(
              order.slice(i, i + 4).map(async (name) => {
                await call(`${gateway.url}/v1/pets`, { headers: { authorization: `Bearer ${keys.get(name)}` } });
                sent.set(name, sent.get(name)! + 1);
              }),
            );
          }
        }
      };
      await Promise.all([
        drive(a, consumers),
        drive(b, [...consumers].reverse()),
        drive(a, [...consumers].reverse()),
        drive(b, consumers),
      ]);
      await new Promise((resolve) => setTimeout(resolve, 1000));

      expect(await metric(a, 'usage_flush_failures_total')).toBe(0);
      expect(await metric(b, 'usage_flush_failures_total')).toBe(0);
      for (const name of consumers) {
        const reply = await adminCall(a, 'GET', `/consumers/${name}/usage/history?granularity=day`);
        const requests = (reply.body as { buckets: Array<{ requests: number }> }).buckets.reduce(
          (sum, bucket) => sum + bucket.requests,
          0,
        );
        expect({ name, requests }).toEqual({ name, requests: sent.get(name) });
      }
    }, 60_000);
  });
});
