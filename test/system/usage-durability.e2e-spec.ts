import { ChildProcess } from 'node:child_process';
import { Client } from 'pg';
import { freePort } from '../../scripts/free-port';
import { spawnBuiltGateway, waitUntilLive } from '../support/built-gateway';
import { createGatewayTestDatabase, GatewayTestDatabase, GatewayUnderTest, startGateway } from '../support/gateway';
import { call } from '../support/http';
import { canRunOwnPostgres, OwnPostgres } from '../support/own-postgres';
import { runIf } from '../support/skip';

const FLUSH_MS = 250;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Answers recorded in the gateway schema's hourly rows (every consumer, the anonymous row included; not the fleet's sums). */
async function recorded(url: string): Promise<number> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ n: string | null }>(
      'SELECT sum("requests")::text AS n FROM "gateway"."usage_hourly" WHERE "consumer" <> \'*\'',
    );
    return Number(rows[0].n ?? 0);
  } finally {
    await client.end();
  }
}

/** Sends `n` requests without a key (401s, then the anonymous limit's 429s: each one an answer to count). */
async function send(url: string, n: number): Promise<void> {
  for (let i = 0; i < n; i += 1) await call(`${url}/v1/pets`);
}

/** Issue #23: what a crash or a database outage costs the usage history. */
describe('usage history durability', () => {
  describe('a gateway process killed with SIGKILL', () => {
    let database: GatewayTestDatabase;
    let gateway: ChildProcess | undefined;
    let url: string;

    beforeAll(async () => {
      database = await createGatewayTestDatabase();
      const port = await freePort();
      url = `http://127.0.0.1:${port}`;
      gateway = spawnBuiltGateway({
        PORT: String(port),
        PETS_URL: 'http://127.0.0.1:1',
        GATEWAY_DATABASE_URL: database.url,
        ADMIN_PORT: String(await freePort()),
        ADMIN_TOKEN: 'usage-durability-admin-token-0123456789',
        DEMO_KEY: 'false',
        USAGE_FLUSH_MS: String(FLUSH_MS),
      });
      await waitUntilLive(gateway, `${url}/health/live`);
    }, 90_000);
    afterAll(async () => {
      gateway?.kill('SIGKILL');
      await database?.drop();
    });

    it('loses at most the batch it had not written yet (at most USAGE_FLUSH_MS of answers)', async () => {
      await send(url, 20);
      const deadline = Date.now() + 5000;
      while ((await recorded(database.url)) < 20 && Date.now() < deadline) await sleep(100);
      expect(await recorded(database.url)).toBe(20);

      // 15 more: written within a few flush intervals (what a crash can lose is at most USAGE_FLUSH_MS of answers).
      await send(url, 15);
      await sleep(4 * FLUSH_MS);
      expect(await recorded(database.url)).toBe(35);
      // Then the process dies: what was written stays.
      const exited = new Promise((resolve) => gateway!.once('exit', resolve));
      gateway!.kill('SIGKILL');
      await exited;
      gateway = undefined;
      const kept = await recorded(database.url);
      expect(kept).toBeGreaterThanOrEqual(20);
      expect(kept).toBeLessThanOrEqual(35);
    });
  });

  // A PostgreSQL of the test's own, stopped and started again (never the shared server on 5432).
  const ifOwnPostgres = runIf(canRunOwnPostgres, "PostgreSQL's initdb and pg_ctl (the test starts its own server)");
  ifOwnPostgres.describe('while the gateway database is down', () => {
    let pg: OwnPostgres;
    let gateway: GatewayUnderTest;

    beforeAll(async () => {
      pg = await OwnPostgres.create();
      const database: GatewayTestDatabase = { url: pg.url, drop: async () => undefined };
      gateway = await startGateway({ petsUrl: 'http://127.0.0.1:1', database, env: { USAGE_FLUSH_MS: '200' } });
    }, 60_000);
    afterAll(async () => {
      await gateway?.close();
      pg?.destroy();
    });

    it('keeps the batches it could not write and writes them, merged, once the database is back: nothing lost, nothing twice', async () => {
      await send(gateway.url, 10);
      await sleep(600);
      expect(await recorded(pg.url)).toBe(10);
      pg.stop('fast');
      await send(gateway.url, 12);
      await sleep(1000);
      pg.start();
      const deadline = Date.now() + 15_000;
      while (Date.now() < deadline) {
        const n = await recorded(pg.url).catch(() => 0);
        if (n >= 22) break;
        await sleep(200);
      }
      await sleep(600);
      expect(await recorded(pg.url)).toBe(22);
    }, 30_000);
  });
});
