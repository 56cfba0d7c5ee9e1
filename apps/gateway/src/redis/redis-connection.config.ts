import { ConfigurationError } from '@app/platform';
import { parseRedisNodes, RedisConnectionConfig, RedisTopology } from './redis-connection';

/** The validated variables that say where Redis is (GatewayEnvironment's Redis block). */
export interface RedisEnvironment {
  REDIS_URL?: string;
  REDIS_CLUSTER_NODES?: string;
  REDIS_SENTINELS?: string;
  REDIS_SENTINEL_NAME?: string;
  REDIS_USERNAME?: string;
  REDIS_PASSWORD?: string;
  REDIS_SENTINEL_USERNAME?: string;
  REDIS_SENTINEL_PASSWORD?: string;
  REDIS_TLS: boolean;
  REDIS_COMMAND_TIMEOUT_MS: number;
}

/**
 * The one topology the variables choose, or undefined (in-process counters). Each variable was validated on
 * its own already; what is checked here is how they combine, with one line naming the variables.
 */
export function redisConnectionFromEnvironment(e: RedisEnvironment): RedisConnectionConfig | undefined {
  const chosen = (['REDIS_URL', 'REDIS_CLUSTER_NODES', 'REDIS_SENTINELS'] as const).filter((name) => e[name] !== undefined);
  if (chosen.length > 1) {
    throw new ConfigurationError(`Invalid configuration: set only one of REDIS_URL, REDIS_CLUSTER_NODES and REDIS_SENTINELS (got ${chosen.join(' and ')})`);
  }
  if (e.REDIS_SENTINELS !== undefined && e.REDIS_SENTINEL_NAME === undefined) {
    throw new ConfigurationError('Invalid configuration: REDIS_SENTINELS needs REDIS_SENTINEL_NAME, the name the sentinels monitor the primary under');
  }
  if (e.REDIS_SENTINEL_NAME !== undefined && e.REDIS_SENTINELS === undefined) {
    throw new ConfigurationError('Invalid configuration: REDIS_SENTINEL_NAME is set but REDIS_SENTINELS is not');
  }
  const sentinelOnly = (['REDIS_SENTINEL_USERNAME', 'REDIS_SENTINEL_PASSWORD'] as const).find((name) => e[name] !== undefined);
  if (sentinelOnly && e.REDIS_SENTINELS === undefined) {
    throw new ConfigurationError(`Invalid configuration: ${sentinelOnly} is set but REDIS_SENTINELS is not`);
  }
  let topology: RedisTopology;
  if (e.REDIS_URL !== undefined) topology = { kind: 'standalone', url: e.REDIS_URL };
  else if (e.REDIS_CLUSTER_NODES !== undefined) topology = { kind: 'cluster', nodes: parseRedisNodes(e.REDIS_CLUSTER_NODES)! };
  else if (e.REDIS_SENTINELS !== undefined) topology = { kind: 'sentinel', sentinels: parseRedisNodes(e.REDIS_SENTINELS)!, name: e.REDIS_SENTINEL_NAME! };
  else return undefined;
  return {
    topology,
    username: e.REDIS_USERNAME,
    password: e.REDIS_PASSWORD,
    sentinelUsername: e.REDIS_SENTINEL_USERNAME,
    sentinelPassword: e.REDIS_SENTINEL_PASSWORD,
    tls: e.REDIS_TLS || (e.REDIS_URL?.startsWith('rediss://') ?? false),
    connectTimeoutMs: Math.max(1000, Math.min(e.REDIS_COMMAND_TIMEOUT_MS, 10_000)),
  };
}
