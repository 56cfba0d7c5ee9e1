#!/usr/bin/env node
/**
 * `npm run bench`: one run, on this machine, of what the gateway adds to a request.
 * Starts PostgreSQL/Redis if needed, builds, starts the pets service, the gateway (Redis-backed limits), the
 * peer gateway (bench/peer-gateway.js: fastify + @fastify/reply-from + @fastify/rate-limit on Redis) and nginx
 * as a bare keep-alive reverse proxy, seeds data, drives load with autocannon after a warm-up, and prints
 * throughput, latency, CPU time per request of the proxying process, peak memory and the ratios. Servers run
 * on core 0, the load generator on core 1.
 * The compared targets (GET: pets direct, gateway, peer, nginx; POST: gateway, peer) are alternated: one warm-up
 * each, then --rounds rounds of --round-duration seconds in which every target takes its turn (the order reversed
 * every other round, ABCD DCBA ...), so that a change in the machine's load hits every target alike; the figures
 * are the medians of the rounds, with the spread ((max - min) / median) each saw, and the ratios come from the
 * medians.
 * Options: --no-build, --rounds N (default 9), --round-duration SECONDS (default 3), --warmup SECONDS (of each
 * alternated target, default 6), --duration SECONDS (default
 * 8: the scenarios that are not alternated, i.e. the fixed rate and (e), (f)), --connections N (default 32),
 * --paging-only (only the 1,000,000-row paging scenarios (f) and their query plans), --fixed-rate N (only the
 * fixed-rate scenario, at N req/s), --services-core N (move the machine's PostgreSQL and Redis to core N for the
 * run: on two cores, the load's core), --gateway-core N (the gateway's core, default the servers'), --no-admission. BENCH_PORT_BASE (4100): the
 * gateway's port; the pets service, nginx and the peer take the next three, the admin API base + 10.
 * Then counts instructions per request of the gateway, the peer and nginx (bench/instructions.js, under callgrind:
 * a figure the machine's load does not move; --no-instructions skips it; two runs each (--instructions-runs N), so it shows
 * its spread) and prints them beside the CPU-time ratios.
 * Then runs bench/admission.js (rate-limit admission on a loaded machine, memory under a flood of addresses).
 */
const { spawnSync } = require('node:child_process');
const { mkdtempSync, mkdirSync, readFileSync, writeFileSync } = require('node:fs');
const { tmpdir } = require('node:os');
const path = require('node:path');
const support = require('./support');
const { pacedLoad } = require('./paced-load');
const { appNodeOptions } = require('../scripts/app-node-options');

const args = process.argv.slice(2);
const {
  SERVER_CORE,
  LOAD_CORE,
  hasTaskset,
  option,
  REDIS_URL,
  PETS_MAIN,
  GATEWAY_MAIN,
  sh,
  ensureLocalServices,
  waitForHttp,
  peakRssMb,
  cpuMicros,
} = support;
const DURATION = Number(option(args, '--duration', '8'));
const ROUNDS = Number(option(args, '--rounds', '9'));
const FIXED_ROUNDS = Number(option(args, '--fixed-rounds', '4'));
const ROUND_SECONDS = Number(option(args, '--round-duration', '3'));
const CONNECTIONS = Number(option(args, '--connections', '32'));
const WARMUP = 3;
/** Warm-up of each alternated target: longer, the gateway's CPU per request still fell over the first rounds after 3 s. */
const ALTERNATED_WARMUP = Number(option(args, '--warmup', '6'));
const PAGING_ONLY = args.includes('--paging-only');
const FIXED_ONLY_RATE = option(args, '--fixed-rate', undefined);
const SERVICES_CORE = option(args, '--services-core', undefined);
const GATEWAY_CORE = option(args, '--gateway-core', SERVER_CORE);
const CURSOR_SECRET = 'bench-cursor-secret-0123456789abcdef';
/** Passed on to bench/instructions.js: --instructions-runs N (its --runs). */
const INSTRUCTION_ARGS = ['--runs', option(args, '--instructions-runs', '2')];

// Pin the load generator (this process) to its own core, once.
support.pinLoadGenerator();

const autocannon = require('autocannon');
const { Client } = require('pg');

const PORT_BASE = Number(process.env.BENCH_PORT_BASE || 4100);
const PORTS = { gateway: PORT_BASE, pets: PORT_BASE + 1, nginx: PORT_BASE + 2, peer: PORT_BASE + 3 };
const RUN = support.runId('bench');
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
    autocannon({ connections: CONNECTIONS, pipelining: 1, ...options }, (error, result) =>
      error ? reject(error) : resolve(result),
    );
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
  const cpuUs =
    pid && result.requests.total > 0 ? Math.round((cpuMicros(pid) - cpuBefore) / result.requests.total) : undefined;
  const bad = result.non2xx + result.errors + result.timeouts;
  const row = {
    label,
    rps: Math.round(result.requests.average),
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: bad,
    requests: result.requests.total,
    cpuUsPerRequest: cpuUs,
  };
  console.log(
    `${label.padEnd(58)} ${String(row.rps).padStart(7)} req/s  p50 ${String(row.p50).padStart(4)} ms  p99 ${String(row.p99).padStart(4)} ms` +
      `${cpuUs === undefined ? '' : `  ${String(cpuUs).padStart(5)} µs CPU/req`}${bad ? `  (${bad} non-2xx/errors)` : ''}`,
  );
  return row;
}

/** What bench/loop-probe.js wrote (a JSON line a second): event-loop delay and GC pauses over the paced rounds. */
function probeSummary(file) {
  const lines = support.probeLines(file);
  const sum = (get) => lines.reduce((total, line) => total + get(line), 0);
  const perSecond = (value) => value / Math.max(lines.length, 1);
  return {
    seconds: lines.length,
    loopDelayP99MedianMs: lines.length ? +support.median(lines.map((line) => line.delay.p99)).toFixed(2) : 0,
    loopDelayMaxMs: Math.max(0, ...lines.map((line) => line.delay.max)),
    gcPerSecond: +perSecond(sum((line) => line.gc.count)).toFixed(1),
    gcPauseMsPerSecond: +perSecond(sum((line) => line.gc.pauseMs)).toFixed(2),
    gcLongestPauseMs: +Math.max(0, ...lines.map((line) => line.gc.maxMs)).toFixed(2),
    gcPauseMsByKind: Object.fromEntries(
      ['minor', 'major', 'incremental', 'weakcb'].map((kind) => [
        kind,
        +sum((line) => line.gc.byKind[kind] ?? 0).toFixed(1),
      ]),
    ),
  };
}

/**
 * "At half its capacity": the direct path and the gateway at the same truly fixed rate (bench/paced-load.js, an
 * open loop: latency from each request's due time), alternated over FIXED_ROUNDS rounds (D G G D ...) of
 * DURATION / 2 seconds each, with the loop probe on in both apps (event-loop delay and GC pauses per second).
 * Returns the medians of the rounds' percentiles for each target and what the probe saw in each app.
 */
async function fixedRate(rate, apps, work, auth) {
  const targets = {
    directFixed: {
      url: `http://127.0.0.1:${PORTS.pets}/pets?limit=20`,
      label: `    pets direct at ${rate} req/s, paced (p99 reference)`,
    },
    gatewayFixed: {
      url: `http://127.0.0.1:${PORTS.gateway}/v1/pets?limit=20`,
      headers: auth,
      label: `    gateway at ${rate} req/s, paced`,
    },
    // The peer at the same rate: what a gateway process on the pets service's core costs the tail by itself.
    peerFixed: {
      url: `http://127.0.0.1:${PORTS.peer}/v1/pets?limit=20`,
      headers: auth,
      label: `    peer at ${rate} req/s, paced`,
    },
  };
  const seconds = Math.max(2, DURATION / 2);
  for (const target of Object.values(targets)) await pacedLoad({ ...target, rate, seconds: WARMUP });
  for (const app of Object.values(apps)) process.kill(app.pid, 'SIGUSR2');
  const rounds = { directFixed: [], gatewayFixed: [], peerFixed: [] };
  for (let r = 0; r < FIXED_ROUNDS; r += 1) {
    const order =
      r % 2 === 0 ? ['directFixed', 'gatewayFixed', 'peerFixed'] : ['peerFixed', 'gatewayFixed', 'directFixed'];
    for (const key of order) rounds[key].push(await pacedLoad({ ...targets[key], rate, seconds }));
  }
  for (const app of Object.values(apps)) process.kill(app.pid, 'SIGUSR2');
  const out = {};
  for (const [key, list] of Object.entries(rounds)) {
    const pick = (field) => +support.median(list.map((one) => one[field])).toFixed(2);
    out[key] = {
      p50: pick('p50'),
      p90: pick('p90'),
      p99: pick('p99'),
      p999: pick('p999'),
      max: Math.max(...list.map((one) => one.max)),
      errors: list.reduce((sum, one) => sum + one.errors, 0),
      rounds: list,
    };
    console.log(
      `${targets[key].label.padEnd(58)} p50 ${out[key].p50} ms  p90 ${out[key].p90} ms  p99 ${out[key].p99} ms (rounds ${list.map((one) => one.p99).join(', ')})  p99.9 ${out[key].p999} ms  max ${out[key].max} ms${out[key].errors ? `  (${out[key].errors} errors)` : ''}`,
    );
  }
  out.fixedRateProbe = {};
  for (const app of Object.keys(apps)) {
    const probe = probeSummary(path.join(work, `loop-${app}.jsonl`));
    out.fixedRateProbe[app] = probe;
    console.log(
      `    ${app} while paced: event-loop delay p99 ${probe.loopDelayP99MedianMs} ms (median of ${probe.seconds} s), max ${probe.loopDelayMaxMs} ms;` +
        ` GC ${probe.gcPerSecond}/s, ${probe.gcPauseMsPerSecond} ms paused per s, longest ${probe.gcLongestPauseMs} ms (ms by kind ${JSON.stringify(probe.gcPauseMsByKind)})`,
    );
  }
  return out;
}

/** The fixed-rate scenario's one-line summary: both p99s and their difference. */
function fixedRateLine(rate, { directFixed, gatewayFixed, peerFixed }) {
  return `fixed rate ${rate}: p99 direct ${directFixed.p99} ms, gateway ${gatewayFixed.p99} ms (difference ${+(gatewayFixed.p99 - directFixed.p99).toFixed(2)} ms), peer ${peerFixed.p99} ms (difference ${+(peerFixed.p99 - directFixed.p99).toFixed(2)} ms)`;
}

/** (max - min) / median of `values`, 0 when the median is 0. */
function spread(values) {
  const middle = support.median(values);
  return middle ? +((Math.max(...values) - Math.min(...values)) / middle).toFixed(3) : 0;
}

/** One measured interval of `seconds` (no warm-up): throughput, latency and the CPU per request of `pid`. */
async function round(options, pid, seconds) {
  const cpuBefore = pid ? cpuMicros(pid) : 0;
  const result = await load({ ...options, duration: seconds });
  const cpuUsPerRequest =
    pid && result.requests.total > 0 ? Math.round((cpuMicros(pid) - cpuBefore) / result.requests.total) : undefined;
  return {
    rps: Math.round(result.requests.total / seconds),
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.non2xx + result.errors + result.timeouts,
    requests: result.requests.total,
    cpuUsPerRequest,
  };
}

/**
 * The targets `{ key, label, options, pid }` in alternation: a warm-up of each, then ROUNDS rounds in which each
 * is measured for ROUND_SECONDS, in order on even rounds and in reverse on odd ones. Returns per key the medians
 * of the rounds (rps, p50, p99, cpuUsPerRequest), the spreads of rps and CPU, and every round's figures.
 */
async function alternate(targets) {
  for (const target of targets) await load({ ...target.options, duration: ALTERNATED_WARMUP });
  const rounds = Object.fromEntries(targets.map((target) => [target.key, []]));
  for (let r = 0; r < ROUNDS; r += 1) {
    const order = r % 2 === 0 ? targets : [...targets].reverse();
    for (const target of order) rounds[target.key].push(await round(target.options, target.pid, ROUND_SECONDS));
    console.log(
      `    round ${r + 1}/${ROUNDS}: ${targets.map((t) => `${t.key} ${rounds[t.key][r].rps}/s${rounds[t.key][r].cpuUsPerRequest === undefined ? '' : ` ${rounds[t.key][r].cpuUsPerRequest} µs`}`).join(', ')}`,
    );
  }
  const rows = {};
  for (const target of targets) {
    const list = rounds[target.key];
    const pick = (field) => list.map((row) => row[field]);
    const cpu = target.pid ? pick('cpuUsPerRequest') : undefined;
    const row = {
      label: target.label,
      rps: Math.round(support.median(pick('rps'))),
      p50: support.median(pick('p50')),
      p99: support.median(pick('p99')),
      errors: pick('errors').reduce((a, b) => a + b, 0),
      requests: pick('requests').reduce((a, b) => a + b, 0),
      cpuUsPerRequest: cpu ? Math.round(support.median(cpu)) : undefined,
      rpsSpread: spread(pick('rps')),
      cpuSpread: cpu ? spread(cpu) : undefined,
      rounds: list,
    };
    rows[target.key] = row;
    console.log(
      `${target.label.padEnd(58)} ${String(row.rps).padStart(7)} req/s (spread ${(row.rpsSpread * 100).toFixed(1).padStart(5)} %)  p50 ${String(row.p50).padStart(4)} ms  p99 ${String(row.p99).padStart(4)} ms` +
        `${row.cpuUsPerRequest === undefined ? '' : `  ${String(row.cpuUsPerRequest).padStart(5)} µs CPU/req (spread ${(row.cpuSpread * 100).toFixed(1)} %)`}${row.errors ? `  (${row.errors} non-2xx/errors)` : ''}`,
    );
  }
  return rows;
}

async function main() {
  ensureLocalServices();
  if (SERVICES_CORE !== undefined) {
    const moved = support.pinServices(SERVICES_CORE);
    console.log(
      `PostgreSQL and Redis moved to core ${SERVICES_CORE} for this run (${moved.length} processes; put back at exit)`,
    );
  }
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
  // The loop probe (bench/loop-probe.js) stays idle until the fixed-rate scenario wakes it.
  const probed = (app) => ({
    NODE_OPTIONS: appNodeOptions(
      `--require ${path.join(__dirname, 'loop-probe.js')} ${process.env.BENCH_APP_NODE_OPTIONS ?? ''}`.trim(),
    ),
    BENCH_LOOP_PROBE_FILE: path.join(work, `loop-${app}.jsonl`),
  });
  // BENCH_NODE_ARGS: flags NODE_OPTIONS refuses (--cpu-prof ...), given to both apps on their command line.
  const nodeArgs = (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const pets = support.startApp(
    children,
    'pets',
    PETS_MAIN,
    { ...common, ...probed('pets'), PETS_PORT: String(PORTS.pets), DATABASE_URL, CURSOR_SECRET },
    { nodeArgs },
  );
  const gateway = support.startApp(
    children,
    'gateway',
    GATEWAY_MAIN,
    {
      ...common,
      ...probed('gateway'),
      PORT: String(PORTS.gateway),
      HOST: '127.0.0.1',
      PETS_URL: `http://127.0.0.1:${PORTS.pets}`,
      REDIS_URL,
      REDIS_KEY_PREFIX: `${RUN}:`,
      GATEWAY_DATABASE_URL: DATABASE_URL,
      ADMIN_PORT: String(PORTS.gateway + 10),
      ADMIN_TOKEN: admin.token,
    },
    { nodeArgs, core: GATEWAY_CORE },
  );
  mkdirSync(path.join(work, 'logs'));
  writeFileSync(
    path.join(work, 'nginx.conf'),
    `worker_processes 1; pid ${work}/nginx.pid; error_log ${work}/logs/error.log warn;
events { worker_connections 1024; }
http { access_log off; client_body_temp_path ${work}; proxy_temp_path ${work};
  upstream pets { server 127.0.0.1:${PORTS.pets}; keepalive 64; }
  server { listen 127.0.0.1:${PORTS.nginx};
    location / { proxy_pass http://pets; proxy_http_version 1.1; proxy_set_header Connection "";
      proxy_set_header Host 127.0.0.1:${PORTS.pets}; } } }
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
  console.log(
    `\n${CONNECTIONS} connections; compared targets: ${ALTERNATED_WARMUP} s warm-up each, then ${ROUNDS} alternated rounds of ${ROUND_SECONDS} s (medians, spread = (max - min) / median);` +
      ` other scenarios ${WARMUP} s warm-up + ${DURATION} s; servers on core ${SERVER_CORE}, load on core ${LOAD_CORE}${hasTaskset ? '' : ' (taskset missing: not pinned)'}\n`,
  );
  if (FIXED_ONLY_RATE !== undefined) {
    const rate = Number(FIXED_ONLY_RATE);
    const fixed = await fixedRate(rate, { pets, gateway }, work, auth);
    console.log(fixedRateLine(`${rate} req/s`, fixed));
    const placement = {
      servicesCore: SERVICES_CORE ?? null,
      gatewayCore: GATEWAY_CORE,
      appNodeOptions: process.env.BENCH_APP_NODE_OPTIONS ?? '',
      nodeArgs,
    };
    support.writeResults('fixed-rate.json', { date: new Date().toISOString(), rate, ...placement, ...fixed });
    await db.end();
    await database.drop();
    return;
  }
  if (!PAGING_ONLY) {
    const post = (port) => ({
      url: `http://127.0.0.1:${port}/v1/pets`,
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Bench', categoryId: 1, status: 'pending' }),
    });
    console.log('GET, alternated:');
    Object.assign(
      results,
      await alternate([
        {
          key: 'direct',
          label: '(a) pets direct      GET /pets?limit=20',
          options: { url: `http://127.0.0.1:${PORTS.pets}/pets?limit=20` },
          pid: pets.pid,
        },
        {
          key: 'gateway',
          label: '(b) gateway          GET /v1/pets?limit=20 (key, Redis)',
          options: { url: `http://127.0.0.1:${PORTS.gateway}/v1/pets?limit=20`, headers: auth },
          pid: gateway.pid,
        },
        {
          key: 'peer',
          label: '(b) peer (fastify)   GET /v1/pets?limit=20 (key, Redis)',
          options: { url: `http://127.0.0.1:${PORTS.peer}/v1/pets?limit=20`, headers: auth },
          pid: peer.pid,
        },
        {
          key: 'nginx',
          label: '(c) nginx -> pets    GET /pets?limit=20',
          options: { url: `http://127.0.0.1:${PORTS.nginx}/pets?limit=20` },
          pid: nginx.pid,
        },
      ]),
    );
    console.log('POST, alternated:');
    Object.assign(
      results,
      await alternate([
        { key: 'post', label: '(d) gateway          POST /v1/pets', options: post(PORTS.gateway), pid: gateway.pid },
        { key: 'peerPost', label: '(d) peer (fastify)   POST /v1/pets', options: post(PORTS.peer), pid: peer.pid },
      ]),
    );
    // "At half its capacity": the same fixed rate on the direct path and through the gateway, half of (b).
    const RATE = Math.max(1, Math.round(results.gateway.rps / 2));
    results.fixedRate = RATE;
    Object.assign(results, await fixedRate(RATE, { pets, gateway }, work, auth));

    await db.query('TRUNCATE pets');
    await seed(1_000);
    await db.query('ANALYZE pets');
    results.list1k = await measure('(e) pets direct      GET /pets?status=available&limit=100, 1,000 rows', {
      url: listUrl,
    });
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
  const {
    rows: [deep],
  } = await db.query('SELECT min(id) AS first FROM pets');
  const deepId = Number(deep.first) + 900_000;
  const pages = {
    all: { first: '/pets?limit=20', deep: `/pets?limit=20&after=${codec.encode({ lastId: deepId, status: null })}` },
    available: {
      first: '/pets?status=available&limit=100',
      deep: `/pets?status=available&limit=100&after=${codec.encode({ lastId: deepId, status: 'available' })}`,
    },
  };
  for (const [name, { deep: path }] of Object.entries(pages)) {
    const reply = await fetch(`http://127.0.0.1:${PORTS.pets}${path}`);
    const body = await reply.json();
    if (reply.status !== 200 || body.length === 0 || body[0].id <= deepId)
      throw new Error(`deep page ${name}: ${reply.status} ${JSON.stringify(body).slice(0, 200)}`);
  }
  results.pageFirst = await measure('(f) pets direct      GET /pets?limit=20, first page, 1M rows', {
    url: `http://127.0.0.1:${PORTS.pets}${pages.all.first}`,
  });
  results.pageDeep = await measure('(f) pets direct      same, page after 900,000 rows', {
    url: `http://127.0.0.1:${PORTS.pets}${pages.all.deep}`,
  });
  results.pageFirstStatus = await measure('(f) pets direct      ?status=available&limit=100, first page', {
    url: `http://127.0.0.1:${PORTS.pets}${pages.available.first}`,
  });
  results.pageDeepStatus = await measure('(f) pets direct      same, page after 900,000 rows', {
    url: `http://127.0.0.1:${PORTS.pets}${pages.available.deep}`,
  });
  results.pageDeepGateway = await measure('(f) gateway          GET /v1/pets?limit=20, page after 900,000 rows', {
    url: `http://127.0.0.1:${PORTS.gateway}/v1${pages.all.deep}`,
    headers: auth,
  });
  // The plans PostgreSQL chooses for the deep pages (the same statements the service runs, by hand).
  const plans = {};
  for (const [name, [sql, params]] of Object.entries({
    all: ['SELECT id, name, category_id, status FROM pets WHERE id > $1 ORDER BY id ASC LIMIT 21', [deepId]],
    available: [
      'SELECT id, name, category_id, status FROM pets WHERE status = $1 AND id > $2 ORDER BY id ASC LIMIT 101',
      ['available', deepId],
    ],
  })) {
    const { rows } = await db.query(`EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) ${sql}`, params);
    plans[name] = rows.map((row) => row['QUERY PLAN']);
    console.log(`\n    EXPLAIN ${sql} (${params.join(', ')})\n      ${plans[name].join('\n      ')}`);
  }

  const memory = {
    pets: peakRssMb(pets.pid),
    gateway: peakRssMb(gateway.pid),
    peer: peakRssMb(peer.pid),
    nginx: peakRssMb(nginx.pid),
  };
  const ratios = PAGING_ONLY
    ? {}
    : {
        gatewayOverDirectThroughput: +(results.gateway.rps / results.direct.rps).toFixed(2),
        gatewayOverNginxThroughput: +(results.gateway.rps / results.nginx.rps).toFixed(2),
        gatewayOverPeerGet: +(results.gateway.rps / results.peer.rps).toFixed(2),
        gatewayOverPeerPost: +(results.post.rps / results.peerPost.rps).toFixed(2),
        gatewayCpuOverPeerCpu: +(results.gateway.cpuUsPerRequest / results.peer.cpuUsPerRequest).toFixed(2),
        gatewayCpuOverPeerCpuPost: +(results.post.cpuUsPerRequest / results.peerPost.cpuUsPerRequest).toFixed(2),
        gatewayCpuOverNginxCpu: +(results.gateway.cpuUsPerRequest / results.nginx.cpuUsPerRequest).toFixed(2),
        gatewayP99MinusDirectP99AtFixedRateMs: +(results.gatewayFixed.p99 - results.directFixed.p99).toFixed(2),
        peerP99MinusDirectP99AtFixedRateMs: +(results.peerFixed.p99 - results.directFixed.p99).toFixed(2),
        list1mOver1kLatencyP50: +(results.list1m.p50 / Math.max(results.list1k.p50, 0.01)).toFixed(2),
        list1mOver1kThroughput: +(results.list1k.rps / results.list1m.rps).toFixed(2),
      };
  Object.assign(ratios, {
    deepPageOverFirstLatencyP50: +(results.pageDeep.p50 / Math.max(results.pageFirst.p50, 0.01)).toFixed(2),
    deepPageOverFirstThroughput: +(results.pageFirst.rps / results.pageDeep.rps).toFixed(2),
    deepStatusPageOverFirstLatencyP50: +(
      results.pageDeepStatus.p50 / Math.max(results.pageFirstStatus.p50, 0.01)
    ).toFixed(2),
    deepStatusPageOverFirstThroughput: +(results.pageFirstStatus.rps / results.pageDeepStatus.rps).toFixed(2),
  });
  console.log(
    `\npeak resident memory: pets ${memory.pets} MB, gateway ${memory.gateway} MB, peer ${memory.peer} MB, nginx ${memory.nginx} MB`,
  );
  if (!PAGING_ONLY) {
    const cpu = (row) => `${row.cpuUsPerRequest} µs`;
    console.log(
      `CPU per request (utime+stime of the answering process over the measured interval / its requests): GET gateway ${cpu(results.gateway)},` +
        ` peer ${cpu(results.peer)}, nginx ${cpu(results.nginx)}, pets direct ${cpu(results.direct)}; POST gateway ${cpu(results.post)}, peer ${cpu(results.peerPost)}`,
    );
    console.log(
      `CPU per request, gateway next to the peer (medians of ${ROUNDS} rounds): GET ${cpu(results.gateway)} vs ${cpu(results.peer)} (${(results.gateway.cpuUsPerRequest / results.peer.cpuUsPerRequest).toFixed(2)} ×),` +
        ` POST ${cpu(results.post)} vs ${cpu(results.peerPost)} (${(results.post.cpuUsPerRequest / results.peerPost.cpuUsPerRequest).toFixed(2)} ×)`,
    );
    const spreads = ['direct', 'gateway', 'peer', 'nginx', 'post', 'peerPost'].map(
      (key) =>
        `${key} ${(results[key].rpsSpread * 100).toFixed(1)} %${results[key].cpuSpread === undefined ? '' : ` / ${(results[key].cpuSpread * 100).toFixed(1)} %`}`,
    );
    console.log(`spread of the rounds (max - min) / median, throughput / CPU per request: ${spreads.join(', ')}`);
    console.log(fixedRateLine(`${results.fixedRate} req/s (half of (b))`, results));
  }
  // The same ratios paired round by round (both targets measured within seconds of each other), then the median:
  // a drift of the machine over the run cancels out of each round's ratio.
  const paired = PAGING_ONLY
    ? {}
    : Object.fromEntries(
        Object.entries({
          gatewayOverNginxThroughput: ['gateway', 'nginx', 'rps'],
          gatewayOverPeerGet: ['gateway', 'peer', 'rps'],
          gatewayOverPeerPost: ['post', 'peerPost', 'rps'],
          gatewayCpuOverPeerCpu: ['gateway', 'peer', 'cpuUsPerRequest'],
          gatewayCpuOverPeerCpuPost: ['post', 'peerPost', 'cpuUsPerRequest'],
        }).map(([name, [a, b, field]]) => {
          const perRound = results[a].rounds.map((row, r) => row[field] / results[b].rounds[r][field]);
          return [
            name,
            {
              median: +support.median(perRound).toFixed(2),
              spread: spread(perRound),
              rounds: perRound.map((value) => +value.toFixed(3)),
            },
          ];
        }),
      );
  if (!PAGING_ONLY) {
    console.log("paired ratios (each round's ratio, then the median; spread = (max - min) / median):");
    for (const [name, { median, spread: range }] of Object.entries(paired))
      console.log(`  ${name.padEnd(40)} ${median}  (spread ${(range * 100).toFixed(1)} %)`);
  }
  console.log('ratios (from the medians):');
  for (const [name, value] of Object.entries(ratios)) console.log(`  ${name.padEnd(40)} ${value}`);
  const instructions = PAGING_ONLY || args.includes('--no-instructions') ? undefined : await countInstructions();
  if (instructions) {
    const per = (key) => instructions.results[key].perRequest;
    Object.assign(ratios, {
      gatewayInstructionsOverPeer: +(per('gateway') / per('peer')).toFixed(2),
      gatewayInstructionsOverNginx: +(per('gateway') / per('nginx')).toFixed(2),
    });
    console.log('instructions per request beside CPU time per request (gateway / peer, gateway / nginx, GET):');
    console.log(
      `  instructions ${ratios.gatewayInstructionsOverPeer} × and ${ratios.gatewayInstructionsOverNginx} ×;` +
        ` CPU time ${ratios.gatewayCpuOverPeerCpu} × and ${ratios.gatewayCpuOverNginxCpu} ×` +
        ` (gateway ${instructions.results.gateway.perRequest.toLocaleString('en-US')}, peer ${instructions.results.peer.perRequest.toLocaleString('en-US')}, nginx ${instructions.results.nginx.perRequest.toLocaleString('en-US')} instructions)`,
    );
  }
  const report = {
    date: new Date().toISOString(),
    machine: { cpus: require('node:os').cpus().length, node: process.version },
    connections: CONNECTIONS,
    durationSeconds: DURATION,
    rounds: ROUNDS,
    roundSeconds: ROUND_SECONDS,
    results,
    memory,
    ratios,
    pairedRatios: paired,
    instructions: instructions?.results,
    plans,
  };
  support.writeResults('latest.json', report);
  await db.end();
  await database.drop();
}

/**
 * Instructions per request of the gateway, the peer and nginx (bench/instructions.js, its own processes under
 * callgrind while this run's servers idle), or undefined when callgrind is missing (said why).
 */
async function countInstructions() {
  const { callgrindMissing } = require('./instructions');
  const missing = callgrindMissing();
  if (missing) {
    console.log(`instructions per request: skipped, ${missing}`);
    return undefined;
  }
  console.log('\ninstructions per request (bench/instructions.js):');
  const status = await support.runScript(children, path.join(__dirname, 'instructions.js'), [
    '--no-build',
    ...INSTRUCTION_ARGS,
  ]);
  if (status !== 0) throw new Error('bench/instructions.js failed');
  return JSON.parse(readFileSync(path.join(__dirname, 'results', 'instructions.json'), 'utf8'));
}

support.stopOnExit(children);
main()
  .then(async () => {
    support.stopAll(children);
    await support.sleep(500);
    if (args.includes('--no-admission') || PAGING_ONLY || FIXED_ONLY_RATE !== undefined) process.exit(0);
    const status = await support.runScript(children, path.join(__dirname, 'admission.js'), ['--no-build']);
    process.exit(status ?? 1);
  })
  .catch((error) => {
    console.error(error);
    process.exit(1);
  });
