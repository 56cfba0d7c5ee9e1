import { ConfigurationError } from '@app/platform';

/** A `host:port` of a cluster node or a sentinel. */
export interface RedisNode {
  host: string;
  port: number;
}

/**
 * Where the shared Redis is: one server (`REDIS_URL`), a Redis Cluster (`REDIS_CLUSTER_NODES`, any few masters:
 * ioredis discovers the rest and follows the slots), or a primary that Sentinel fails over
 * (`REDIS_SENTINELS` + `REDIS_SENTINEL_NAME`).
 */
export type RedisTopology =
  | { kind: 'standalone'; url: string }
  | { kind: 'cluster'; nodes: RedisNode[] }
  | { kind: 'sentinel'; sentinels: RedisNode[]; name: string };

/** How to reach and authenticate to Redis, whatever the topology (managed services want TLS and ACL users). */
export interface RedisConnectionConfig {
  topology: RedisTopology;
  /** ACL user and password of the data nodes (a REDIS_URL may carry its own; these win). */
  username?: string;
  password?: string;
  /** Sentinels' own credentials, when they require some. */
  sentinelUsername?: string;
  sentinelPassword?: string;
  /** TLS to the data nodes (and to the sentinels). A `rediss://` URL implies it. */
  tls: boolean;
  /** Longest wait for a TCP (and TLS) connection to be established. */
  connectTimeoutMs: number;
}

/** Parses `host:port,host:port` (IPv6 hosts in brackets); undefined when the list is not well-formed. */
export function parseRedisNodes(list: string): RedisNode[] | undefined {
  const nodes: RedisNode[] = [];
  for (const entry of list.split(',').map((item) => item.trim())) {
    const match = /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+):(\d{1,5})$/.exec(entry);
    if (!match) return undefined;
    const port = Number(match[2]);
    if (port < 1 || port > 65535) return undefined;
    nodes.push({ host: match[1].replace(/^\[|\]$/g, ''), port });
  }
  return nodes.length > 0 ? nodes : undefined;
}

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
  const chosen = (['REDIS_URL', 'REDIS_CLUSTER_NODES', 'REDIS_SENTINELS'] as const).filter(
    (name) => e[name] !== undefined,
  );
  if (chosen.length > 1) {
    throw new ConfigurationError(
      `Invalid configuration: set only one of REDIS_URL, REDIS_CLUSTER_NODES and REDIS_SENTINELS (got ${chosen.join(' and ')})`,
    );
  }
  if (e.REDIS_SENTINELS !== undefined && e.REDIS_SENTINEL_NAME === undefined) {
    throw new ConfigurationError(
      'Invalid configuration: REDIS_SENTINELS needs REDIS_SENTINEL_NAME, the name the sentinels monitor the primary under',
    );
  }
  if (e.REDIS_SENTINEL_NAME !== undefined && e.REDIS_SENTINELS === undefined) {
    throw new ConfigurationError('Invalid configuration: REDIS_SENTINEL_NAME is set but REDIS_SENTINELS is not');
  }
  const sentinelOnly = (['REDIS_SENTINEL_USERNAME', 'REDIS_SENTINEL_PASSWORD'] as const).find(
    (name) => e[name] !== undefined,
  );
  if (sentinelOnly && e.REDIS_SENTINELS === undefined) {
    throw new ConfigurationError(`Invalid configuration: ${sentinelOnly} is set but REDIS_SENTINELS is not`);
  }
  let topology: RedisTopology;
  if (e.REDIS_URL !== undefined) topology = { kind: 'standalone', url: e.REDIS_URL };
  else if (e.REDIS_CLUSTER_NODES !== undefined)
    topology = { kind: 'cluster', nodes: parseRedisNodes(e.REDIS_CLUSTER_NODES)! };
  else if (e.REDIS_SENTINELS !== undefined)
    topology = { kind: 'sentinel', sentinels: parseRedisNodes(e.REDIS_SENTINELS)!, name: e.REDIS_SENTINEL_NAME! };
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
