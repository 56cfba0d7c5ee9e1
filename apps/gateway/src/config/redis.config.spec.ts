import { ConfigurationError } from '@app/platform';
import { loadGatewayConfig } from './gateway.config';

describe('Redis topology in the gateway configuration', () => {
  const connection = (env: Record<string, string>) => loadGatewayConfig(env).redis?.connection;

  it('reads a Redis Cluster from a few of its nodes, with credentials and TLS for a managed service', () => {
    expect(
      connection({
        REDIS_CLUSTER_NODES: 'node-a:7000, 10.0.0.2:7001,[fd00::3]:7002',
        REDIS_USERNAME: 'gateway',
        REDIS_PASSWORD: 's3cret',
        REDIS_TLS: 'true',
      }),
    ).toEqual({
      topology: {
        kind: 'cluster',
        nodes: [
          { host: 'node-a', port: 7000 },
          { host: '10.0.0.2', port: 7001 },
          { host: 'fd00::3', port: 7002 },
        ],
      },
      username: 'gateway',
      password: 's3cret',
      tls: true,
      connectTimeoutMs: 2000,
    });
  });

  it('reads a Sentinel-managed primary with the sentinels own credentials', () => {
    expect(
      connection({
        REDIS_SENTINELS: 's1:26379,s2:26379',
        REDIS_SENTINEL_NAME: 'limits',
        REDIS_PASSWORD: 'p',
        REDIS_SENTINEL_PASSWORD: 'sp',
      }),
    ).toMatchObject({
      topology: {
        kind: 'sentinel',
        name: 'limits',
        sentinels: [
          { host: 's1', port: 26379 },
          { host: 's2', port: 26379 },
        ],
      },
      password: 'p',
      sentinelPassword: 'sp',
      tls: false,
    });
  });

  it('takes TLS from a rediss:// URL', () => {
    expect(connection({ REDIS_URL: 'rediss://user:pw@cache.example.com:6380' })?.tls).toBe(true);
  });

  it('has no Redis when no topology is set, whatever the credentials', () => {
    expect(loadGatewayConfig({ REDIS_PASSWORD: 'p' }).redis).toBeUndefined();
  });

  it.each([
    [
      { REDIS_URL: 'redis://a:6379', REDIS_CLUSTER_NODES: 'b:7000' },
      'set only one of REDIS_URL, REDIS_CLUSTER_NODES and REDIS_SENTINELS (got REDIS_URL and REDIS_CLUSTER_NODES)',
    ],
    [{ REDIS_CLUSTER_NODES: 'b:7000', REDIS_SENTINELS: 's:26379', REDIS_SENTINEL_NAME: 'm' }, 'set only one of'],
    [{ REDIS_SENTINELS: 's:26379' }, 'REDIS_SENTINELS needs REDIS_SENTINEL_NAME'],
    [{ REDIS_SENTINEL_NAME: 'm' }, 'REDIS_SENTINEL_NAME is set but REDIS_SENTINELS is not'],
    [
      { REDIS_URL: 'redis://a:6379', REDIS_SENTINEL_PASSWORD: 'x' },
      'REDIS_SENTINEL_PASSWORD is set but REDIS_SENTINELS is not',
    ],
    [
      { REDIS_CLUSTER_NODES: 'node-a' },
      'REDIS_CLUSTER_NODES must be a comma-separated list of host:port (got "node-a")',
    ],
    [{ REDIS_CLUSTER_NODES: 'a:7000,,b:7001' }, 'REDIS_CLUSTER_NODES must be a comma-separated list of host:port'],
    [{ REDIS_CLUSTER_NODES: 'a:70000' }, 'REDIS_CLUSTER_NODES must be a comma-separated list of host:port'],
    [
      { REDIS_SENTINELS: 'redis://s:26379', REDIS_SENTINEL_NAME: 'm' },
      'REDIS_SENTINELS must be a comma-separated list of host:port',
    ],
    [{ REDIS_SENTINELS: 's:26379', REDIS_SENTINEL_NAME: 'my master' }, 'REDIS_SENTINEL_NAME must be a master name'],
    [{ REDIS_TLS: 'yes' }, 'REDIS_TLS must be true or false'],
  ])('stops on %j with one clear line', (env, message) => {
    expect(() => loadGatewayConfig(env)).toThrow(ConfigurationError);
    expect(() => loadGatewayConfig(env)).toThrow(message);
  });
});
