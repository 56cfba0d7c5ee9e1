/**
 * Private redis-server processes for the benches (never the shared Redis on 6379): one standalone server, or a
 * Cluster of three masters built with `redis-cli --cluster create`. Used by bench/redis-topologies.js and
 * bench/overshoot.js. Each server is started through support.start (pinned to the server core, stopped with the
 * bench's other children).
 */
const { execFileSync } = require('node:child_process');
const path = require('node:path');
const support = require('./support');

const { freePort, until } = support;

/** Runs one Redis command on 127.0.0.1:`port` with a connection of its own; its answer. */
async function onNode(port, ...command) {
  const Redis = require('ioredis');
  const client = new Redis({
    host: '127.0.0.1',
    port,
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  client.on('error', () => undefined);
  try {
    await client.connect();
    return await client.call(...command);
  } finally {
    client.disconnect();
  }
}

/** A redis-server of its own on a free port (no persistence), added to `children`; its port once it answers. */
async function redisServer(children, extra = []) {
  const port = await freePort();
  support.start(children, `redis ${port}`, 'redis-server', [
    '--port',
    String(port),
    '--bind',
    '127.0.0.1',
    '--save',
    '',
    '--appendonly',
    'no',
    ...extra,
  ]);
  await until(`redis-server ${port}`, async () => (await onNode(port, 'PING')) === 'PONG');
  return port;
}

/** A Redis Cluster of three masters, no replicas, its node files in `dir`; the masters' ports once it is ok. */
async function redisCluster(children, dir) {
  const ports = [];
  for (let i = 0; i < 3; i += 1) {
    ports.push(
      await redisServer(children, [
        '--cluster-enabled',
        'yes',
        '--cluster-config-file',
        path.join(dir, `nodes-${i}.conf`),
        '--cluster-port',
        String(await freePort()),
        '--dir',
        dir,
      ]),
    );
  }
  execFileSync(
    'redis-cli',
    ['--cluster', 'create', ...ports.map((p) => `127.0.0.1:${p}`), '--cluster-replicas', '0', '--cluster-yes'],
    { stdio: 'ignore' },
  );
  for (const port of ports)
    await until(`cluster node ${port}`, async () =>
      String(await onNode(port, 'CLUSTER', 'INFO')).includes('cluster_state:ok'),
    );
  return ports;
}

module.exports = { onNode, redisServer, redisCluster };
