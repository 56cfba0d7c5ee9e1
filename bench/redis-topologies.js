#!/usr/bin/env node
/**
 * `npm run bench:redis-topologies`: the gateway's throughput with its counters on one Redis against a Redis
 * Cluster of three masters, in one run, and the Redis commands each gateway request costs.
 *
 * Starts its own redis-server processes on private ports (one standalone, three cluster masters built with
 * `redis-cli --cluster create`, in a temporary folder; never the shared Redis on 6379), the pets service
 * (embedded PGlite) and one gateway per topology (both on a fresh consumers database on the PostgreSQL server of
 * BENCH_DATABASE_URL, dropped at the end), then drives `GET /v1/pets?limit=20` with autocannon (32 connections,
 * 3 s warm-up, --duration seconds, default 8) on an Enterprise key whose limits never trigger, minted through
 * the first gateway's admin API.
 * Servers run on core 0, the load generator on core 1 (as in `npm run bench`); the gateways are loaded one
 * at a time. Commands per request: INFO commandstats on every node of the topology before and after a
 * fixed number of requests (--requests, default 2,000), all commands counted but INFO itself.
 * Options: --no-build, --duration N, --requests N. Results go to bench/results/redis-topologies.json.
 */
const { randomBytes } = require('node:crypto');
const { mkdtempSync, rmSync } = require('node:fs');
const { tmpdir } = require('node:os');
const path = require('node:path');
const support = require('./support');
const { onNode, redisServer, redisCluster } = require('./redis-servers');

const { hasTaskset, option, PETS_MAIN, GATEWAY_MAIN, freePort } = support;
const args = process.argv.slice(2);
const DURATION = Number(option(args, '--duration', '8'));
const REQUESTS = Number(option(args, '--requests', '2000'));
const CONNECTIONS = 32;

support.pinLoadGenerator();

const autocannon = require('autocannon');
const ADMIN_TOKEN = randomBytes(32).toString('base64url');
const children = [];

/** Calls per command on the given nodes, summed (INFO commandstats). */
async function commandStats(ports) {
  const calls = {};
  for (const port of ports) {
    for (const match of String(await onNode(port, 'INFO', 'commandstats')).matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) {
      calls[match[1]] = (calls[match[1]] ?? 0) + Number(match[2]);
    }
  }
  return calls;
}

function load(options) {
  return new Promise((resolve, reject) =>
    autocannon({ connections: CONNECTIONS, pipelining: 1, ...options }, (error, result) =>
      error ? reject(error) : resolve(result),
    ),
  );
}

async function measure(label, gatewayPort, key, ports) {
  const options = {
    url: `http://127.0.0.1:${gatewayPort}/v1/pets?limit=20`,
    headers: { authorization: `Bearer ${key}` },
  };
  await load({ ...options, duration: 3 });
  const result = await load({ ...options, duration: DURATION });
  const bad = result.non2xx + result.errors + result.timeouts;
  const before = await commandStats(ports);
  const counted = await load({ ...options, amount: REQUESTS });
  const after = await commandStats(ports);
  const delta = Object.fromEntries(
    Object.keys(after)
      .filter((name) => name !== 'info')
      .map((name) => [name, after[name] - (before[name] ?? 0)])
      .filter(([, n]) => n > 0),
  );
  const requests = counted.requests.total;
  // Redis counts the commands a script runs in commandstats too: the script's own (GET, PTTL, INCR...) are not
  // round trips. The gateway sends nothing but the script on the request path.
  const insideScript = new Set(['get', 'pttl', 'incr', 'set', 'exists', 'pexpire', 'del']);
  const sent = Object.entries(delta).filter(([name]) => !insideScript.has(name));
  const total = sent.reduce((sum, [, n]) => sum + n, 0);
  const inside = Object.entries(delta)
    .filter(([name]) => insideScript.has(name))
    .reduce((sum, [, n]) => sum + n, 0);
  const row = {
    label,
    rps: Math.round(result.requests.average),
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: bad,
    commandsPerRequest: +(total / requests).toFixed(3),
    commandsInsideScriptPerRequest: +(inside / requests).toFixed(3),
    scriptCallsPerRequest: +(((delta.evalsha ?? 0) + (delta.eval ?? 0)) / requests).toFixed(3),
    commands: delta,
    requests,
  };
  console.log(
    `${label.padEnd(34)} ${String(row.rps).padStart(6)} req/s  p50 ${String(row.p50).padStart(3)} ms  p99 ${String(row.p99).padStart(4)} ms` +
      `  ${row.commandsPerRequest} Redis commands sent per request (${JSON.stringify(Object.fromEntries(sent))} for ${requests} requests;` +
      ` ${row.commandsInsideScriptPerRequest} run inside the script)${bad ? `  (${bad} non-2xx/errors)` : ''}`,
  );
  return row;
}

async function main() {
  support.buildUnlessSkipped(args);
  const dir = mkdtempSync(path.join(tmpdir(), 'petstore-bench-topologies-'));
  try {
    // The consumers database both gateways share.
    await support.withRunDatabase('bench_topologies', children, (database) => compareTopologies(database.url, dir));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Both topologies, their servers' files in `dir`, the gateways' consumers in `databaseUrl`. */
async function compareTopologies(databaseUrl, dir) {
  const single = await redisServer(children);
  const masters = await redisCluster(children, dir);
  const petsPort = await freePort();
  support.startApp(children, 'pets', PETS_MAIN, {
    NODE_ENV: 'production',
    LOG_LEVEL: 'warn',
    PETS_PORT: String(petsPort),
    PGLITE_DATA_DIR: 'memory://',
    CURSOR_SECRET: 'bench-cursor-secret-0123456789abcdef',
  });
  const gateway = async (name, redisEnv) => {
    const [port, adminPort] = [await freePort(), await freePort()];
    support.startApp(children, name, GATEWAY_MAIN, {
      NODE_ENV: 'production',
      LOG_LEVEL: 'warn',
      PORT: String(port),
      HOST: '127.0.0.1',
      PETS_URL: `http://127.0.0.1:${petsPort}`,
      GATEWAY_DATABASE_URL: databaseUrl,
      ADMIN_PORT: String(adminPort),
      ADMIN_TOKEN,
      REDIS_URL: '',
      REDIS_KEY_PREFIX: 'bench:',
      ...redisEnv,
    });
    await support.waitForHttp(`http://127.0.0.1:${port}/health/ready`);
    return { port, adminPort };
  };
  const { port: singlePort, adminPort } = await gateway('gateway (one Redis)', {
    REDIS_URL: `redis://127.0.0.1:${single}`,
  });
  const { port: clusterPort } = await gateway('gateway (cluster)', {
    REDIS_CLUSTER_NODES: masters.map((p) => `127.0.0.1:${p}`).join(','),
  });
  const key = support.mintKey(
    { url: `http://127.0.0.1:${adminPort}`, token: ADMIN_TOKEN },
    '--plan enterprise --name bench --rpm 1000000000 --rpd 1000000000',
  );

  console.log(
    `\nGET /v1/pets?limit=20, ${CONNECTIONS} connections, ${DURATION} s after a 3 s warm-up${hasTaskset ? '' : ' (taskset missing: not pinned)'}`,
  );
  const results = [
    await measure('gateway, one Redis', singlePort, key, [single]),
    await measure('gateway, Redis Cluster (3 masters)', clusterPort, key, masters),
  ];
  const ratio = +(results[1].rps / results[0].rps).toFixed(2);
  console.log(`\ncluster / one Redis throughput: ${ratio}`);
  const report = {
    date: new Date().toISOString(),
    machine: { cpus: require('node:os').cpus().length, node: process.version },
    connections: CONNECTIONS,
    durationSeconds: DURATION,
    results,
    ratio,
  };
  support.writeResults('redis-topologies.json', report);
}

support.runBench(main, children, 'SIGKILL');
