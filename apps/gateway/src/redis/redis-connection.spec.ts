import Redis from 'ioredis';
import { createRedisConnection, describeRedisTopology, redisClientOptions } from './redis-connection';

describe('Redis connections by topology and role', () => {
  const base = { tls: false, connectTimeoutMs: 1500 };

  it('builds a Redis for one server: request-path commands never wait in a queue nor retry', async () => {
    const redis = createRedisConnection(
      { ...base, topology: { kind: 'standalone', url: 'redis://u:p@127.0.0.1:1/2' } },
      'commands',
    ) as Redis;
    redis.on('error', () => undefined);
    expect(redis).toBeInstanceOf(Redis);
    expect(redis.options).toMatchObject({
      host: '127.0.0.1',
      port: 1,
      db: 2,
      username: 'u',
      password: 'p',
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      connectTimeout: 1500,
    });
    // Nothing listens on port 1: the command fails at once instead of waiting for a connection.
    await expect(redis.ping()).rejects.toThrow();
    redis.disconnect();
  });

  it('lets a subscriber wait for its connection and subscribe again after a reconnect', () => {
    const built = redisClientOptions(
      { ...base, topology: { kind: 'standalone', url: 'redis://127.0.0.1:1' } },
      'subscriber',
    );
    expect(built).toMatchObject({
      client: 'redis',
      url: 'redis://127.0.0.1:1',
      options: { enableOfflineQueue: true, maxRetriesPerRequest: null, autoResubscribe: true },
    });
  });

  it('asks the sentinels for the primary, with both sets of credentials and TLS', () => {
    const built = redisClientOptions(
      {
        ...base,
        tls: true,
        username: 'gw',
        password: 'pw',
        sentinelPassword: 'spw',
        topology: { kind: 'sentinel', name: 'limits', sentinels: [{ host: 's1', port: 26379 }] },
      },
      'commands',
    );
    expect(built).toMatchObject({
      client: 'redis',
      options: {
        name: 'limits',
        role: 'master',
        sentinels: [{ host: 's1', port: 26379 }],
        username: 'gw',
        password: 'pw',
        sentinelPassword: 'spw',
        tls: {},
        enableTLSForSentinelMode: true,
        enableOfflineQueue: false,
      },
    });
    expect(built.client === 'redis' && built.url).toBeFalsy();
  });

  it('builds a Cluster from seed nodes; each node connection carries the credentials and TLS', () => {
    const built = redisClientOptions(
      { ...base, tls: true, password: 'pw', topology: { kind: 'cluster', nodes: [{ host: 'n1', port: 7000 }] } },
      'commands',
    );
    expect(built).toMatchObject({
      client: 'cluster',
      nodes: [{ host: 'n1', port: 7000 }],
      options: { enableOfflineQueue: false, redisOptions: { password: 'pw', tls: {}, connectTimeout: 1500 } },
    });
    expect(
      redisClientOptions({ ...base, topology: { kind: 'cluster', nodes: [{ host: 'n1', port: 7000 }] } }, 'subscriber')
        .options.enableOfflineQueue,
    ).toBe(true);
  });

  it('describes a topology without its credentials', () => {
    expect(describeRedisTopology({ kind: 'standalone', url: 'redis://user:secret@cache:6379' })).toBe(
      'Redis at cache:6379',
    );
    expect(describeRedisTopology({ kind: 'sentinel', name: 'm', sentinels: [{ host: 's1', port: 26379 }] })).toBe(
      'Redis primary "m" via sentinels s1:26379',
    );
  });
});
