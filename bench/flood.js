#!/usr/bin/env node
/**
 * `node bench/flood.js` (issue #21 point 3): does a flood of random well-formed keys shut new customers out?
 *
 * On this machine's PostgreSQL (a fresh database) and Redis (a prefix of its own): the pets service and two
 * gateway instances pinned to core 0, the load generator on core 1. Instance A (the admin side) migrates the
 * schema; then --keys valid keys (1,000,000) are seeded through SQL, and instance B, the one under attack
 * (TRUST_PROXY=1), starts with them all in its key filter. Then, each for --duration seconds, every flood
 * between two quiet phases (on a shared machine its p99 is read against the quiet ones around it):
 *   - quiet: a cached Enterprise key at --rate requests per second (open loop; p50/p99);
 *   - flood at the highest rate from --addresses (200) loopback source addresses (127.0.1.x, one keep-alive socket
 *     each, bound with localAddress): random well-formed keys, each socket sending its next one as soon as the
 *     previous answer is read (closed loop: as fast as the gateway answers), with the same cached-key probe and
 *     --fresh (20) keys created on A during the flood, each sent once to B at once (accepted or not, no retry);
 *   - the same through one trusted proxy: TRUST_PROXY=1 and a different X-Forwarded-For on every request (never
 *     the same address twice: nothing is ever banned);
 *   - a fixed-rate flood (open loop) at --flood-rate, by default half the highest rate measured, from 200 other
 *     loopback addresses (127.0.2.x).
 * Reports per phase: flood requests per second and statuses, B's database queries and key-cache outcomes (its
 * /metrics), fresh keys accepted, p50/p99 of the cached key, B's CPU per request, the load average; B's key
 * filter (keys, bytes, build time at start and of the catch-up build); and a filter of 1,000,000 keys built in a
 * child process (bytes, memory measured after a full GC, false-positive rate on 1,000,000 other hashes and the
 * time of a lookup).
 * Options: --no-build, --keys N, --duration S (8), --addresses N (200), --rate N (100), --fresh N (20), --flood-rate N
 * (the fixed-rate flood; default half the highest rate measured);
 * BENCH_DATABASE_URL, BENCH_REDIS_URL, BENCH_PORT_BASE (4600: B, pets +1, A +2, admin of A +10, metrics +5/+7).
 * Results go to bench/results/flood.json.
 */
const http = require('node:http');
const { spawnSync } = require('node:child_process');
const net = require('node:net');
const os = require('node:os');
const { setInterval, clearInterval } = require('node:timers');
const path = require('node:path');
const { randomBytes } = require('node:crypto');
const { existsSync, mkdirSync, writeFileSync } = require('node:fs');
const { performance } = require('node:perf_hooks');
const support = require('./support');
const { appNodeOptions } = require('../scripts/app-node-options');

const args = process.argv.slice(2);
const option = (name, fallback) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : fallback;
};
support.pinLoadGenerator();

const KEYS = Number(option('--keys', '1000000'));
const DURATION_S = Number(option('--duration', '8'));
const ADDRESSES = Number(option('--addresses', '200'));
const RATE = Number(option('--rate', '100'));
const FRESH = Number(option('--fresh', '20'));
/** Requests per second of the fixed-rate flood; 0: half the highest rate measured. */
const FLOOD_RATE = Number(option('--flood-rate', '0'));
const BASE = Number(process.env.BENCH_PORT_BASE || 4600);
const PORTS = { b: BASE, pets: BASE + 1, a: BASE + 2, adminA: BASE + 10, metricsB: BASE + 5, metricsA: BASE + 7 };
const RUN = support.runId('bench_flood');
const PG_BASE = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
const ADMIN_TOKEN = randomBytes(32).toString('base64url');
const children = [];

const randomKey = () => `petk_${randomBytes(32).toString('base64url')}`;
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const { percentile } = support;
const round = (value, digits = 1) => Number(value.toFixed(digits));

function startGateway(name, port, adminPort, metricsPort, databaseUrl, extra = {}) {
  return support.start(children, name, process.execPath, ['dist/apps/gateway/apps/gateway/src/main.js'], {
    NODE_OPTIONS: appNodeOptions(),
    NODE_ENV: 'production',
    LOG_LEVEL: 'warn',
    PORT: String(port),
    HOST: '127.0.0.1',
    METRICS_PORT: String(metricsPort),
    PETS_URL: `http://127.0.0.1:${PORTS.pets}`,
    REDIS_URL,
    REDIS_KEY_PREFIX: `${RUN}:`,
    GATEWAY_DATABASE_URL: databaseUrl,
    ADMIN_PORT: String(adminPort),
    ADMIN_TOKEN,
    ...extra,
  });
}

/** The sum of a metric's series (optionally those whose labels contain `labels`), from a gateway's /metrics. */
async function metric(port, name, labels = '') {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  return [...text.matchAll(new RegExp(`^${name}(\\{[^}]*\\})? ([0-9.e+-]+)$`, 'gm'))]
    .filter((m) => (m[1] ?? '').includes(labels))
    .reduce((sum, m) => sum + Number(m[2]), 0);
}

/** The key cache's outcomes and the store's queries, by label. */
async function lookupCounts(port) {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  const counts = {};
  for (const m of text.matchAll(/^gateway_key_cache_lookups_total\{[^}]*result="([a-z_]+)"[^}]*\} ([0-9.e+-]+)$/gm))
    counts[m[1]] = Number(m[2]);
  for (const m of text.matchAll(/^gateway_key_store_queries_total\{[^}]*outcome="([a-z_]+)"[^}]*\} ([0-9.e+-]+)$/gm))
    counts[`query_${m[1]}`] = Number(m[2]);
  return counts;
}
const diff = (after, before) =>
  Object.fromEntries(
    Object.entries(after)
      .map(([k, v]) => [k, v - (before[k] ?? 0)])
      .filter(([, v]) => v !== 0),
  );

async function mint(plan, limits) {
  const response = await fetch(`http://127.0.0.1:${PORTS.adminA}/consumers`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ plan, ...(limits ? { limits } : {}) }),
  });
  if (response.status !== 201) throw new Error(`mint: ${response.status} ${await response.text()}`);
  return (await response.json()).key.key;
}

// As many sockets as the open-loop probe needs: a capped pool would queue the probe in this process.
const probeAgent = new http.Agent({ keepAlive: true });
/** One GET through B with `key`: status and milliseconds. */
function get(key, agent = probeAgent) {
  return new Promise((resolve) => {
    const started = performance.now();
    const request = http.get(
      {
        host: '127.0.0.1',
        port: PORTS.b,
        path: '/v1/pets?limit=1',
        agent,
        headers: { authorization: `Bearer ${key}` },
      },
      (response) => {
        response.resume();
        response.on('end', () => resolve({ status: response.statusCode, ms: performance.now() - started }));
      },
    );
    request.on('error', () => resolve({ status: 'error', ms: performance.now() - started }));
  });
}

/** The cached key at a fixed rate (open loop) for `ms`: latencies of the 200s, and the other statuses. */
async function probe(key, ms) {
  const latencies = [];
  const others = {};
  const pending = [];
  const started = performance.now();
  for (let i = 0; performance.now() - started < ms; i += 1) {
    pending.push(
      get(key).then(({ status, ms: took }) => {
        if (status === 200) latencies.push(took);
        else others[status] = (others[status] ?? 0) + 1;
      }),
    );
    const next = started + ((i + 1) * 1000) / RATE;
    await sleep(Math.max(0, next - performance.now()));
  }
  await Promise.all(pending);
  return {
    requests: latencies.length,
    p50: round(percentile(latencies, 0.5)),
    p99: round(percentile(latencies, 0.99)),
    max: round(Math.max(...latencies)),
    others,
  };
}

/**
 * The flood: `connections` keep-alive sockets, each sending a random key. Without `rate`, each sends its next one
 * as soon as the previous answer is read (closed loop: the highest rate the gateway takes); with `rate`, a
 * scheduler sends `rate` requests per second on idle sockets (open loop; a request due while every socket is
 * busy is counted as skipped). `socketOptions(c)` adds localAddress; `forwardedFor(i)` an X-Forwarded-For.
 */
function flood(connections, socketOptions, forwardedFor, rate) {
  const statuses = {};
  let responses = 0;
  let sent = 0;
  let skipped = 0;
  let stopped = false;
  const sockets = new Set();
  const idle = [];
  const write = (socket) => {
    const i = sent++;
    const xff = forwardedFor ? `X-Forwarded-For: ${forwardedFor(i)}\r\n` : '';
    socket.write(
      `GET /v1/pets?limit=1 HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${randomKey()}\r\n${xff}\r\n`,
    );
  };
  const ready = (socket) => {
    if (stopped) return socket.end();
    if (rate) idle.push(socket);
    else write(socket);
  };
  const open = (c) => {
    if (stopped) return;
    const socket = net.connect({ host: '127.0.0.1', port: PORTS.b, ...socketOptions(c) });
    sockets.add(socket);
    socket.setNoDelay(true);
    let buffer = '';
    socket.on('connect', () => ready(socket));
    socket.on('data', (chunk) => {
      buffer += chunk.toString('latin1');
      for (;;) {
        const end = buffer.indexOf('\r\n\r\n');
        if (end < 0) return;
        const head = buffer.slice(0, end);
        const length = Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? 0);
        if (buffer.length < end + 4 + length) return;
        buffer = buffer.slice(end + 4 + length);
        const status = head.slice(9, 12);
        statuses[status] = (statuses[status] ?? 0) + 1;
        responses += 1;
        ready(socket);
      }
    });
    socket.on('error', () => undefined);
    socket.on('close', () => {
      sockets.delete(socket);
      const at = idle.indexOf(socket);
      if (at >= 0) idle.splice(at, 1);
      if (!stopped) setTimeout(() => open(c), 10);
    });
  };
  for (let c = 0; c < connections; c += 1) open(c);
  let timer;
  if (rate) {
    const started = performance.now();
    let due = 0;
    timer = setInterval(() => {
      const target = Math.floor(((performance.now() - started) / 1000) * rate);
      for (; due < target; due += 1) {
        const socket = idle.shift();
        if (socket) write(socket);
        else skipped += 1;
      }
    }, 5);
  }
  return {
    get responses() {
      return responses;
    },
    stop() {
      stopped = true;
      clearInterval(timer);
      for (const socket of sockets) socket.destroy();
      return { responses, statuses, skipped };
    },
  };
}

/** One phase: the flood (or none), the cached-key probe, fresh keys created on A and sent once to B. */
async function phase(label, cachedKey, floodOptions) {
  const pid = children.find((c) => c.name === 'gateway-b').pid;
  const countsBefore = await lookupCounts(PORTS.metricsB);
  const cpuBefore = support.cpuMicros(pid);
  const started = performance.now();
  const load = floodOptions
    ? flood(ADDRESSES, floodOptions.socket, floodOptions.forwardedFor, floodOptions.rate)
    : undefined;
  if (load) await sleep(1_000); // the flood at full rate first
  const probing = probe(cachedKey, DURATION_S * 1000);
  const fresh = [];
  if (load) {
    const spacing = ((DURATION_S - 2) * 1000) / FRESH;
    const freshAgent = new http.Agent({ keepAlive: false });
    for (let i = 0; i < FRESH; i += 1) {
      const key = await mint('pro');
      fresh.push(await get(key, freshAgent));
      await sleep(spacing);
    }
  }
  const quietProbe = await probing;
  const floodResult = load?.stop();
  const seconds = (performance.now() - started) / 1000;
  const cpu = support.cpuMicros(pid) - cpuBefore;
  await sleep(200);
  const counts = diff(await lookupCounts(PORTS.metricsB), countsBefore);
  const queries = Object.entries(counts)
    .filter(([k]) => k.startsWith('query_'))
    .reduce((sum, [, v]) => sum + v, 0);
  const requests =
    (floodResult?.responses ?? 0) +
    quietProbe.requests +
    Object.values(quietProbe.others).reduce((s, v) => s + v, 0) +
    fresh.length;
  const result = {
    label,
    seconds: round(seconds),
    flood: floodResult
      ? {
          requests: floodResult.responses,
          perSecond: Math.round(floodResult.responses / seconds),
          statuses: floodResult.statuses,
          skipped: floodResult.skipped,
          rate: floodOptions.rate ?? 'max',
        }
      : null,
    queries,
    queriesPerSecond: round(queries / seconds),
    queriesPerFloodRequest: floodResult ? round(queries / Math.max(1, floodResult.responses), 5) : null,
    lookups: counts,
    fresh: fresh.length
      ? {
          accepted: fresh.filter((f) => f.status === 200).length,
          of: fresh.length,
          statuses: fresh.map((f) => f.status),
          p99Ms: round(
            percentile(
              fresh.map((f) => f.ms),
              0.99,
            ),
          ),
        }
      : null,
    cached: quietProbe,
    cpuMicrosPerRequest: Math.round(cpu / Math.max(1, requests)),
  };
  result.loadAverage = round(os.loadavg()[0]);
  console.log(`\n${label} (load average ${result.loadAverage})`);
  if (result.flood) {
    const skipped = result.flood.skipped ? `, ${result.flood.skipped} due while every socket was busy (not sent)` : '';
    console.log(
      `  flood: ${result.flood.requests} requests, ${result.flood.perSecond} req/s, statuses ${JSON.stringify(result.flood.statuses)}${skipped}`,
    );
  }
  console.log(
    `  database queries on B: ${queries} (${result.queriesPerSecond}/s${result.flood ? `, ${result.queriesPerFloodRequest} per flood request` : ''}); key cache ${JSON.stringify(counts)}`,
  );
  if (result.fresh)
    console.log(
      `  fresh keys created on A, first request on B: ${result.fresh.accepted} / ${result.fresh.of} accepted, statuses ${JSON.stringify(result.fresh.statuses)}, p99 ${result.fresh.p99Ms} ms`,
    );
  console.log(
    `  cached key at ${RATE} req/s: ${quietProbe.requests} answered 200, p50 ${quietProbe.p50} ms, p99 ${quietProbe.p99} ms, max ${quietProbe.max} ms, others ${JSON.stringify(quietProbe.others)}`,
  );
  console.log(`  gateway B CPU per request (all its requests in the phase): ${result.cpuMicrosPerRequest} µs`);
  return result;
}

/**
 * Memory of a filter of 1,000,000 keys, built from the compiled gateway in a child process run with --expose-gc
 * (heap and array buffers read after a full collection, before and after), and its false-positive rate measured
 * on 1,000,000 other hashes. Null when the build has no key filter.
 */
function filterMemory() {
  const file = path.join(support.ROOT, 'dist/apps/gateway/apps/gateway/src/keys/key-filter.js');
  if (!existsSync(file)) return null;
  const script = `
    const { createHash } = require('node:crypto');
    const { KeyHashFilter, filterCapacity } = require(${JSON.stringify(file)});
    const hashes = (prefix) => Array.from({ length: 1000000 }, (_, i) => createHash('sha256').update(prefix + i).digest('hex'));
    const members = hashes('member-');
    const strangers = hashes('stranger-');
    const used = () => { global.gc(); const m = process.memoryUsage(); return m.heapUsed + m.external; }; // external includes arrayBuffers
    const before = used();
    const filter = new KeyHashFilter(filterCapacity(members.length));
    for (const hash of members) filter.add(hash);
    const after = used();
    const started = process.hrtime.bigint();
    const positives = strangers.filter((hash) => filter.mightContain(hash)).length;
    const nsPerLookup = Number(process.hrtime.bigint() - started) / strangers.length;
    console.log(JSON.stringify({ keys: members.length, capacity: filter.capacity, bytes: filter.byteLength, measuredBytes: after - before, falsePositiveRate: positives / strangers.length, nsPerLookup }));
  `;
  const child = spawnSync(process.execPath, ['--expose-gc', '-e', script], { encoding: 'utf8' });
  if (child.status !== 0) throw new Error(child.stderr);
  return JSON.parse(child.stdout);
}

async function main() {
  support.ensureServices();
  support.buildUnlessSkipped(args);
  const database = await support.createRunDatabase(PG_BASE, RUN);
  const { Client } = require('pg');
  const db = new Client({ connectionString: database.url });
  const results = {
    date: new Date().toISOString(),
    keys: KEYS,
    addresses: ADDRESSES,
    durationS: DURATION_S,
    rate: RATE,
  };
  try {
    support.start(children, 'pets', process.execPath, ['dist/apps/pets/apps/pets/src/main.js'], {
      NODE_OPTIONS: appNodeOptions(),
      NODE_ENV: 'production',
      LOG_LEVEL: 'warn',
      PETS_PORT: String(PORTS.pets),
      PGLITE_DATA_DIR: 'memory://',
      PETS_METRICS_PORT: '0',
    });
    children.at(-1).name = 'pets';
    startGateway('gateway a', PORTS.a, PORTS.adminA, PORTS.metricsA, database.url);
    children.at(-1).name = 'gateway-a';
    await support.waitForHttp(`http://127.0.0.1:${PORTS.pets}/health/live`, 60_000);
    await support.waitForHttp(`http://127.0.0.1:${PORTS.a}/health/ready`, 60_000);

    await db.connect();
    if (KEYS > 0) {
      const seeding = performance.now();
      const { rows } = await db.query(
        `INSERT INTO gateway.consumers (id, name, plan, limit_per_minute, limit_per_day) VALUES (gen_random_uuid(), 'seeded', 'enterprise', 1000, 1000) RETURNING id`,
      );
      for (let from = 1; from <= KEYS; from += 250_000) {
        await db.query(
          `INSERT INTO gateway.api_keys (id, consumer_id, key_hash, hint)
           SELECT gen_random_uuid(), $1, encode(sha256(('seeded-' || i)::bytea), 'hex'), 'petk_seed…' FROM generate_series($2::int, $3::int) AS i`,
          [rows[0].id, from, Math.min(KEYS, from + 249_999)],
        );
      }
      await db.query('ANALYZE gateway.api_keys');
      console.log(
        `seeded ${KEYS.toLocaleString('en')} valid keys through SQL in ${((performance.now() - seeding) / 1000).toFixed(1)} s`,
      );
    }

    const startedB = performance.now();
    startGateway('gateway b', PORTS.b, PORTS.adminA + 2, PORTS.metricsB, database.url, { TRUST_PROXY: '1' });
    children.at(-1).name = 'gateway-b';
    await support.waitForHttp(`http://127.0.0.1:${PORTS.b}/health/ready`, 120_000);
    results.startMs = Math.round(performance.now() - startedB);
    results.filter = {
      keys: await metric(PORTS.metricsB, 'gateway_key_filter_keys'),
      bytes: await metric(PORTS.metricsB, 'gateway_key_filter_bytes'),
      buildSeconds: round(await metric(PORTS.metricsB, 'gateway_key_filter_rebuild_seconds'), 2),
      complete: await metric(PORTS.metricsB, 'gateway_key_filter_complete'),
    };
    results.rssAfterStartMb = {
      a: support.rssMb(children.find((c) => c.name === 'gateway-a').pid),
      b: support.rssMb(children.find((c) => c.name === 'gateway-b').pid),
    };
    console.log(
      `gateway B ready ${results.startMs} ms after its start; key filter: ${results.filter.keys} keys, ${(results.filter.bytes / 1048576).toFixed(2)} MB, ` +
        `built in ${results.filter.buildSeconds} s, complete ${results.filter.complete}; RSS A (filter of 0 keys at start) ${results.rssAfterStartMb.a} MB, B ${results.rssAfterStartMb.b} MB`,
    );

    // The filter is built once more soon after the start (the catch-up build): let it finish first, so that
    // the quiet phase is quiet (a build after start is what the figures above show).
    if (results.filter.bytes > 0) {
      const deadline = Date.now() + 60_000;
      while (
        Date.now() < deadline &&
        (await metric(PORTS.metricsB, 'gateway_key_filter_rebuilds_total', 'outcome="ok"')) < 2
      )
        await sleep(500);
      results.catchUpBuildSeconds = round(await metric(PORTS.metricsB, 'gateway_key_filter_rebuild_seconds'), 2);
      console.log(`catch-up build of the key filter: ${results.catchUpBuildSeconds} s`);
    }
    const cachedKey = await mint('enterprise', { perMinute: 1_000_000_000, perDay: 1_000_000_000 });
    for (let i = 0; i < 50; i += 1) await get(cachedKey);

    // Each flood between two quiet phases: on a shared machine, its p99 is compared with the quiet ones around it.
    results.quiet = [await phase('quiet 1: no flood', cachedKey)];
    results.socketFlood = await phase(
      `flood at the highest rate: random keys from ${ADDRESSES} loopback source addresses (localAddress 127.0.1.x)`,
      cachedKey,
      {
        socket: (c) => ({ localAddress: `127.0.${1 + Math.floor(c / 250)}.${1 + (c % 250)}` }),
      },
    );
    results.quiet.push(await phase('quiet 2: no flood', cachedKey));
    results.forwardedFlood = await phase(
      `flood at the highest rate through one trusted proxy (TRUST_PROXY=1), a new X-Forwarded-For on every request`,
      cachedKey,
      {
        socket: () => ({}),
        forwardedFor: (i) => `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`,
      },
    );
    results.quiet.push(await phase('quiet 3: no flood', cachedKey));
    const fixedRate = FLOOD_RATE || Math.max(100, Math.round(results.socketFlood.flood.perSecond / 2 / 100) * 100);
    results.fixedRateFlood = await phase(
      `flood at ${fixedRate} req/s (open loop${FLOOD_RATE ? '' : ', half the highest rate above'}) from ${ADDRESSES} other loopback source addresses (127.0.2.x)`,
      cachedKey,
      { socket: (c) => ({ localAddress: `127.0.${2 + Math.floor(c / 250)}.${1 + (c % 250)}` }), rate: fixedRate },
    );
    results.quiet.push(await phase('quiet 4: no flood', cachedKey));
    results.filterMemory1M = filterMemory();
    if (results.filterMemory1M) {
      const m = results.filterMemory1M;
      console.log(
        `\nkey filter of 1,000,000 keys (built in this process): ${m.bytes.toLocaleString('en')} bytes (${(m.bytes / 1048576).toFixed(2)} MB, capacity ${m.capacity.toLocaleString('en')}), ` +
          `measured +${(m.measuredBytes / 1048576).toFixed(2)} MB (heap + external, array buffers included, after a full GC), false positives ${(m.falsePositiveRate * 100).toFixed(2)} % of 1,000,000 random hashes, ` +
          `${Math.round(m.nsPerLookup)} ns per lookup`,
      );
    }

    console.log('\nSummary');
    const floods = ['socketFlood', 'forwardedFlood', 'fixedRateFlood'];
    floods.forEach((key, i) => {
      const r = results[key];
      const quietP99 = round((results.quiet[i].cached.p99 + results.quiet[i + 1].cached.p99) / 2);
      r.quietP99Around = quietP99;
      r.p99OverQuiet = round(r.cached.p99 / quietP99, 2);
      console.log(
        `  ${key}: ${r.flood.perSecond} req/s of random keys; fresh keys ${r.fresh.accepted} / ${r.fresh.of} accepted; cached key p99 ${r.cached.p99} ms against ` +
          `${quietP99} ms quiet (the two quiet phases around it): ${r.p99OverQuiet}x; ${r.queries} database queries (${r.queriesPerFloodRequest} per flood request)`,
      );
    });
    mkdirSync(path.join(__dirname, 'results'), { recursive: true });
    writeFileSync(path.join(__dirname, 'results', 'flood.json'), `${JSON.stringify(results, null, 2)}\n`);
    const failed = floods.some((k) => results[k].fresh.accepted !== results[k].fresh.of);
    if (failed) process.exitCode = 1;
  } finally {
    for (const child of children) child.kill('SIGTERM');
    await sleep(1_000);
    await db.end().catch(() => undefined);
    await database.drop();
    const Redis = require('ioredis');
    const redis = new Redis(REDIS_URL);
    let cursor = '0';
    do {
      const [next, batch] = await redis.scan(cursor, 'MATCH', `${RUN}:*`, 'COUNT', 1000);
      cursor = next;
      if (batch.length) await redis.del(...batch);
    } while (cursor !== '0');
    redis.disconnect();
  }
}

support.stopOnExit(children);
main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
