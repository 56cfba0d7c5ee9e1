#!/usr/bin/env node
/**
 * `npm run bench:per-core`: the figures the field publishes (issue #39 point 7; Kong's method: key-auth + rate
 * limiting, fixed rates, one and many consumers, per vCPU). One gateway on the server core (taskset), key-auth and
 * rate limiting on Redis (every request counted in its minute and day windows; limits too high to refuse), in front
 * of an upstream that costs nothing (nginx answering a fixed JSON body, on the load core, as in Kong's benchmark),
 * for 1 consumer and for --consumers (10,000) consumers seeded through SQL (the requests use their
 * keys round robin, each key warmed once first, at full speed: the gateway looks unseen keys up in batch queries,
 * and --connections requests in flight stay far below the 800 hashes it lets wait before refusing). Per consumer
 * count:
 *   - requests per second per core: autocannon at full speed (--connections, 32) for --duration (10) s; the
 *     gateway's own CPU time (/proc/PID/stat) over the same interval: requests / CPU-seconds (what one fully busy
 *     core would serve; on a shared machine the wall-clock throughput is lower, the per-CPU-second figure less so);
 *   - p50/p95/p99 at fixed rates (--fractions of that per-core figure, 0.25,0.5,0.75), open loop (bench/paced-load.js:
 *     request i due at i / rate, latency from the due time), --rate-seconds (15) s each.
 * Prints the load average beside the figures. Options: --no-build, --consumers N, --duration S, --connections N,
 * --fractions a,b,c, --rate-seconds S. Writes bench/results/per-core.json.
 */
const { createHash, randomBytes } = require('node:crypto');
const { mkdtempSync, rmSync, writeFileSync } = require('node:fs');
const { loadavg, tmpdir } = require('node:os');
const path = require('node:path');
const support = require('./support');
const { pacedLoad } = require('./paced-load');

const { option, REDIS_URL, GATEWAY_MAIN, cpuMicros, LOAD_CORE } = support;
const args = process.argv.slice(2);
const CONSUMERS = Number(option(args, '--consumers', '10000'));
const DURATION = Number(option(args, '--duration', '10'));
const CONNECTIONS = Number(option(args, '--connections', '32'));
const FRACTIONS = option(args, '--fractions', '0.25,0.5,0.75').split(',').map(Number);
const RATE_SECONDS = Number(option(args, '--rate-seconds', '15'));

support.pinLoadGenerator();

const autocannon = require('autocannon');
const children = [];
const ADMIN_TOKEN = randomBytes(32).toString('base64url');
const RUN = support.runId('bench_per_core');
const keyOf = (i) => `petk_${createHash('sha256').update(`${RUN}-${i}`).digest('base64url')}`;

/**
 * `count` consumers (one key each, limits too high to refuse) seeded through SQL into the gateway's database once
 * it has migrated it (the admin API's import costs ~5 ms of CPU a consumer: minutes on a loaded machine), keys
 * derived as keyOf(i) here and in SQL alike.
 */
async function seedConsumers(databaseUrl, count) {
  const { Client } = require('pg');
  const db = new Client({ connectionString: databaseUrl });
  await db.connect();
  try {
    await db.query(
      `INSERT INTO gateway.consumers (id, name, plan, limit_per_minute, limit_per_day)
       SELECT gen_random_uuid(), 'per-core-' || i, 'enterprise', 1000000000, 1000000000 FROM generate_series(0, $1::int - 1) AS i`,
      [count],
    );
    await db.query(
      `INSERT INTO gateway.api_keys (id, consumer_id, key_hash, hint)
       SELECT gen_random_uuid(), c.id, encode(sha256(k.key::bytea), 'hex'), left(k.key, 9) || '…'
       FROM generate_series(0, $1::int - 1) AS i
       CROSS JOIN LATERAL (SELECT 'petk_' || rtrim(translate(encode(sha256(($2 || '-' || i)::bytea), 'base64'), '+/', '-_'), '=') AS key) AS k
       JOIN gateway.consumers c ON c.name = 'per-core-' || i`,
      [count, RUN],
    );
    await db.query('ANALYZE gateway.consumers; ANALYZE gateway.api_keys');
  } finally {
    await db.end();
  }
}

/** Each request carries the next key of `keys`, round robin (autocannon). */
const roundRobin = (keys) => {
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

const cannon = (options) =>
  new Promise((resolve, reject) =>
    autocannon({ connections: CONNECTIONS, pipelining: 1, ...options }, (error, result) =>
      error ? reject(error) : resolve(result),
    ),
  );

async function main() {
  support.buildUnlessSkipped(args, ['gateway']);
  support.ensureLocalServices();
  const dir = mkdtempSync(path.join(tmpdir(), 'petstore-bench-per-core-'));
  try {
    await support.withRunDatabase('bench_per_core', children, (database) => run(database.url, dir));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function run(databaseUrl, dir) {
  const [upstreamPort, port, adminPort] = [
    await support.freePort(),
    await support.freePort(),
    await support.freePort(),
  ];
  // The upstream: nginx answering what GET /pets?limit=20 would (an empty page), on the load core.
  writeFileSync(
    path.join(dir, 'nginx.conf'),
    `worker_processes 1; master_process off; daemon off; pid ${dir}/nginx.pid; error_log ${dir}/error.log warn;
events { worker_connections 1024; }
http { access_log off; client_body_temp_path ${dir}; proxy_temp_path ${dir};
  server { listen 127.0.0.1:${upstreamPort}; keepalive_requests 1000000;
    location / { default_type application/json; return 200 '{"data":[],"nextCursor":null}'; } } }
`,
  );
  support.start(children, 'nginx (upstream)', 'nginx', ['-p', dir, '-c', path.join(dir, 'nginx.conf')], {}, LOAD_CORE);
  await support.waitForHttp(`http://127.0.0.1:${upstreamPort}/`, 300_000);
  const startGateway = () =>
    support.startApp(children, 'gateway', GATEWAY_MAIN, {
      NODE_ENV: 'production',
      LOG_LEVEL: 'warn',
      PORT: String(port),
      HOST: '127.0.0.1',
      PETS_URL: `http://127.0.0.1:${upstreamPort}`,
      REDIS_URL,
      REDIS_KEY_PREFIX: `${RUN}:`,
      GATEWAY_DATABASE_URL: databaseUrl,
      ADMIN_PORT: String(adminPort),
      ADMIN_TOKEN,
    });
  // The first start migrates the database; then the consumers are seeded through SQL, which publishes no change,
  // so the gateway is started again: its key filter, built at start, then holds the seeded keys. (Before this,
  // the running gateway's filter refused all but a few unheard keys a second: the 10,000-consumer row of
  // 2026-11-28 00:45, 35 % not 2xx, measured that, not the gateway.)
  let gateway = startGateway();
  await support.waitForHttp(`http://127.0.0.1:${port}/health/ready`, 300_000);
  await seedConsumers(databaseUrl, CONSUMERS);
  await support.stopAndWait(gateway);
  children.splice(children.indexOf(gateway), 1);
  gateway = startGateway();
  await support.waitForHttp(`http://127.0.0.1:${port}/health/ready`, 300_000);
  const url = `http://127.0.0.1:${port}/v1/pets?limit=20`;
  console.log(
    `gateway on core ${support.SERVER_CORE}, load and upstream (nginx) on core ${LOAD_CORE}; key-auth + rate limiting on Redis; load average ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}`,
  );
  const results = [];
  for (const count of [1, CONSUMERS]) {
    const keys = Array.from({ length: count }, (_, i) => keyOf(i));
    // Warm-up: every key once at full speed, then more. No pacing: the misses of a turn share one lookup query
    // (before batches, a query a key, the budget of 500 a second meant a 400-a-second warm-up). A refusal here
    // means the gateway did not learn the keys.
    const warmUp = await cannon({ url, amount: Math.max(count, 3000), requests: roundRobin(keys) });
    const refused = warmUp.non2xx + warmUp.errors + warmUp.timeouts;
    if (refused)
      console.log(
        `    warm-up: ${refused} of ${warmUp.requests.total} not 2xx (${JSON.stringify(warmUp.statusCodeStats)})`,
      );
    const cpuBefore = cpuMicros(gateway.pid);
    const full = await cannon({ url, duration: DURATION, requests: roundRobin(keys) });
    const cpuSeconds = (cpuMicros(gateway.pid) - cpuBefore) / 1e6;
    const bad = full.non2xx + full.errors + full.timeouts;
    const perCore = Math.round(full.requests.total / cpuSeconds);
    const row = {
      consumers: count,
      wallRps: Math.round(full.requests.average),
      cpuSeconds: +cpuSeconds.toFixed(2),
      perCore,
      errors: bad,
      loadAverage: loadavg()[0],
      rates: [],
    };
    console.log(
      `${String(count).padStart(6)} consumer(s): ${perCore} requests per CPU-second of the gateway (${row.wallRps} req/s wall clock at ${CONNECTIONS} connections, ${row.cpuSeconds} CPU-s for ${full.requests.total} requests${bad ? `, ${bad} non-2xx/errors (by status ${JSON.stringify(full.statusCodeStats ?? {})})` : ''}; load ${row.loadAverage.toFixed(1)})`,
    );
    for (const fraction of FRACTIONS) {
      const rate = Math.max(1, Math.round(perCore * fraction));
      const paced = await pacedLoad({
        url,
        rate,
        seconds: RATE_SECONDS,
        connections: CONNECTIONS,
        headers: (i) => ({ authorization: `Bearer ${keys[i % keys.length]}` }),
      });
      const one = { fraction, rate, ...paced, loadAverage: loadavg()[0] };
      row.rates.push(one);
      console.log(
        `    at ${rate} req/s (${fraction} × per core): p50 ${paced.p50} ms, p95 ${paced.p95} ms, p99 ${paced.p99} ms, max ${paced.max} ms` +
          `${paced.errors ? `, ${paced.errors} errors` : ''} (load ${one.loadAverage.toFixed(1)})`,
      );
    }
    // VmHWM: the gateway's peak resident memory since it started, so the 10,000 row's includes the 1's.
    row.peakRssMb = support.peakRssMb(gateway.pid);
    console.log(`    the gateway's peak RSS so far: ${row.peakRssMb} MB`);
    results.push(row);
  }
  console.log('\n| consumers | requests/s per core | rate | p50 | p95 | p99 |');
  console.log('|---|---|---|---|---|---|');
  for (const row of results)
    for (const r of row.rates)
      console.log(
        `| ${row.consumers.toLocaleString('en-US')} | ${row.perCore.toLocaleString('en-US')} | ${r.rate} req/s | ${r.p50} ms | ${r.p95} ms | ${r.p99} ms |`,
      );
  support.writeResults('per-core.json', { date: new Date().toISOString(), loadAverage: loadavg(), results });
}

support.runBench(main, children, 'SIGKILL');
