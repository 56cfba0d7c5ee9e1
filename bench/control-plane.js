#!/usr/bin/env node
/**
 * `npm run bench:control-plane`: the consumers and keys at scale, on this machine's PostgreSQL and Redis.
 * Seeds 1,000,000 consumers (one key each) through SQL into a fresh database, starts two gateway instances
 * (built dist, core 0) in front of a stub upstream, and prints:
 *   - gateway peak RSS under load, with 10,000 and with 1,000,000 consumers stored (must not depend on it);
 *   - throughput with 10,000 distinct active keys;
 *   - p99 of key creation through the admin API while the gateway serves load, and the longest event-loop
 *     stall of that gateway while 1,000 keys are created;
 *   - how long a revocation takes to be refused by both instances;
 *   - database queries caused by a flood of random well-formed keys.
 * Then (issue #39 point 6) on a fresh database: --import N consumers (default 100,000; 0 skips it) imported through
 * the first instance's admin API (POST /import, 500 a request, as `npm run keys -- import` sends them), and
 * prints the importing gateway's resident memory (peak during the import, after it) and the longest
 * `/health/live` answer of that gateway (polled every 10 ms) while 200 keys are created and 200 revoked, beside
 * the longest answer of the same polling for 10 s with no change (targets: < 200 MB, ≤ 20 ms).
 * Options: --no-build, --duration SECONDS (default 8), --consumers N (default 1000000), --import N,
 * --import-only (only the import phase).
 */
const http = require('node:http');
const { createHash, randomBytes } = require('node:crypto');
const { performance } = require('node:perf_hooks');
const { setInterval, clearInterval } = require('node:timers');
const { mkdtempSync } = require('node:fs');
const { tmpdir } = require('node:os');
const path = require('node:path');
const { appNodeOptions } = require('../scripts/app-node-options');
const support = require('./support');

const { option, REDIS_URL, GATEWAY_MAIN, rssMb } = support;
const args = process.argv.slice(2);
const DURATION = Number(option(args, '--duration', '8'));
const CONSUMERS = Number(option(args, '--consumers', '1000000'));
const ACTIVE_KEYS = 10_000;
const IMPORT = Number(option(args, '--import', '100000'));
const IMPORT_BATCH = 500;

support.pinLoadGenerator();

const autocannon = require('autocannon');
const { Client } = require('pg');

const RUN = support.runId('bench_cp');
/** Free ports, taken in main(): the stub upstream, and per gateway instance its port, metrics and admin API. */
const PORTS = { stub: 0, a: 0, b: 0, metricsA: 0, metricsB: 0, adminA: 0, adminB: 0 };
const ADMIN_TOKEN = randomBytes(32).toString('base64url');
const children = [];

/** The key of seeded consumer i, derived in SQL and here alike: petk_ + base64url(sha256('bench-' || i)). */
const keyOf = (i) => `petk_${createHash('sha256').update(`bench-${i}`).digest('base64url')}`;
const SQL_KEY = `'petk_' || rtrim(translate(encode(sha256(('bench-' || i)::bytea), 'base64'), '+/', '-_'), '=')`;

/** Gateway instance `instance` ('a' or 'b') on its ports, in front of the stub upstream. */
function startGateway(instance, databaseUrl, env = {}) {
  return support.startApp(children, `gateway-${instance}`, GATEWAY_MAIN, {
    ...env,
    NODE_ENV: 'production',
    LOG_LEVEL: 'warn',
    PORT: String(PORTS[instance]),
    HOST: '127.0.0.1',
    METRICS_PORT: String(PORTS[`metrics${instance.toUpperCase()}`]),
    PETS_URL: `http://127.0.0.1:${PORTS.stub}`,
    REDIS_URL,
    REDIS_KEY_PREFIX: `${RUN}:`,
    GATEWAY_DATABASE_URL: databaseUrl,
    ADMIN_PORT: String(PORTS[`admin${instance.toUpperCase()}`]),
    ADMIN_TOKEN,
    // The revocation check polls with the revoked key, which then counts on the address's anonymous window: at the
    // default 30 a minute, a revocation heard after the 30th poll was seen as 429 forever (at load 12).
    ANON_RATE_LIMIT_PER_MINUTE: '1000000',
  });
}

/**
 * Samples the resident memory (VmRSS) of a process every 100 ms, for the peak of one phase (VmHWM would hold
 * the start-up's too); returns a stop function giving that peak in MB.
 */
function sampleRss(pid) {
  let peak = 0;
  const timer = setInterval(() => (peak = Math.max(peak, rssMb(pid))), 100);
  return () => {
    clearInterval(timer);
    return peak;
  };
}

function load(port, keys, duration, connections = 32) {
  return autocannon({
    url: `http://127.0.0.1:${port}/v1/pets?limit=1`,
    connections,
    duration,
    requests: load.requests(keys),
  });
}
/** Each request carries the next key of `keys`, round robin. */
load.requests = (keys) => {
  let next = 0;
  return [
    {
      setupRequest: (request) => {
        request.headers = { ...request.headers, authorization: `Bearer ${keys[next++ % keys.length]}` };
        return request;
      },
    },
  ];
};

async function metric(metricsPort, name) {
  const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
  return [...text.matchAll(new RegExp(`^${name}(?:\\{[^}]*\\})? ([0-9.e+-]+)$`, 'gm'))].reduce(
    (sum, m) => sum + Number(m[1]),
    0,
  );
}

async function admin(port, method, route, body) {
  const started = performance.now();
  const response = await fetch(`http://127.0.0.1:${port}${route}`, {
    method,
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const json = await response.json().catch(() => undefined);
  if (!response.ok) throw new Error(`${method} ${route}: ${response.status} ${JSON.stringify(json)}`);
  return { json, ms: performance.now() - started };
}

const { percentile } = support;

async function main() {
  support.buildUnlessSkipped(args, ['gateway']);
  for (const name of Object.keys(PORTS)) PORTS[name] = await support.freePort();
  const stub = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('[]'));
  await new Promise((resolve) => stub.listen(PORTS.stub, '127.0.0.1', resolve));
  try {
    if (!args.includes('--import-only'))
      await support.withRunDatabase('bench_cp', children, async (database) => {
        const db = new Client({ connectionString: database.url });
        await db.connect();
        try {
          await measure(database.url, db);
        } finally {
          await db.end().catch(() => undefined);
        }
      });
    if (IMPORT > 0) {
      await support.stopAllAndWait(children);
      children.length = 0;
      await support.withRunDatabase('bench_cp_import', children, (database) => importPhase(database.url));
    }
  } finally {
    stub.close();
  }
}

/**
 * The longest answer of GET /health/live on `port`, polled every 10 ms (one at a time) until `stop()`:
 * returns a stop function giving { longestMs, answers }.
 */
function pollLive(port) {
  let longest = 0;
  let answers = 0;
  let stopped = false;
  const done = (async () => {
    while (!stopped) {
      const started = performance.now();
      await (await fetch(`http://127.0.0.1:${port}/health/live`)).arrayBuffer();
      longest = Math.max(longest, performance.now() - started);
      answers += 1;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  })();
  return async () => {
    stopped = true;
    await done;
    return { longestMs: +longest.toFixed(1), answers };
  };
}

/** What bench/loop-probe.js wrote for the seconds ending in [from, to]: longest event-loop delay, GC pauses. */
function probeOver(file, from, to) {
  const lines = support.probeLines(file).filter((line) => line.at > from && line.at <= to + 1000);
  const byKind = {};
  for (const line of lines)
    for (const [kind, ms] of Object.entries(line.gc.byKind)) byKind[kind] = +((byKind[kind] ?? 0) + ms).toFixed(1);
  return {
    seconds: lines.length,
    loopDelayMaxMs: Math.max(0, ...lines.map((line) => line.delay.max)),
    gcPauseMs: +lines.reduce((sum, line) => sum + line.gc.pauseMs, 0).toFixed(1),
    gcLongestPauseMs: +Math.max(0, ...lines.map((line) => line.gc.maxMs)).toFixed(1),
    gcPauseMsByKind: byKind,
  };
}

/** IMPORT consumers through gateway a's admin API; its RSS, and its /health/live while keys come and go. */
async function importPhase(databaseUrl) {
  // Gateway a carries the loop probe (bench/loop-probe.js): its event-loop delay and GC pauses, second by second,
  // place what the polling from outside sees (the longest /health/live answer) in the process or not.
  const probeFile = path.join(mkdtempSync(path.join(tmpdir(), 'petstore-bench-cp-')), 'loop-a.jsonl');
  const a = startGateway('a', databaseUrl, {
    NODE_OPTIONS: appNodeOptions(
      `--require ${path.join(__dirname, 'loop-probe.js')} ${process.env.BENCH_APP_NODE_OPTIONS ?? ''}`.trim(),
    ),
    BENCH_LOOP_PROBE_FILE: probeFile,
  });
  await support.waitForHttp(`http://127.0.0.1:${PORTS.a}/health/live`, 300_000);
  startGateway('b', databaseUrl);
  await support.waitForHttp(`http://127.0.0.1:${PORTS.b}/health/live`, 300_000);
  const rssBefore = rssMb(a.pid);
  const peak = sampleRss(a.pid);
  const started = performance.now();
  for (let from = 0; from < IMPORT; from += IMPORT_BATCH) {
    const consumers = [];
    for (let i = from; i < Math.min(from + IMPORT_BATCH, IMPORT); i += 1)
      consumers.push({
        name: `imported-${i}`,
        plan: 'pro',
        keys: [{ keyHash: createHash('sha256').update(keyOf(i)).digest('hex') }],
      });
    await admin(PORTS.adminA, 'POST', '/import', { consumers });
  }
  const importSeconds = (performance.now() - started) / 1000;
  const rssPeakImport = peak();
  const rssAfterImport = rssMb(a.pid);
  console.log(
    `\nimported ${IMPORT.toLocaleString()} consumers through gateway a in ${importSeconds.toFixed(0)} s: its RSS ${rssBefore} MB before, peak ${rssPeakImport} MB during, ${rssAfterImport} MB after`,
  );
  // The same polling with nothing changing: on a shared machine the longest answer includes time not scheduled.
  process.kill(a.pid, 'SIGUSR2');
  const quietFrom = Date.now();
  let stop = pollLive(PORTS.a);
  await new Promise((resolve) => setTimeout(resolve, 10_000));
  const quiet = await stop();
  const changesFrom = Date.now();
  const peakChanges = sampleRss(a.pid);
  stop = pollLive(PORTS.a);
  const changes = [];
  for (let i = 0; i < 200; i += 1) {
    const name = `changed-${i}`;
    changes.push((await admin(PORTS.adminA, 'POST', '/consumers', { plan: 'pro', name })).ms);
    changes.push((await admin(PORTS.adminA, 'POST', `/consumers/${name}/revoke`)).ms);
  }
  const busy = await stop();
  const changesTo = Date.now();
  const rssPeakChanges = peakChanges();
  await new Promise((resolve) => setTimeout(resolve, 1_100)); // the probe's last line
  const inside = {
    quiet: probeOver(probeFile, quietFrom, changesFrom),
    whileChanging: probeOver(probeFile, changesFrom, changesTo),
  };
  const result = {
    consumers: IMPORT,
    importSeconds: +importSeconds.toFixed(1),
    rssMb: { before: rssBefore, peakImport: rssPeakImport, afterImport: rssAfterImport, peakChanges: rssPeakChanges },
    healthLive: { quiet, whileChanging: busy },
    eventLoop: inside,
    adminCallMs: { p50: +percentile(changes, 0.5).toFixed(1), p99: +percentile(changes, 0.99).toFixed(1) },
  };
  console.log(
    `while 200 keys are created and 200 revoked (admin calls p50 ${result.adminCallMs.p50} ms, p99 ${result.adminCallMs.p99} ms): ` +
      `longest /health/live answer ${busy.longestMs} ms of ${busy.answers} (10 s with no change: ${quiet.longestMs} ms of ${quiet.answers}); RSS peak ${rssPeakChanges} MB`,
  );
  for (const [phase, seen] of Object.entries(inside))
    console.log(
      `  inside gateway a, ${phase === 'quiet' ? 'no change' : 'while changing'}: event-loop delay max ${seen.loopDelayMaxMs} ms; GC paused ${seen.gcPauseMs} ms in ${seen.seconds} s, longest pause ${seen.gcLongestPauseMs} ms (ms by kind ${JSON.stringify(seen.gcPauseMsByKind)})`,
    );
  console.log(
    `  targets: RSS < 200 MB (peak ${Math.max(rssPeakImport, rssPeakChanges)} MB), longest /health/live ≤ 20 ms (${busy.longestMs} ms)`,
  );
  console.log(JSON.stringify({ import: result }));
  support.writeResults('control-plane-import.json', {
    date: new Date().toISOString(),
    loadAverage: require('node:os').loadavg(),
    ...result,
  });
}

/** The scenarios, on the run's database (`db`: a connection to it, for seeding). */
async function measure(databaseUrl, db) {
  const results = {};
  // The first start migrates the schema.
  let a = startGateway('a', databaseUrl);
  await support.waitForHttp(`http://127.0.0.1:${PORTS.a}/health/live`);
  const seed = async (from, to) => {
    const started = Date.now();
    await db.query(
      `INSERT INTO gateway.consumers (id, name, plan, limit_per_minute, limit_per_day)
       SELECT gen_random_uuid(), 'bench-' || i, 'enterprise', 1000000000, 1000000000 FROM generate_series($1::int, $2::int) AS i`,
      [from, to],
    );
    await db.query(
      `INSERT INTO gateway.api_keys (id, consumer_id, key_hash, hint)
       SELECT gen_random_uuid(), c.id, encode(sha256(k.key::bytea), 'hex'), left(k.key, 9) || '…'
       FROM generate_series($1::int, $2::int) AS i
       CROSS JOIN LATERAL (SELECT ${SQL_KEY} AS key) AS k
       JOIN gateway.consumers c ON c.name = 'bench-' || i`,
      [from, to],
    );
    await db.query('ANALYZE gateway.consumers; ANALYZE gateway.api_keys');
    return (Date.now() - started) / 1000;
  };
  const activeKeys = Array.from({ length: ACTIVE_KEYS }, (_, i) => keyOf(i + 1));

  // 1. RSS and throughput with 10,000 consumers stored, then with CONSUMERS.
  const phase = async (label) => {
    const peak = sampleRss(a.pid);
    // Warm-up: every active key used once (cached), as in a steady state where these keys are the active ones.
    await autocannon({
      url: `http://127.0.0.1:${PORTS.a}/v1/pets?limit=1`,
      connections: 32,
      amount: ACTIVE_KEYS,
      requests: load.requests(activeKeys),
    });
    const run = await load(PORTS.a, activeKeys, DURATION);
    const mb = peak();
    console.log(
      `${label}: ${Math.round(run.requests.average)} req/s over ${ACTIVE_KEYS} distinct keys, p99 ${run.latency.p99} ms, non-2xx ${run.non2xx}, gateway peak RSS ${mb} MB`,
    );
    return { rps: Math.round(run.requests.average), p99: run.latency.p99, non2xx: run.non2xx, rssMb: mb };
  };
  console.log(`seeding ${ACTIVE_KEYS} consumers: ${(await seed(1, ACTIVE_KEYS)).toFixed(1)} s`);
  results.small = await phase(`${ACTIVE_KEYS.toLocaleString()} consumers stored`);
  if (CONSUMERS > ACTIVE_KEYS)
    console.log(
      `seeding up to ${CONSUMERS.toLocaleString()} consumers: ${(await seed(ACTIVE_KEYS + 1, CONSUMERS)).toFixed(1)} s`,
    );
  await support.stopAndWait(a);
  a = startGateway('a', databaseUrl);
  startGateway('b', databaseUrl);
  await support.waitForHttp(`http://127.0.0.1:${PORTS.a}/health/live`);
  await support.waitForHttp(`http://127.0.0.1:${PORTS.b}/health/live`);
  results.large = await phase(`${CONSUMERS.toLocaleString()} consumers stored`);

  // 2. 1,000 key creations through the admin API while the gateway serves load: p99, and the longest stall.
  // The same load without creations first: on a shared machine the "stall" includes time the process was not
  // scheduled at all, so the figure that matters is the difference.
  const background = load(PORTS.a, activeKeys, 600, 16);
  await new Promise((resolve) => setTimeout(resolve, 1000));
  await metric(PORTS.metricsA, 'nodejs_eventloop_lag_max_seconds'); // a scrape resets the event-loop delay histogram
  await new Promise((resolve) => setTimeout(resolve, 10_000));
  const baselineStallMs = (await metric(PORTS.metricsA, 'nodejs_eventloop_lag_max_seconds')) * 1000;
  const creations = [];
  for (let i = 0; i < 1000; i += 1)
    creations.push((await admin(PORTS.adminA, 'POST', '/consumers', { plan: 'pro', name: `created-${i}` })).ms);
  const stallMs = (await metric(PORTS.metricsA, 'nodejs_eventloop_lag_max_seconds')) * 1000;
  background.stop();
  await background;
  results.creation = {
    p50: percentile(creations, 0.5),
    p99: percentile(creations, 0.99),
    max: Math.max(...creations),
    stallMs,
    baselineStallMs,
  };
  console.log(
    `1,000 key creations under load: p50 ${results.creation.p50.toFixed(1)} ms, p99 ${results.creation.p99.toFixed(1)} ms; longest event-loop stall of that gateway ` +
      `${stallMs.toFixed(1)} ms (same load, no creations, 10 s: ${baselineStallMs.toFixed(1)} ms)`,
  );

  // 3. A revocation, refused by both instances: time until both answer 401.
  const revoked = [];
  for (let i = 0; i < 5; i += 1) {
    const created = (await admin(PORTS.adminA, 'POST', '/consumers', { plan: 'pro', name: `revoked-${i}` })).json;
    const auth = { authorization: `Bearer ${created.key.key}` };
    for (const port of [PORTS.a, PORTS.b]) await fetch(`http://127.0.0.1:${port}/v1/pets?limit=1`, { headers: auth });
    const started = performance.now();
    await admin(PORTS.adminA, 'POST', `/consumers/revoked-${i}/revoke`);
    const seen = await Promise.all(
      [PORTS.a, PORTS.b].map(async (port) => {
        let status;
        while ((status = (await fetch(`http://127.0.0.1:${port}/v1/pets?limit=1`, { headers: auth })).status) !== 401) {
          if (performance.now() - started > 10_000)
            throw new Error(`revocation: instance on port ${port} still answers ${status} after 10 s`);
        }
        return performance.now() - started;
      }),
    );
    revoked.push(Math.max(...seen));
  }
  results.revocationMs = Math.max(...revoked);
  console.log(
    `revocation refused by both instances after at most ${results.revocationMs.toFixed(1)} ms (5 tries, including the admin call)`,
  );

  // 4. A flood of random well-formed keys from 1,000 addresses: queries per request.
  const before = await metric(PORTS.metricsB, 'gateway_key_store_queries_total');
  const floodRun = await autocannon({
    url: `http://127.0.0.1:${PORTS.b}/v1/pets?limit=1`,
    connections: 32,
    duration: 5,
    requests: [
      {
        setupRequest: (request) => {
          request.headers = {
            ...request.headers,
            authorization: `Bearer petk_${randomBytes(32).toString('base64url')}`,
          };
          return request;
        },
      },
    ],
  });
  const queries = (await metric(PORTS.metricsB, 'gateway_key_store_queries_total')) - before;
  results.flood = { requests: floodRun.requests.total, queries, statuses: floodRun.statusCodeStats };
  const statuses = JSON.stringify(
    Object.fromEntries(Object.entries(floodRun.statusCodeStats).map(([k, v]) => [k, v.count])),
  );
  console.log(
    `flood of ${floodRun.requests.total} random keys from one address: ${queries} database queries, statuses ${statuses}`,
  );

  console.log('\nSummary');
  console.log(
    `  gateway peak RSS: ${results.small.rssMb} MB (10,000 stored) vs ${results.large.rssMb} MB (${CONSUMERS.toLocaleString()} stored): target < 200 MB and independent of the count`,
  );
  console.log(
    `  throughput, 10,000 distinct keys: ${results.small.rps} vs ${results.large.rps} req/s (ratio ${(results.large.rps / results.small.rps).toFixed(2)})`,
  );
  console.log(
    `  key creation p99 under load: ${results.creation.p99.toFixed(1)} ms; longest stall ${results.creation.stallMs.toFixed(1)} ms, ` +
      `${results.creation.baselineStallMs.toFixed(1)} ms without creations (target ≤ 20 ms)`,
  );
  console.log(`  revocation visible everywhere: ${results.revocationMs.toFixed(0)} ms (target ≤ 1,000 ms)`);
  console.log(`  flood: ${results.flood.queries} queries for ${results.flood.requests} random keys`);
  console.log(JSON.stringify(results));
}

support.runBench(main, children, 'SIGKILL');
