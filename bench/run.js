#!/usr/bin/env node
/**
 * `npm run bench`: one run, on this machine, of what the gateway adds to a request.
 * Starts PostgreSQL/Redis if needed, builds, starts the pets service, the gateway (Redis-backed limits), the
 * peer gateway (bench/peer-gateway.js: fastify + @fastify/reply-from + @fastify/rate-limit on Redis) and nginx
 * as a bare keep-alive reverse proxy, seeds data, drives load with autocannon after a warm-up, and prints
 * throughput, latency, CPU time per request of the proxying process, peak memory and the ratios. Servers run
 * on core 0, the load generator on core 1.
 * Options: --no-build, --duration SECONDS (default 8), --connections N (default 32), --paging-only (only the
 * 1,000,000-row paging scenarios (f) and their query plans), --no-admission. BENCH_PORT_BASE (4100): the
 * gateway's port; the pets service, nginx and the peer take the next three, the admin API base + 10.
 * Then runs bench/admission.js (rate-limit admission on a loaded machine, memory under a flood of addresses).
 */
const { spawnSync } = require('node:child_process');
const { mkdtempSync, writeFileSync, mkdirSync } = require('node:fs');
const { tmpdir } = require('node:os');
const path = require('node:path');
const support = require('./support');

const args = process.argv.slice(2);
const { SERVER_CORE, LOAD_CORE, hasTaskset, option, REDIS_URL, PETS_MAIN, GATEWAY_MAIN, sh, ensureLocalServices, waitForHttp, peakRssMb, cpuMicros } = support;
const DURATION = Number(option(args, '--duration', '8'));
const CONNECTIONS = Number(option(args, '--connections', '32'));
const WARMUP = 3;
const PAGING_ONLY = args.includes('--paging-only');
const CURSOR_SECRET = 'bench-cursor-secret-0123456789abcdef';

// Pin the load generator (this process) to its own core, once.
support.pinLoadGenerator(__filename, args);

const autocannon = require('autocannon');
const { Client } = require('pg');

const PORT_BASE = Number(process.env.BENCH_PORT_BASE || 4100);
const PORTS = { gateway: PORT_BASE, pets: PORT_BASE + 1, nginx: PORT_BASE + 2, peer: PORT_BASE + 3 };
const RUN = `bench_${Date.now()}`;
const children = [];

function ensureNginx() {
  if (spawnSync('nginx', ['-v']).status === 0) return;
  // A fresh machine has no nginx: install Debian's (as CI does), or say how.
  if (process.getuid && process.getuid() === 0) {
    console.log('installing nginx (apt-get)...');
    sh('apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nginx');
    return;
  }
  throw new Error('nginx is needed for scenario (c): apt-get install nginx');
}

const start = (name, command, commandArgs, env) => support.start(children, name, command, commandArgs, env);

function load(options) {
  return new Promise((resolve, reject) => {
    autocannon({ connections: CONNECTIONS, pipelining: 1, ...options }, (error, result) => (error ? reject(error) : resolve(result)));
  });
}

/**
 * Warm-up, then the measured interval. With `pid` (the process that answers: the gateway, the peer, nginx's
 * master or the pets service), also its CPU time (utime + stime, with its children) over the measured interval
 * divided by the requests completed in it, in microseconds.
 */
async function measure(label, options, pid) {
  await load({ ...options, duration: WARMUP });
  const cpuBefore = pid ? cpuMicros(pid) : 0;
  const result = await load({ ...options, duration: DURATION });
  const cpuUs = pid && result.requests.total > 0 ? Math.round((cpuMicros(pid) - cpuBefore) / result.requests.total) : undefined;
  const bad = result.non2xx + result.errors + result.timeouts;
  const row = { label, rps: Math.round(result.requests.average), p50: result.latency.p50, p99: result.latency.p99, errors: bad, requests: result.requests.total, cpuUsPerRequest: cpuUs };
  console.log(
    `${label.padEnd(58)} ${String(row.rps).padStart(7)} req/s  p50 ${String(row.p50).padStart(4)} ms  p99 ${String(row.p99).padStart(4)} ms` +
      `${cpuUs === undefined ? '' : `  ${String(cpuUs).padStart(5)} µs CPU/req`}${bad ? `  (${bad} non-2xx/errors)` : ''}`,
  );
  return row;
}

async function main() {
  ensureLocalServices();
  ensureNginx();
  support.buildUnlessSkipped(args);
  const database = await support.createRunDatabase('bench');
  const DATABASE_URL = database.url;
  await support.preparePetsDatabase(DATABASE_URL);

  const db = new Client({ connectionString: DATABASE_URL });
  await db.connect();
  const seed = (count) =>
    db.query(
      `INSERT INTO pets (name, category_id, status)
       SELECT 'Pet ' || i, 1 + i % 10, (ARRAY['available','pending','sold',NULL])[1 + i % 4]::pet_status
       FROM generate_series(1, $1) AS i`,
      [count],
    );
  await seed(1_000);
  await db.query('ANALYZE pets');

  const work = mkdtempSync(path.join(tmpdir(), 'petstore-bench-'));
  const admin = { url: `http://127.0.0.1:${PORTS.gateway + 10}`, token: `bench-admin-token-${RUN}-0123456789abcdef` };

  // The apps run with the Node flags every start of this repository gives them, plus BENCH_APP_NODE_OPTIONS.
  const common = { NODE_ENV: 'production', LOG_LEVEL: 'warn' };
  const pets = support.startApp(children, 'pets', PETS_MAIN, { ...common, PETS_PORT: String(PORTS.pets), DATABASE_URL, CURSOR_SECRET });
  const gateway = support.startApp(children, 'gateway', GATEWAY_MAIN, {
    ...common,
    PORT: String(PORTS.gateway),
    HOST: '127.0.0.1',
    PETS_URL: `http://127.0.0.1:${PORTS.pets}`,
    REDIS_URL,
    REDIS_KEY_PREFIX: `${RUN}:`,
    GATEWAY_DATABASE_URL: DATABASE_URL,
    ADMIN_PORT: String(PORTS.gateway + 10),
    ADMIN_TOKEN: admin.token,
  });
  mkdirSync(path.join(work, 'logs'));
  writeFileSync(
    path.join(work, 'nginx.conf'),
    `worker_processes 1; pid ${work}/nginx.pid; error_log ${work}/logs/error.log warn;
events { worker_connections 1024; }
http { access_log off; client_body_temp_path ${work}; proxy_temp_path ${work};
  upstream pets { server 127.0.0.1:${PORTS.pets}; keepalive 64; }
  server { listen 127.0.0.1:${PORTS.nginx};
    location / { proxy_pass http://pets; proxy_http_version 1.1; proxy_set_header Connection ""; } } }
`,
  );
  const nginx = start('nginx', 'nginx', ['-p', work, '-c', path.join(work, 'nginx.conf'), '-g', 'daemon off;'], {});

  await waitForHttp(`http://127.0.0.1:${PORTS.pets}/health/live`);
  await waitForHttp(`http://127.0.0.1:${PORTS.gateway}/health/live`);
  await waitForHttp(`http://127.0.0.1:${PORTS.nginx}/health/live`);
  const key = support.mintKey(admin, '--plan enterprise --name bench --rpm 1000000000 --rpd 1000000000');
  // The peer gateway, started like ours (core 0, production, warn), knows the same key with the same huge limit.
  const peer = start('peer', process.execPath, ['bench/peer-gateway.js'], {
    ...common,
    PORT: String(PORTS.peer),
    HOST: '127.0.0.1',
    PETS_URL: `http://127.0.0.1:${PORTS.pets}`,
    REDIS_URL,
    REDIS_KEY_PREFIX: `${RUN}:peer:`,
    PEER_KEYS: JSON.stringify({ [key]: { consumer: 'bench', perMinute: 1_000_000_000 } }),
  });
  await waitForHttp(`http://127.0.0.1:${PORTS.peer}/health/live`);

  const auth = { authorization: `Bearer ${key}` };
  const results = {};
  const listUrl = `http://127.0.0.1:${PORTS.pets}/pets?status=available&limit=100`;
  console.log(`\n${CONNECTIONS} connections, ${WARMUP} s warm-up + ${DURATION} s per scenario; servers on core ${SERVER_CORE}, load on core ${LOAD_CORE}${hasTaskset ? '' : ' (taskset missing: not pinned)'}\n`);
  if (!PAGING_ONLY) {
    const post = (port) => ({
      url: `http://127.0.0.1:${port}/v1/pets`,
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Bench', categoryId: 1, status: 'pending' }),
    });
    results.direct = await measure('(a) pets direct      GET /pets?limit=20', { url: `http://127.0.0.1:${PORTS.pets}/pets?limit=20` }, pets.pid);
    results.gateway = await measure('(b) gateway          GET /v1/pets?limit=20 (key, Redis)', { url: `http://127.0.0.1:${PORTS.gateway}/v1/pets?limit=20`, headers: auth }, gateway.pid);
    results.peer = await measure('(b) peer (fastify)   GET /v1/pets?limit=20 (key, Redis)', { url: `http://127.0.0.1:${PORTS.peer}/v1/pets?limit=20`, headers: auth }, peer.pid);
    results.nginx = await measure('(c) nginx -> pets    GET /pets?limit=20', { url: `http://127.0.0.1:${PORTS.nginx}/pets?limit=20` }, nginx.pid);
    results.post = await measure('(d) gateway          POST /v1/pets', post(PORTS.gateway), gateway.pid);
    results.peerPost = await measure('(d) peer (fastify)   POST /v1/pets', post(PORTS.peer), peer.pid);
    // "At half its capacity": the same fixed rate on the direct path and through the gateway, half of (b).
    const RATE = Math.max(1, Math.round(results.gateway.rps / 2));
    results.fixedRate = RATE;
    results.directFixed = await measure(`    pets direct at ${RATE} req/s (p99 reference)`, { url: `http://127.0.0.1:${PORTS.pets}/pets?limit=20`, overallRate: RATE, connections: 8 });
    results.gatewayFixed = await measure(`    gateway at ${RATE} req/s`, { url: `http://127.0.0.1:${PORTS.gateway}/v1/pets?limit=20`, headers: auth, overallRate: RATE, connections: 8 });

    await db.query('TRUNCATE pets');
    await seed(1_000);
    await db.query('ANALYZE pets');
    results.list1k = await measure('(e) pets direct      GET /pets?status=available&limit=100, 1,000 rows', { url: listUrl });
  }
  console.log('    seeding 1,000,000 rows...');
  if (PAGING_ONLY) await db.query('TRUNCATE pets');
  await seed(PAGING_ONLY ? 1_000_000 : 999_000);
  await db.query('VACUUM ANALYZE pets');
  if (!PAGING_ONLY) results.list1m = await measure('(e) pets direct      same, 1,000,000 rows', { url: listUrl });

  // (f) keyset paging: the first page against a page past 900,000 rows, at 1,000,000 rows. The cursor is minted
  // with the service's own codec and secret, as if 9,000 pages had been followed.
  const { PageCursorCodec } = require('../dist/apps/pets/apps/pets/src/pets/page-cursor.js');
  const codec = new PageCursorCodec(CURSOR_SECRET);
  const { rows: [deep] } = await db.query('SELECT min(id) AS first FROM pets');
  const deepId = Number(deep.first) + 900_000;
  const pages = {
    all: { first: '/pets?limit=20', deep: `/pets?limit=20&after=${codec.encode({ lastId: deepId, status: null })}` },
    available: { first: '/pets?status=available&limit=100', deep: `/pets?status=available&limit=100&after=${codec.encode({ lastId: deepId, status: 'available' })}` },
  };
  for (const [name, { deep: path }] of Object.entries(pages)) {
    const reply = await fetch(`http://127.0.0.1:${PORTS.pets}${path}`);
    const body = await reply.json();
    if (reply.status !== 200 || body.length === 0 || body[0].id <= deepId) throw new Error(`deep page ${name}: ${reply.status} ${JSON.stringify(body).slice(0, 200)}`);
  }
  results.pageFirst = await measure('(f) pets direct      GET /pets?limit=20, first page, 1M rows', { url: `http://127.0.0.1:${PORTS.pets}${pages.all.first}` });
  results.pageDeep = await measure('(f) pets direct      same, page after 900,000 rows', { url: `http://127.0.0.1:${PORTS.pets}${pages.all.deep}` });
  results.pageFirstStatus = await measure('(f) pets direct      ?status=available&limit=100, first page', { url: `http://127.0.0.1:${PORTS.pets}${pages.available.first}` });
  results.pageDeepStatus = await measure('(f) pets direct      same, page after 900,000 rows', { url: `http://127.0.0.1:${PORTS.pets}${pages.available.deep}` });
  results.pageDeepGateway = await measure('(f) gateway          GET /v1/pets?limit=20, page after 900,000 rows', { url: `http://127.0.0.1:${PORTS.gateway}/v1${pages.all.deep}`, headers: auth });
  // The plans PostgreSQL chooses for the deep pages (the same statements the service runs, by hand).
  const plans = {};
  for (const [name, [sql, params]] of Object.entries({
    all: ['SELECT id, name, category_id, status FROM pets WHERE id > $1 ORDER BY id ASC LIMIT 21', [deepId]],
    available: ['SELECT id, name, category_id, status FROM pets WHERE status = $1 AND id > $2 ORDER BY id ASC LIMIT 101', ['available', deepId]],
  })) {
    const { rows } = await db.query(`EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) ${sql}`, params);
    plans[name] = rows.map((row) => row['QUERY PLAN']);
    console.log(`\n    EXPLAIN ${sql} (${params.join(', ')})\n      ${plans[name].join('\n      ')}`);
  }

  const memory = { pets: peakRssMb(pets.pid), gateway: peakRssMb(gateway.pid), peer: peakRssMb(peer.pid), nginx: peakRssMb(nginx.pid) };
  const ratios = PAGING_ONLY ? {} : {
    gatewayOverDirectThroughput: +(results.gateway.rps / results.direct.rps).toFixed(2),
    gatewayOverNginxThroughput: +(results.gateway.rps / results.nginx.rps).toFixed(2),
    gatewayOverPeerGet: +(results.gateway.rps / results.peer.rps).toFixed(2),
    gatewayOverPeerPost: +(results.post.rps / results.peerPost.rps).toFixed(2),
    gatewayCpuOverPeerCpu: +(results.gateway.cpuUsPerRequest / results.peer.cpuUsPerRequest).toFixed(2),
    gatewayCpuOverNginxCpu: +(results.gateway.cpuUsPerRequest / results.nginx.cpuUsPerRequest).toFixed(2),
    gatewayP99MinusDirectP99AtFixedRateMs: +(results.gatewayFixed.p99 - results.directFixed.p99).toFixed(2),
    list1mOver1kLatencyP50: +(results.list1m.p50 / Math.max(results.list1k.p50, 0.01)).toFixed(2),
    list1mOver1kThroughput: +(results.list1k.rps / results.list1m.rps).toFixed(2),
  };
  Object.assign(ratios, {
    deepPageOverFirstLatencyP50: +(results.pageDeep.p50 / Math.max(results.pageFirst.p50, 0.01)).toFixed(2),
    deepPageOverFirstThroughput: +(results.pageFirst.rps / results.pageDeep.rps).toFixed(2),
    deepStatusPageOverFirstLatencyP50: +(results.pageDeepStatus.p50 / Math.max(results.pageFirstStatus.p50, 0.01)).toFixed(2),
    deepStatusPageOverFirstThroughput: +(results.pageFirstStatus.rps / results.pageDeepStatus.rps).toFixed(2),
  });
  console.log(`\npeak resident memory: pets ${memory.pets} MB, gateway ${memory.gateway} MB, peer ${memory.peer} MB, nginx ${memory.nginx} MB`);
  if (!PAGING_ONLY) {
    const cpu = (row) => `${row.cpuUsPerRequest} µs`;
    console.log(
      `CPU per request (utime+stime of the answering process over the measured interval / its requests): GET gateway ${cpu(results.gateway)},` +
        ` peer ${cpu(results.peer)}, nginx ${cpu(results.nginx)}, pets direct ${cpu(results.direct)}; POST gateway ${cpu(results.post)}, peer ${cpu(results.peerPost)}`,
    );
    console.log(`fixed rate ${results.fixedRate} req/s (half of (b)): p99 direct ${results.directFixed.p99} ms, gateway ${results.gatewayFixed.p99} ms, difference ${+(results.gatewayFixed.p99 - results.directFixed.p99).toFixed(2)} ms`);
  }
  console.log('ratios:');
  for (const [name, value] of Object.entries(ratios)) console.log(`  ${name.padEnd(40)} ${value}`);
  const report = { date: new Date().toISOString(), machine: { cpus: require('node:os').cpus().length, node: process.version }, connections: CONNECTIONS, durationSeconds: DURATION, results, memory, ratios, plans };
  support.writeResults('latest.json', report);
  await db.end();
  await database.drop();
}

support.stopOnExit(children);
main()
  .then(async () => {
    support.stopAll(children);
    await support.sleep(500);
    if (args.includes('--no-admission') || PAGING_ONLY) process.exit(0);
    const admission = spawnSync(process.execPath, [path.join(__dirname, 'admission.js'), '--no-build'], { stdio: 'inherit', env: process.env });
    process.exit(admission.status ?? 1);
  })
  .catch((error) => {
    console.error(error);
    process.exit(1);
  });
