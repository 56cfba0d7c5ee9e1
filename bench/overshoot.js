#!/usr/bin/env node
/**
 * `npm run bench:overshoot`: how far over its limit a burst gets through several gateway instances (issue #39
 * point 7; no vendor publishes it). For each Redis topology (one Redis: the local one on REDIS_URL under a prefix of
 * the run's own; a Cluster of three masters of the bench's own) and each number of instances (--instances, 1,2,4),
 * the stack `npm run stack` runs (scripts/stack/start-stack.js: the pets service, the gateways sharing Redis and a
 * fresh consumers database, nginx in front with the balancer's rules); then for each burst size (--bursts,
 * 200,1000,5000) a fresh consumer whose per-day limit is --limit (100) gets the whole burst at once (the day
 * window: the same atomic script as the minute's, and no burst outlasts it, however loaded the machine):
 *   - "direct": the requests spread round robin over the instances' own ports;
 *   - "balancer": every request through nginx (round robin over the same instances).
 * Each burst is sent over --connections (200) keep-alive connections in all, every request queued at once; the
 * figure is admitted minus the limit (target 0). Admitted: every answer but 429 that carries the RateLimit-Policy
 * header the gateway sets once the limiter let the request through (a 504 from a starved pets service passed the
 * limit; a 503 without the header did not reach it); every status is printed beside it.
 * Options: --no-build, --limit N, --instances 1,2,4, --bursts 200,1000,5000, --topologies redis,cluster,
 * --connections N. BENCH_PORT_BASE (4100) + 100.. for the stack's ports. Writes bench/results/overshoot.json.
 */
const { mkdtempSync, rmSync } = require('node:fs');
const { tmpdir } = require('node:os');
const path = require('node:path');
const { performance } = require('node:perf_hooks');
const support = require('./support');
const { redisCluster } = require('./redis-servers');

const { option, REDIS_URL } = support;
const args = process.argv.slice(2);
const LIMIT = Number(option(args, '--limit', '100'));
const INSTANCES = option(args, '--instances', '1,2,4').split(',').map(Number);
const BURSTS = option(args, '--bursts', '200,1000,5000').split(',').map(Number);
const TOPOLOGIES = option(args, '--topologies', 'redis,cluster').split(',');
const CONNECTIONS = Number(option(args, '--connections', '200'));
const PORT_BASE = Number(process.env.BENCH_PORT_BASE || 4100) + 100;

support.pinLoadGenerator();

const { Pool } = require('undici');
const children = [];

/** `n` GET /v1/pets?limit=1 with `key`, all queued at once, round robin over `origins`; the statuses counted. */
async function burst(origins, key, n) {
  const perOrigin = Math.max(1, Math.ceil(CONNECTIONS / origins.length));
  const pools = origins.map((origin) => new Pool(origin, { connections: perOrigin, pipelining: 1 }));
  const statuses = {};
  const started = performance.now();
  await Promise.all(
    Array.from({ length: n }, (_, i) =>
      pools[i % pools.length]
        .request({ path: '/v1/pets?limit=1', method: 'GET', headers: { authorization: `Bearer ${key}` } })
        .then(async (answer) => {
          await answer.body.dump();
          const passed = answer.statusCode !== 429 && answer.headers['ratelimit-policy'] !== undefined;
          return `${answer.statusCode}${passed || answer.statusCode === 429 ? '' : ' (no policy header)'}`;
        })
        .catch(() => 'error')
        .then((status) => (statuses[status] = (statuses[status] ?? 0) + 1)),
    ),
  );
  const seconds = (performance.now() - started) / 1000;
  await Promise.all(pools.map((pool) => pool.close()));
  return { statuses, seconds };
}

let consumers = 0;

/** A fresh consumer with LIMIT requests a day (a window no burst outlasts, however slow the machine), made through the admin API of `stack`'s first gateway. */
async function freshKey(stack) {
  consumers += 1;
  const response = await fetch(`${stack.admin.adminUrl}/consumers`, {
    method: 'POST',
    headers: { authorization: `Bearer ${stack.admin.adminToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      plan: 'enterprise',
      name: `overshoot-${process.pid}-${consumers}`,
      limits: { perMinute: 1_000_000_000, perDay: LIMIT },
    }),
  });
  if (!response.ok) throw new Error(`POST /consumers: ${response.status} ${await response.text()}`);
  return (await response.json()).key.key;
}

async function main() {
  support.buildUnlessSkipped(args);
  support.ensureLocalServices();
  const { startStack } = require('../scripts/stack/start-stack');
  const dir = mkdtempSync(path.join(tmpdir(), 'petstore-bench-overshoot-'));
  const rows = [];
  try {
    const topologies = {};
    if (TOPOLOGIES.includes('redis')) topologies.redis = { REDIS_URL };
    if (TOPOLOGIES.includes('cluster'))
      topologies.cluster = {
        REDIS_URL: '',
        REDIS_CLUSTER_NODES: (await redisCluster(children, dir)).map((port) => `127.0.0.1:${port}`).join(','),
      };
    console.log(
      `limit ${LIMIT} a day per consumer; each burst queued at once over ${CONNECTIONS} connections; admitted − limit (target 0)`,
    );
    for (const [topology, redisEnv] of Object.entries(topologies)) {
      for (const instances of INSTANCES) {
        const stack = await startStack({
          env: {
            ...redisEnv,
            GATEWAY_INSTANCES: String(instances),
            LOG_LEVEL: 'error', // not a line per refusal
            STACK_READY_TIMEOUT_MS: '900000', // a loaded machine starts 4 gateways and the portal slowly
            STACK_PORT: String(PORT_BASE),
            STACK_PETS_PORT: String(PORT_BASE + 1),
            STACK_PETS_METRICS_PORT: String(PORT_BASE + 2),
            STACK_PORTAL_PORT: String(PORT_BASE + 3),
            STACK_GATEWAY_PORT_BASE: String(PORT_BASE + 10),
            STACK_ADMIN_PORT_BASE: String(PORT_BASE + 20),
            STACK_METRICS_PORT_BASE: String(PORT_BASE + 30),
            STACK_DIR: path.join(dir, `stack-${topology}-${instances}`),
          },
        });
        try {
          for (const size of BURSTS) {
            for (const [via, origins] of [
              ['direct', stack.gateways.map((g) => `http://127.0.0.1:${g.port}`)],
              ['balancer', [stack.url]],
            ]) {
              const key = await freshKey(stack);
              const { statuses, seconds } = await burst(origins, key, size);
              const admitted = Object.entries(statuses)
                .filter(([status]) => /^\d+$/.test(status) && status !== '429')
                .reduce((sum, [, n]) => sum + n, 0);
              const row = { topology, via, instances, burst: size, limit: LIMIT, admitted, over: admitted - LIMIT };
              Object.assign(row, { statuses, seconds: +seconds.toFixed(1) });
              rows.push(row);
              console.log(
                `  ${topology.padEnd(8)} ${via.padEnd(9)} ${instances} instance(s)  burst ${String(size).padStart(5)}: admitted ${String(admitted).padStart(4)}, over ${String(row.over).padStart(4)}  (${JSON.stringify(statuses)} in ${row.seconds} s)`,
              );
            }
          }
        } finally {
          await stack.stop();
        }
      }
    }
  } finally {
    await support.stopAllAndWait(children);
    rmSync(dir, { recursive: true, force: true });
  }
  printTable(rows);
  support.writeResults('overshoot.json', {
    date: new Date().toISOString(),
    loadAverage: require('node:os').loadavg(),
    limit: LIMIT,
    connections: CONNECTIONS,
    rows,
  });
}

/** Admitted minus limit: a row per topology and path, a column per instances × burst. */
function printTable(rows) {
  const columns = INSTANCES.flatMap((instances) => BURSTS.map((size) => ({ instances, size })));
  console.log(
    `\nadmitted − limit (limit ${LIMIT}); columns: instances × burst\n| | ${columns.map((c) => `${c.instances} × ${c.size.toLocaleString('en-US')}`).join(' | ')} |`,
  );
  console.log(`|---|${columns.map(() => '---').join('|')}|`);
  const lines = new Map();
  for (const row of rows) {
    const label = `${row.topology === 'redis' ? 'Redis' : 'Redis Cluster'}, ${row.via}`;
    if (!lines.has(label)) lines.set(label, {});
    lines.get(label)[`${row.instances}:${row.burst}`] = row.over;
  }
  for (const [label, cells] of lines)
    console.log(`| ${label} | ${columns.map((c) => cells[`${c.instances}:${c.size}`] ?? '').join(' | ')} |`);
}

support.runBench(main, children, 'SIGKILL');
