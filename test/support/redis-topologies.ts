import { execFile, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import Redis, { Cluster } from 'ioredis';
import { freePort } from '../../scripts/free-port';
import { until } from '../../scripts/wait';
import { hasRedisServer, OwnRedisServer } from './redis-server';

const run = promisify(execFile);

/** redis-cli builds the cluster (`--cluster create`); Debian's redis-tools ships it beside redis-server. */
export const hasRedisCluster = hasRedisServer && spawnSync('redis-cli', ['--version']).status === 0;
/** Debian's redis-server runs as a sentinel with `--sentinel` (no redis-sentinel package needed). */
export const hasRedisSentinel = hasRedisServer;

function quietClient(port: number): Redis {
  const client = new Redis({
    host: '127.0.0.1',
    port,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    lazyConnect: true,
  });
  client.on('error', () => undefined);
  return client;
}

/** Runs one command on a server of ours and closes the connection. */
export async function command(port: number, ...args: string[]): Promise<unknown> {
  const client = quietClient(port);
  try {
    await client.connect();
    return await client.call(args[0], ...args.slice(1));
  } finally {
    client.disconnect();
  }
}

/**
 * A Redis Cluster of the test's own: `masters` redis-server processes with `--cluster-enabled yes` on private
 * ports (the cluster bus on another private port), in a temporary folder, the slots spread by
 * `redis-cli --cluster create`. No replicas: exactness, not failover, is what a cluster test proves here.
 */
export class OwnRedisCluster {
  private constructor(
    readonly nodes: OwnRedisServer[],
    private readonly dir: string,
  ) {}

  static async start(masters = 3): Promise<OwnRedisCluster> {
    const dir = mkdtempSync(join(tmpdir(), 'petstore-redis-cluster-'));
    const nodes: OwnRedisServer[] = [];
    try {
      for (let i = 0; i < masters; i += 1) {
        nodes.push(
          await OwnRedisServer.start(async (port) => [
            '--cluster-enabled',
            'yes',
            '--cluster-config-file',
            join(dir, `nodes-${port}.conf`),
            '--cluster-port',
            String(await freePort()),
            '--cluster-node-timeout',
            '5000',
            '--dir',
            dir,
          ]),
        );
      }
      await run(
        'redis-cli',
        [
          '--cluster',
          'create',
          ...nodes.map((node) => `127.0.0.1:${node.port}`),
          '--cluster-replicas',
          '0',
          '--cluster-yes',
        ],
        { timeout: 30_000 },
      );
      const cluster = new OwnRedisCluster(nodes, dir);
      for (const node of nodes) {
        await until(
          `cluster node ${node.port}`,
          async () => String(await command(node.port, 'CLUSTER', 'INFO')).includes('cluster_state:ok'),
          20_000,
        );
      }
      return cluster;
    } catch (error) {
      for (const node of nodes) await node.stop();
      rmSync(dir, { recursive: true, force: true });
      throw error;
    }
  }

  /** The value of REDIS_CLUSTER_NODES. */
  get nodeList(): string {
    return this.nodes.map((node) => `127.0.0.1:${node.port}`).join(',');
  }

  /** A cluster client for the test to inspect keys (follows MOVED like the gateway's). */
  client(): Cluster {
    const cluster = new Cluster(this.nodes.map((node) => ({ host: '127.0.0.1', port: node.port })));
    cluster.on('error', () => undefined);
    return cluster;
  }

  async stop(): Promise<void> {
    for (const node of this.nodes) await node.stop();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/**
 * A primary, a replica and three sentinels (quorum 2) of the test's own, on private ports, the sentinels'
 * config files in a temporary folder. Sentinel declares the primary down after `downAfterMs` without an
 * answer, then promotes the replica.
 */
export class OwnSentinelSetup {
  static readonly masterName = 'petstore-limits';

  private constructor(
    readonly servers: OwnRedisServer[],
    readonly sentinels: OwnRedisServer[],
    private readonly dir: string,
  ) {}

  static async start(downAfterMs = 1500): Promise<OwnSentinelSetup> {
    const dir = mkdtempSync(join(tmpdir(), 'petstore-redis-sentinel-'));
    const servers: OwnRedisServer[] = [];
    const sentinels: OwnRedisServer[] = [];
    const name = OwnSentinelSetup.masterName;
    try {
      // In the temporary folder: a replica writes the copy it receives from its primary to disk.
      const primary = await OwnRedisServer.start(() => ['--dir', dir]);
      servers.push(primary);
      servers.push(await OwnRedisServer.start(() => ['--dir', dir, '--replicaof', '127.0.0.1', String(primary.port)]));
      await until(
        'replica in sync',
        async () => String(await command(servers[1].port, 'INFO', 'replication')).includes('master_link_status:up'),
        20_000,
      );
      for (let i = 0; i < 3; i += 1) {
        sentinels.push(
          await OwnRedisServer.start((port) => {
            // A sentinel rewrites its config file as it learns: one file each, in the temporary folder.
            const file = join(dir, `sentinel-${port}.conf`);
            writeFileSync(
              file,
              [
                `port ${port}`,
                'bind 127.0.0.1',
                `dir ${dir}`,
                `sentinel monitor ${name} 127.0.0.1 ${primary.port} 2`,
                `sentinel down-after-milliseconds ${name} ${downAfterMs}`,
                `sentinel failover-timeout ${name} 10000`,
                `sentinel parallel-syncs ${name} 1`,
                '',
              ].join('\n'),
            );
            return [file, '--sentinel'];
          }),
        );
      }
      const setup = new OwnSentinelSetup(servers, sentinels, dir);
      // Every sentinel knows the replica and the two other sentinels: a failover can be agreed on.
      for (const sentinel of sentinels) {
        await until(
          `sentinel ${sentinel.port} ready`,
          async () => {
            const replicas = (await command(sentinel.port, 'SENTINEL', 'REPLICAS', name)) as unknown[];
            const others = (await command(sentinel.port, 'SENTINEL', 'SENTINELS', name)) as unknown[];
            return replicas.length === 1 && others.length === 2;
          },
          30_000,
        );
      }
      return setup;
    } catch (error) {
      for (const server of [...sentinels, ...servers]) await server.stop();
      rmSync(dir, { recursive: true, force: true });
      throw error;
    }
  }

  /** The value of REDIS_SENTINELS. */
  get sentinelList(): string {
    return this.sentinels.map((sentinel) => `127.0.0.1:${sentinel.port}`).join(',');
  }

  /** The port of the current primary, as the sentinels see it. */
  async primaryPort(): Promise<number> {
    const [, port] = (await command(
      this.sentinels[0].port,
      'SENTINEL',
      'GET-MASTER-ADDR-BY-NAME',
      OwnSentinelSetup.masterName,
    )) as string[];
    return Number(port);
  }

  /** The data server (primary or replica) listening on `port`. */
  server(port: number): OwnRedisServer {
    const server = this.servers.find((candidate) => candidate.port === port);
    if (!server) throw new Error(`no server of ours on port ${port}`);
    return server;
  }

  /** Waits until the sentinels name a primary on another port than `oldPort`, and it answers as a master. */
  async waitForFailover(oldPort: number, timeoutMs: number): Promise<number> {
    let port = oldPort;
    await until(
      'failover',
      async () => {
        port = await this.primaryPort();
        return port !== oldPort && String(await command(port, 'ROLE')).startsWith('master');
      },
      timeoutMs,
    );
    return port;
  }

  async stop(): Promise<void> {
    for (const server of [...this.sentinels, ...this.servers]) await server.stop();
    rmSync(this.dir, { recursive: true, force: true });
  }
}
