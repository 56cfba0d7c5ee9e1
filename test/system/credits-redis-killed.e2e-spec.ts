import { randomBytes } from 'node:crypto';
import { adminCall, createGatewayTestDatabase, GatewayUnderTest, mintKey, startGateway } from '../support/gateway';
import { call, expectErrorBody } from '../support/http';
import { startPetsService } from '../support/pets-service';
import { hasRedisServer, OwnRedisServer } from '../support/redis-server';
import { runIf } from '../support/skip';

const as = (key: string) => ({ headers: { authorization: `Bearer ${key}` } });
const unique = (prefix: string) => `${prefix}-${randomBytes(4).toString('hex')}`;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** As in test/e2e/billing/prepaid-credits.e2e-spec.ts: refusals are not strikes for a minute; spend flushed often. */
const ENV = { BAN_GRACE_MS: '60000', USAGE_FLUSH_MS: '200' };
const ENTERPRISE = { perMinute: 1_000_000, perDay: 100_000_000 };

const billingOf = async (g: GatewayUnderTest, name: string) =>
  (await adminCall(g, 'GET', `/consumers/${name}/billing`)).body as { credits: { balance: number } | null };

/**
 * A balance is money: a Redis of the test's own killed (-9) and restarted empty is rebuilt from the ledger and the
 * spend (the embedded restart is in test/e2e/billing/prepaid-credits.e2e-spec.ts).
 */
runIf(hasRedisServer, 'redis-server is not installed').describe(
  'a balance after a Redis killed (-9) and restarted empty',
  () => {
    it('rebuilds every balance exactly where the ledger says', async () => {
      const redis = await OwnRedisServer.start();
      const pets = await startPetsService();
      const database = await createGatewayTestDatabase();
      const gateway = await startGateway({ petsUrl: pets.url, database, env: { ...ENV, REDIS_URL: redis.url } });
      try {
        const name = unique('ent');
        const key = await mintKey(gateway, 'enterprise', name, ENTERPRISE);
        await adminCall(gateway, 'POST', `/consumers/${name}/credits/top-ups`, { amount: 60, reason: 'kill' });
        for (let i = 0; i < 22; i += 1)
          expect((await call(`${gateway.url}/v1/pets?limit=1`, as(key))).status).toBe(200);
        await sleep(600); // one flush of the spend
        await redis.stop();
        // Credits fail closed while the store is gone.
        expectErrorBody(await call(`${gateway.url}/v1/pets?limit=1`, as(key)), 503, 'SERVICE_UNAVAILABLE');
        await redis.start();
        const deadline = Date.now() + 15_000;
        let reply = await call(`${gateway.url}/v1/pets?limit=1`, as(key));
        while (reply.status === 503 && Date.now() < deadline) {
          await sleep(200);
          reply = await call(`${gateway.url}/v1/pets?limit=1`, as(key));
        }
        expect(reply.status).toBe(200);
        // 60 - 22 = 38 rebuilt, then this request: 37, never 60 nor 0.
        expect((await billingOf(gateway, name)).credits?.balance).toBe(37);
      } finally {
        await gateway.close();
        await database.drop();
        await pets.close();
        await redis.stop();
      }
    }, 180_000);
  },
);
