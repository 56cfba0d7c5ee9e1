import Redis, { Cluster, ClusterOptions, RedisOptions } from 'ioredis';
import type { RedisConnectionConfig, RedisNode, RedisTopology } from '../config/redis.config';

export type { RedisConnectionConfig } from '../config/redis.config';

/**
 * What a connection is for.
 * - `commands`: request-path commands (the rate-limit script). Nothing waits in an offline queue and nothing is
 *   retried: a command that cannot be sent now fails now, so that the caller applies its failure mode at once.
 * - `subscriber`: a pub/sub subscriber (consumer change notifications). Its SUBSCRIBE waits for the connection
 *   and ioredis subscribes again after every reconnect (or failover), so a listener never goes deaf for good.
 */
export type RedisConnectionRole = 'commands' | 'subscriber';

/** Reconnect soon, and never slower than every 2 s: the gateway must notice a returning Redis quickly. */
const reconnectDelay = (attempt: number): number => Math.min(attempt * 200, 2000);

function roleOptions(role: RedisConnectionRole): RedisOptions {
  return role === 'commands'
    ? { enableOfflineQueue: false, maxRetriesPerRequest: 0, autoResubscribe: false }
    : { enableOfflineQueue: true, maxRetriesPerRequest: null, autoResubscribe: true };
}

/** What ioredis is given for a topology and role: a `Redis` (URL or options) or a `Cluster` (seed nodes and options). */
export type RedisClientOptions =
  | { client: 'redis'; url?: string; options: RedisOptions }
  | { client: 'cluster'; nodes: RedisNode[]; options: ClusterOptions };

/**
 * Builds the ioredis client of a topology: a `Redis` for one server or a Sentinel-managed primary, a `Cluster`
 * for Redis Cluster. Both expose the same command interface (`defineCommand`, `status`, `ping`, `disconnect`).
 * Reconnects, Sentinel failovers (ioredis asks the sentinels for the new primary) and cluster redirections
 * (`MOVED`/`ASK`, slot refresh) are ioredis's job, never ours. The caller owns the connection and must
 * `disconnect()` it, and should listen to `error` (ioredis logs unhandled ones).
 */
export function createRedisConnection(config: RedisConnectionConfig, role: RedisConnectionRole): Redis | Cluster {
  const built = redisClientOptions(config, role);
  if (built.client === 'cluster') return new Cluster(built.nodes, built.options);
  return built.url !== undefined ? new Redis(built.url, built.options) : new Redis(built.options);
}

/** The options createRedisConnection hands to ioredis (separate so that they can be checked without a network). */
export function redisClientOptions(config: RedisConnectionConfig, role: RedisConnectionRole): RedisClientOptions {
  const tls = config.tls ? { tls: {} } : {};
  const credentials: RedisOptions = {
    ...(config.username !== undefined ? { username: config.username } : {}),
    ...(config.password !== undefined ? { password: config.password } : {}),
  };
  const common: RedisOptions = {
    ...roleOptions(role),
    ...credentials,
    ...tls,
    connectTimeout: config.connectTimeoutMs,
    retryStrategy: reconnectDelay,
  };
  const { topology } = config;
  switch (topology.kind) {
    case 'standalone':
      // ioredis reads host, port, db, user, password and TLS (rediss://) from the URL; explicit options win.
      return { client: 'redis', url: topology.url, options: common };
    case 'sentinel':
      return {
        client: 'redis',
        options: {
          ...common,
          sentinels: topology.sentinels,
          name: topology.name,
          role: 'master',
          ...(config.sentinelUsername !== undefined ? { sentinelUsername: config.sentinelUsername } : {}),
          ...(config.sentinelPassword !== undefined ? { sentinelPassword: config.sentinelPassword } : {}),
          ...(config.tls ? { enableTLSForSentinelMode: true, sentinelTLS: {} } : {}),
          // No failoverDetector (+switch-master subscriptions): on a failover Sentinel makes the old primary drop
          // its clients, a dead one drops them anyway, and a hung one is dropped by the rate-limit store after
          // REDIS_COMMAND_TIMEOUT_MS. With it on, our failover test once saw all three instances stay degraded:
          // in ioredis 5.11 a +switch-master that arrives while a reconnect is still resolving the primary aborts
          // that attempt, and the connection then ends for good (status 'end', no further reconnects).
          sentinelRetryStrategy: reconnectDelay,
          sentinelCommandTimeout: config.connectTimeoutMs,
        },
      };
    case 'cluster':
      return {
        client: 'cluster',
        nodes: topology.nodes,
        options: {
          enableOfflineQueue: role === 'subscriber',
          clusterRetryStrategy: reconnectDelay,
          // Each node's connection: credentials and TLS. Queueing and node reconnects stay ioredis's defaults for
          // cluster nodes (a lost node is replaced through MOVED and a slot refresh); the Cluster's own offline
          // queue above decides whether a command waits while the cluster is not ready.
          redisOptions: { ...credentials, ...tls, connectTimeout: config.connectTimeoutMs },
          // Managed clusters (TLS) announce names whose certificates must match: keep names as they are given.
          ...(config.tls
            ? {
                dnsLookup: (address: string, callback: (error: null, address: string) => void) =>
                  callback(null, address),
              }
            : {}),
        },
      };
  }
}

/** What a topology is, for log lines (never credentials). */
export function describeRedisTopology(topology: RedisTopology): string {
  const list = (nodes: RedisNode[]) => nodes.map((node) => `${node.host}:${node.port}`).join(',');
  switch (topology.kind) {
    case 'standalone':
      // URL.canParse: a URL that passed the start-up check but not WHATWG parsing is still named, never thrown on.
      return URL.canParse(topology.url) ? `Redis at ${new URL(topology.url).host}` : 'Redis';
    case 'cluster':
      return `Redis Cluster via ${list(topology.nodes)}`;
    case 'sentinel':
      return `Redis primary "${topology.name}" via sentinels ${list(topology.sentinels)}`;
  }
}
