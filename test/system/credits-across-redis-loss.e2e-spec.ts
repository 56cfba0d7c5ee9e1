import { randomBytes } from 'node:crypto';
import Redis from 'ioredis';
import { Client } from 'pg';
import {
  adminCall,
  createGatewayTestDatabase,
  GatewayTestDatabase,
  GatewayUnderTest,
  mintKey,
  startGateway,
} from '../support/gateway';
import { call } from '../support/http';
import { RunningPets, startPetsService } from '../support/pets-service';
import { hasRedisServer, OwnRedisServer } from '../support/redis-server';
import { seededRandom } from '../support/seeded-random';
import { runIf } from '../support/skip';

/**
 * Money across a Redis that forgets (issue #45, docs/billing.md "A lost counter store"): two live gateways share
 * a Redis of the test's own, which the test empties (FLUSHALL) in the middle of their spend, as a failover to an
 * empty replica or an operator would. The spend each instance holds is never flushed on its own interval here
 * (USAGE_FLUSH_MS is a minute): only a rebuild's barrier makes it durable, the case that handed out 1,200
 * requests for 1,000 credits before. The client's own count of 200s is the truth every balance is checked against.
 */
const ENTERPRISE = { perMinute: 1_000_000, perDay: 100_000_000 };
const ENV = { USAGE_FLUSH_MS: '60000', BAN_GRACE_MS: '600000' };
const as = (key: string) => ({ headers: { authorization: `Bearer ${key}` } });

runIf(hasRedisServer, 'redis-server is not installed').describe('credits across a Redis that forgets', () => {
  let redis: OwnRedisServer;
  let control: Redis;
  let pets: RunningPets;
  let database: GatewayTestDatabase;
  let fleet: GatewayUnderTest[];
  const keyPrefix = `credits-loss-${randomBytes(4).toString('hex')}:`;
  const start = () => startGateway({ petsUrl: pets.url, database, keyPrefix, env: { ...ENV, REDIS_URL: redis.url } });

  beforeAll(async () => {
    redis = await OwnRedisServer.start();
    control = new Redis(redis.url);
    pets = await startPetsService();
    database = await createGatewayTestDatabase();
    fleet = [await start(), await start()];
  }, 180_000);

  afterAll(async () => {
    for (const gateway of fleet ?? []) await gateway.close();
    await database?.drop();
    await pets?.close();
    control?.disconnect();
    await redis?.stop();
  });

  /** `n` requests spread over the fleet at once: how many were admitted (200), and every status seen. */
  async function burst(key: string, n: number): Promise<{ admitted: number; statuses: Set<number> }> {
    const replies = await Promise.all(
      Array.from({ length: n }, (_, i) => call(`${fleet[i % fleet.length].url}/v1/pets?limit=1`, as(key))),
    );
    return {
      admitted: replies.filter((r) => r.status === 200).length,
      statuses: new Set(replies.map((r) => r.status)),
    };
  }

  /** Sends until the balance is spent (402 from every instance): how many more were admitted. */
  async function spendAll(key: string): Promise<number> {
    let admitted = 0;
    for (let round = 0; round < 200; round += 1) {
      const { admitted: more, statuses } = await burst(key, 50);
      admitted += more;
      if (more === 0 && statuses.size === 1 && statuses.has(402)) return admitted;
      // 503 while a balance is being rebuilt: the client retries, as Retry-After says.
      if (more === 0) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error('the balance was never spent');
  }

  const balanceOf = async (name: string): Promise<number | undefined> => {
    const reply = await adminCall(fleet[0], 'GET', `/consumers/${name}/billing`);
    return (reply.body as { credits: { balance: number } | null }).credits?.balance;
  };
  const topUp = async (name: string, amount: number) => {
    for (;;) {
      const reply = await adminCall(fleet[1], 'POST', `/consumers/${name}/credits/top-ups`, { amount, reason: 'test' });
      if (reply.status === 201) return;
      // Only a balance being rebuilt may refuse it for now (503), never lose or double it.
      expect(reply.status).toBe(503);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  };
  const rebuildsOf = async (name: string): Promise<number> => {
    const client = new Client({ connectionString: database.url });
    await client.connect();
    try {
      const { rows } = await client.query<{ n: string }>(
        'SELECT count(*) AS n FROM gateway.credit_rebuild WHERE consumer = $1',
        [name],
      );
      return Number(rows[0].n);
    } finally {
      await client.end();
    }
  };
  const newConsumer = async () => {
    const name = `c-${randomBytes(4).toString('hex')}`;
    const key = await mintKey(fleet[0], 'enterprise', name, ENTERPRISE);
    return { name, key };
  };

  it('1,000 credits admit exactly 1,000 when Redis is emptied mid-spend; a later top-up survives the next loss', async () => {
    const { name, key } = await newConsumer();
    await topUp(name, 1_000);
    // 800 spent across both instances, none of it flushed: each instance holds its part in memory.
    const first = await burst(key, 800);
    expect(first.admitted).toBe(800);
    await control.flushall();
    expect(first.admitted + (await spendAll(key))).toBe(1_000);
    expect(await balanceOf(name)).toBe(0);

    await topUp(name, 150);
    expect((await burst(key, 60)).admitted).toBe(60);
    await control.flushall();
    // The bought 150 are neither lost (rebuilt as 0) nor handed out twice.
    expect(60 + (await spendAll(key))).toBe(150);
    expect(await balanceOf(name)).toBe(0);
    // One rebuild per loss for the whole fleet, however many requests found the balance missing at once (and
    // one for the first top-up, which found no balance either).
    expect(await rebuildsOf(name)).toBe(3);
  }, 180_000);

  it('a hundred random orderings of losses, restarts and top-ups keep credited − spent = balance, spent ≤ credited', async () => {
    const seed = Number(process.env.CREDITS_FAULT_SEED ?? Date.now() % 1_000_000);
    const random = seededRandom(seed);
    const consumers: Array<{ name: string; credited: number; spent: number }> = [];
    for (let ordering = 0; ordering < 100; ordering += 1) {
      const { name, key } = await newConsumer();
      // Credits in force from the start (before the first top-up the consumer is not charged at all).
      const books = { name, credited: 20 + Math.floor(random() * 60), spent: 0 };
      consumers.push(books);
      await topUp(name, books.credited);
      for (let step = 0; step < 3; step += 1) {
        const pick = random();
        if (pick < 0.25) {
          const amount = 1 + Math.floor(random() * 40);
          await topUp(name, amount);
          books.credited += amount;
        } else if (pick < 0.6) {
          // Emptied while a burst is in flight, at a random moment of it.
          const delay = Math.floor(random() * 15);
          const [result] = await Promise.all([
            burst(key, 10 + Math.floor(random() * 60)),
            new Promise((resolve) => setTimeout(resolve, delay)).then(() => control.flushall()),
          ]);
          books.spent += result.admitted;
        } else if (pick < 0.65) {
          // An instance stopped (its spend written on the way out) and a new one started in its place.
          const which = Math.floor(random() * fleet.length);
          await fleet[which].close();
          fleet[which] = await start();
        } else {
          books.spent += (await burst(key, 5 + Math.floor(random() * 60))).admitted;
        }
        // The invariant after every step, against the client's own count of answers.
        const where = { seed, ordering, step };
        expect({ ...where, spentAtMostCredited: books.spent <= books.credited }).toEqual({
          ...where,
          spentAtMostCredited: true,
        });
        expect({ ...where, balance: await balanceOf(name) }).toEqual({
          ...where,
          balance: books.credited - books.spent,
        });
      }
    }
    // And the ledger, once every instance has written what it holds: credited and spent are what happened.
    for (let i = 0; i < fleet.length; i += 1) {
      await fleet[i].close();
      fleet[i] = await start();
    }
    for (const books of consumers) {
      const ledger = (await adminCall(fleet[0], 'GET', `/consumers/${books.name}/credits/ledger?days=2`)).body as {
        entries: Array<{ amount: number }>;
        spendPerDay: Array<{ spent: number }>;
      };
      expect({ seed, name: books.name, credited: ledger.entries.reduce((sum, e) => sum + e.amount, 0) }).toEqual({
        seed,
        name: books.name,
        credited: books.credited,
      });
      expect({ seed, name: books.name, spent: ledger.spendPerDay.reduce((sum, d) => sum + d.spent, 0) }).toEqual({
        seed,
        name: books.name,
        spent: books.spent,
      });
    }
  }, 600_000);
});
