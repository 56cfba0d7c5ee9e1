import Redis from 'ioredis';
import { runIf } from '../support/skip';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const { deleteKeysWithPrefix } = require('../../scripts/stack/redis-keys') as {
  deleteKeysWithPrefix(url: string, prefix: string): Promise<number>;
};

/** What `npm run stack` does with its Redis keys when it stops (scripts/stack/start-stack.js, cleanUp). */
runIf(process.env.REDIS_URL, 'REDIS_URL (a Redis server)').describe("npm run stack's Redis keys on exit", () => {
  const url = process.env.REDIS_URL!;
  const run = `stack_test_${process.pid}_${Date.now()}`;
  let redis: Redis;

  beforeAll(() => (redis = new Redis(url)));
  afterAll(async () => {
    const left = await redis.keys(`${run}*`);
    if (left.length > 0) await redis.del(...left);
    redis.disconnect();
  });

  it("deletes every key of the run's prefix, however many, and no other key", async () => {
    const prefix = `${run}:`;
    const pipeline = redis.pipeline();
    for (let i = 0; i < 1200; i++) pipeline.set(`${prefix}rl:${i}`, '1');
    pipeline.hset(`${prefix}ban:someone`, 'until', '1');
    // Another run's keys, and one whose name only starts like the prefix with a glob character in it.
    pipeline.set(`${run}-other:rl:1`, '1');
    await pipeline.exec();

    expect(await deleteKeysWithPrefix(url, prefix)).toBe(1201);
    expect(await redis.keys(`${prefix}*`)).toEqual([]);
    expect(await redis.keys(`${run}-other:*`)).toEqual([`${run}-other:rl:1`]);
  });

  it('matches the prefix literally: a glob character in it deletes nothing else', async () => {
    await redis.set(`${run}:a1`, '1');
    await redis.set(`${run}:b1`, '1');
    expect(await deleteKeysWithPrefix(url, `${run}:[a]`)).toBe(0);
    expect((await redis.keys(`${run}:*`)).sort()).toEqual([`${run}:a1`, `${run}:b1`]);
  });
});
