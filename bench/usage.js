#!/usr/bin/env node
/**
 * `npm run bench:usage`: what the usage history (issue #23) costs, on this machine.
 *
 * 1. The request path: two gateways side by side (USAGE_ENABLED=false and true, one pets service, PostgreSQL
 *    and Redis), autocannon on GET /v1/pets?limit=20 with an Enterprise key, alternating for several rounds;
 *    the gateway's CPU per request (from /proc) is compared, median against median. It also times what the
 *    request path runs in a loop: UsageRecorder.record() over 10,000 keys, and the 'finish' listener.
 * 2. Rows written per hour at 1,000 req/s over 10,000 consumers: an hour of traffic (3.6M answers, a random
 *    consumer each) fed to the recorder in simulated time, drained every USAGE_FLUSH_MS (5 s); the rows per
 *    flush and per hour, and the time of real flushes (two additive upserts) into PostgreSQL.
 * 3. The history query: a year of hourly rows for 10,000 consumers (generate_series; each consumer active in a
 *    share of hours, --density, default 0.1) plus its daily roll-up; p50/p95 of the 31-day hourly history of a
 *    random consumer (the admin route's query) and of a 400-day daily one.
 * 4. Retention: 1,000,000 rows past USAGE_RETENTION_DAYS deleted by the job's statement (5,000 rows each):
 *    how long each statement runs, i.e. how long it holds its row locks.
 * Options: --no-build, --duration SECONDS (default 5), --rounds N (default 3), --density D (default 0.1),
 * --parts 1,2,3,4 (which of the above to run; default all).
 * Writes bench/results/usage.json (not committed).
 */
const { randomBytes } = require('node:crypto');
const { EventEmitter } = require('node:events');
const { performance } = require('node:perf_hooks');
const support = require('./support');

const { hasTaskset, option, REDIS_URL, PETS_MAIN, GATEWAY_MAIN, cpuMicros, median } = support;
const args = process.argv.slice(2);
const DURATION = Number(option(args, '--duration', '5'));
const ROUNDS = Number(option(args, '--rounds', '3'));
const DENSITY = Number(option(args, '--density', '0.1'));
const PARTS = option(args, '--parts', '1,2,3,4').split(',').map(Number);
const CONNECTIONS = 32;
const CONSUMERS = 10_000;
const HOUR = 3_600_000;

support.pinLoadGenerator();

const autocannon = require('autocannon');
const { Client } = require('pg');

const RUN = support.runId('bench_usage');
const ADMIN_TOKEN = randomBytes(32).toString('base64url');
const children = [];
const load = (options) =>
  new Promise((resolve, reject) =>
    autocannon({ connections: CONNECTIONS, ...options }, (e, r) => (e ? reject(e) : resolve(r))),
  );
const dist = (file) => require(`../dist/apps/gateway/apps/gateway/src/usage/${file}`);
const { percentile } = support;

async function requestPath(databaseUrl) {
  const petsPort = await support.freePort();
  const common = { NODE_ENV: 'production', LOG_LEVEL: 'warn', CURSOR_SECRET: 'bench-cursor-secret-0123456789abcdef' };
  support.startApp(children, 'pets', PETS_MAIN, { ...common, PETS_PORT: String(petsPort), DATABASE_URL: databaseUrl });
  const modes = { off: 'false', on: 'true' };
  const gateways = {};
  let adminUrl;
  for (const [mode, enabled] of Object.entries(modes)) {
    const [port, adminPort] = [await support.freePort(), await support.freePort()];
    const gateway = support.startApp(children, `gateway ${mode}`, GATEWAY_MAIN, {
      ...common,
      PORT: String(port),
      HOST: '127.0.0.1',
      PETS_URL: `http://127.0.0.1:${petsPort}`,
      REDIS_URL,
      REDIS_KEY_PREFIX: `${RUN}:${mode}:`,
      GATEWAY_DATABASE_URL: databaseUrl,
      ADMIN_PORT: String(adminPort),
      ADMIN_TOKEN,
      USAGE_ENABLED: enabled,
    });
    gateways[mode] = { url: `http://127.0.0.1:${port}`, pid: gateway.pid };
    adminUrl ??= `http://127.0.0.1:${adminPort}`;
    await support.waitForHttp(`${gateways[mode].url}/health/ready`);
  }
  const key = support.mintKey(
    { url: adminUrl, token: ADMIN_TOKEN },
    '--plan enterprise --name bench --rpm 1000000000 --rpd 1000000000',
  );
  const scenario = (url) => ({ url: `${url}/v1/pets?limit=20`, headers: { authorization: `Bearer ${key}` } });
  console.log(
    `\n1. Request path: ${CONNECTIONS} connections, ${ROUNDS} rounds of ${DURATION} s per mode; servers on core 0, load on core 1${hasTaskset ? '' : ' (taskset missing: not pinned)'}`,
  );
  for (const { url } of Object.values(gateways)) await load({ ...scenario(url), duration: 3 });
  const rows = { off: [], on: [] };
  for (let round = 0; round < ROUNDS; round++) {
    for (const mode of round % 2 ? ['on', 'off'] : ['off', 'on']) {
      const { url, pid } = gateways[mode];
      const before = cpuMicros(pid);
      const result = await load({ ...scenario(url), duration: DURATION });
      const row = {
        rps: Math.round(result.requests.average),
        p50: result.latency.p50,
        p99: result.latency.p99,
        gatewayCpuUsPerRequest: +((cpuMicros(pid) - before) / Math.max(result.requests.total, 1)).toFixed(1),
        errors: result.non2xx + result.errors,
      };
      rows[mode].push(row);
      console.log(
        `  round ${round + 1} ${mode.padEnd(4)} ${String(row.rps).padStart(6)} req/s  p50 ${row.p50} ms  p99 ${row.p99} ms  gateway CPU ${row.gatewayCpuUsPerRequest} µs/req${row.errors ? `  (${row.errors} non-2xx/errors)` : ''}`,
      );
    }
  }
  const cpu = (mode) => +median(rows[mode].map((r) => r.gatewayCpuUsPerRequest)).toFixed(1);
  const recordNs = timeRecorder();
  const result = {
    rounds: rows,
    gatewayCpuUsPerRequest: { off: cpu('off'), on: cpu('on') },
    cpuRatio: +(cpu('on') / cpu('off')).toFixed(3),
    recordNsPerCall: recordNs.record,
    finishListenerNsPerRequest: recordNs.listener,
    recordShareOfRequestCpu: +(((recordNs.record + recordNs.listener) / 1000 / cpu('off')) * 100).toFixed(2),
  };
  console.log(
    `  gateway CPU per request: off ${result.gatewayCpuUsPerRequest.off} µs, on ${result.gatewayCpuUsPerRequest.on} µs (ratio ${result.cpuRatio})`,
  );
  console.log(
    `  in a loop: record() ${recordNs.record} ns, once('finish') + emit ${recordNs.listener} ns: ${result.recordShareOfRequestCpu} % of the gateway's CPU per request`,
  );
  support.stopAll(children);
  await support.stopAllAndWait(children);
  children.length = 0;
  return result;
}

/** ns per call of record() over 10,000 keys, and of registering + firing a 'finish' listener like track(). */
function timeRecorder() {
  const { UsageRecorder } = dist('usage-recorder.js');
  const recorder = new UsageRecorder(50_000);
  const names = Array.from({ length: CONSUMERS }, (_, i) => [`consumer-${i}`, `key-${i}`]);
  const now = Date.now();
  const calls = 2_000_000;
  for (let i = 0; i < 200_000; i++) recorder.record(names[i % CONSUMERS][0], names[i % CONSUMERS][1], 200, 3, now);
  let started = process.hrtime.bigint();
  for (let i = 0; i < calls; i++) {
    const [consumer, keyId] = names[(i * 7919) % CONSUMERS];
    recorder.record(consumer, keyId, i % 50 === 0 ? 429 : 200, (i % 40) + 0.5, now);
  }
  const record = Number(process.hrtime.bigint() - started) / calls;
  const emitters = Array.from({ length: 1000 }, () => new EventEmitter());
  let sink = 0;
  started = process.hrtime.bigint();
  for (let i = 0; i < calls; i++) {
    const response = emitters[i % 1000];
    const begun = performance.now();
    response.once('finish', () => (sink += performance.now() - begun));
    response.emit('finish');
  }
  const listener = Number(process.hrtime.bigint() - started) / calls;
  return { record: +record.toFixed(1), listener: +(listener + sink * 0).toFixed(1) };
}

/** Without part 1: one gateway started and stopped, for its migrations. */
async function migrateOnly(databaseUrl) {
  const port = await support.freePort();
  support.startApp(children, 'gateway (migrations)', GATEWAY_MAIN, {
    NODE_ENV: 'production',
    LOG_LEVEL: 'warn',
    PORT: String(port),
    HOST: '127.0.0.1',
    PETS_URL: 'http://127.0.0.1:1',
    GATEWAY_DATABASE_URL: databaseUrl,
    ADMIN_PORT: String(await support.freePort()),
    ADMIN_TOKEN,
    REDIS_URL,
    REDIS_KEY_PREFIX: `${RUN}:m:`,
  });
  await support.waitForHttp(`http://127.0.0.1:${port}/health/ready`);
  await support.stopAllAndWait(children);
  children.length = 0;
  return undefined;
}

async function withSchema(databaseUrl, run) {
  const db = new Client({ connectionString: databaseUrl });
  await db.connect();
  try {
    return await run(db);
  } finally {
    await db.end();
  }
}

/** 2. An hour at 1,000 req/s over 10,000 consumers, in simulated time; real flushes of it into PostgreSQL. */
async function rowsPerHour(databaseUrl) {
  const { UsageRecorder, bucketsOf } = dist('usage-recorder.js');
  const recorder = new UsageRecorder(50_000);
  const start = Math.floor(Date.now() / HOUR) * HOUR - 48 * HOUR;
  const perFlush = [];
  const batches = [];
  for (let t = 0; t < 3600; t += 5) {
    for (let i = 0; i < 5000; i++) {
      const c = Math.floor(Math.random() * CONSUMERS);
      recorder.record(`consumer-${c}`, `key-${c}`, 200, 3, start + t * 1000 + i);
    }
    const buckets = bucketsOf(recorder.drain());
    perFlush.push(buckets.length);
    if (batches.length < 60) batches.push(buckets);
  }
  const flushMs = await withSchema(databaseUrl, async () => {
    // The gateway's own upsert (UsageRepository.write), through the built repository on a plain DataSource.
    const { DataSource } = require('typeorm');
    const source = new DataSource({ type: 'postgres', url: databaseUrl, schema: 'gateway', entities: [] });
    await source.initialize();
    try {
      const { UsageRepository } = dist('usage.repository.js');
      const repository = new UsageRepository(source, { consumers: { schema: 'gateway' } });
      const times = [];
      for (const buckets of batches) {
        const begun = performance.now();
        await repository.write(buckets);
        times.push(performance.now() - begun);
      }
      return times;
    } finally {
      await source.destroy();
    }
  });
  const hourlyRows = await withSchema(databaseUrl, async (db) =>
    Number((await db.query('SELECT count(*) AS n FROM gateway.usage_hourly')).rows[0].n),
  );
  const result = {
    requestsPerSecond: 1000,
    consumers: CONSUMERS,
    flushes: perFlush.length,
    rowsPerFlushMedian: median(perFlush),
    upsertedRowsPerHour: perFlush.reduce((a, b) => a + b, 0),
    hourlyRowsKept: hourlyRows,
    flushMsMedian: +median(flushMs).toFixed(1),
    flushMsP95: +percentile(flushMs, 0.95).toFixed(1),
  };
  console.log(
    `\n2. 1,000 req/s over ${CONSUMERS} consumers, flushed every 5 s: ${result.rowsPerFlushMedian} rows per flush (median), ${result.upsertedRowsPerHour} rows upserted per hour per table, ${hourlyRows} distinct hourly rows kept for the hour (${result.flushes} flushes); a flush (both upserts) ${result.flushMsMedian} ms median, ${result.flushMsP95} ms p95`,
  );
  return result;
}

const ADDITIVE = [
  'requests',
  'ok',
  'client_errors',
  'rate_limited',
  'server_errors',
  'latency_sum_ms',
  ...['5', '10', '25', '50', '100', '250', '500', '1000', '2500'].map((b) => `latency_le_${b}ms`),
  'latency_over_2500ms',
];

/** 3. A year of hourly rows for 10,000 consumers, then the history queries the admin routes run. */
async function historyQuery(databaseUrl) {
  return withSchema(databaseUrl, async (db) => {
    const year = 365 * 24;
    const end = Math.floor(Date.now() / HOUR) * HOUR;
    const began = Date.now();
    await db.query('TRUNCATE gateway.usage_hourly, gateway.usage_daily');
    await db.query(
      `INSERT INTO gateway.usage_hourly (hour, consumer, key_id, ${ADDITIVE.join(', ')})
       SELECT to_timestamp($1 / 1000.0) - h * interval '1 hour', 'consumer-' || c, 'key-' || c,
              100, 95, 3, 1, 1, 350.5, 60, 20, 10, 5, 3, 1, 1, 0, 0, 0
       FROM generate_series(1, $2) AS h, generate_series(0, $3 - 1) AS c
       WHERE random() < $4`,
      [end, year, CONSUMERS, DENSITY],
    );
    await db.query(
      `INSERT INTO gateway.usage_daily (day, consumer, ${ADDITIVE.join(', ')})
       SELECT (hour AT TIME ZONE 'UTC')::date, consumer, ${ADDITIVE.map((c) => `sum(${c})`).join(', ')} FROM gateway.usage_hourly GROUP BY 1, 2`,
    );
    await db.query('ANALYZE gateway.usage_hourly');
    await db.query('ANALYZE gateway.usage_daily');
    const rows = Number((await db.query('SELECT count(*) AS n FROM gateway.usage_hourly')).rows[0].n);
    const dailyRows = Number((await db.query('SELECT count(*) AS n FROM gateway.usage_daily')).rows[0].n);
    const size = (await db.query(`SELECT pg_size_pretty(pg_total_relation_size('gateway.usage_hourly')) AS s`)).rows[0]
      .s;
    const loadSeconds = Math.round((Date.now() - began) / 1000);
    const sums = ADDITIVE.map((c) => `sum("${c}") AS "${c}"`).join(', ');
    const hourly = `SELECT "hour" AS "start", ${sums} FROM gateway.usage_hourly WHERE "hour" >= $1::timestamptz AND "hour" < $2::timestamptz AND "consumer" = $3 GROUP BY "hour" ORDER BY "hour"`;
    const daily = `SELECT ("day"::timestamp AT TIME ZONE 'UTC') AS "start", ${sums} FROM gateway.usage_daily WHERE "day" >= ($1::timestamptz AT TIME ZONE 'UTC')::date AND "day" < ($2::timestamptz AT TIME ZONE 'UTC')::date AND "consumer" = $3 GROUP BY "day" ORDER BY "day"`;
    const time = async (sql, spanMs) => {
      const times = [];
      for (let i = 0; i < 200; i++) {
        const consumer = `consumer-${Math.floor(Math.random() * CONSUMERS)}`;
        const to = end - Math.floor(Math.random() * 300) * 24 * HOUR;
        const begun = performance.now();
        await db.query(sql, [new Date(to - spanMs).toISOString(), new Date(to).toISOString(), consumer]);
        times.push(performance.now() - begun);
      }
      return {
        p50: +percentile(times, 0.5).toFixed(2),
        p95: +percentile(times, 0.95).toFixed(2),
        max: +Math.max(...times).toFixed(2),
      };
    };
    const hourly31 = await time(hourly, 31 * 24 * HOUR);
    const daily400 = await time(daily, 400 * 24 * HOUR);
    const plan = (
      await db.query(
        `EXPLAIN ${hourly
          .replace(/\$1::timestamptz/, `'${new Date(end - 31 * 24 * HOUR).toISOString()}'::timestamptz`)
          .replace(/\$2::timestamptz/, `'${new Date(end).toISOString()}'::timestamptz`)
          .replace('$3', "'consumer-42'")}`,
      )
    ).rows.map((r) => r['QUERY PLAN']);
    const result = {
      density: DENSITY,
      hourlyRows: rows,
      dailyRows,
      hourlyTableSize: size,
      loadSeconds,
      hourly31Days: hourly31,
      daily400Days: daily400,
      plan,
    };
    console.log(
      `\n3. ${rows.toLocaleString('en')} hourly rows (a year, ${CONSUMERS} consumers, density ${DENSITY}; ${size}), ${dailyRows.toLocaleString('en')} daily rows, loaded in ${loadSeconds} s`,
    );
    console.log(
      `   31-day hourly history of one consumer: p50 ${hourly31.p50} ms, p95 ${hourly31.p95} ms (max ${hourly31.max}); 400-day daily: p50 ${daily400.p50} ms, p95 ${daily400.p95} ms`,
    );
    console.log(`   plan: ${plan.slice(0, 3).join(' | ')}`);
    return result;
  });
}

/** 4. Retention: 1,000,000 expired rows deleted 5,000 per statement, each statement timed. */
async function retention(databaseUrl) {
  return withSchema(databaseUrl, async (db) => {
    await db.query('TRUNCATE gateway.usage_hourly');
    const old = Date.now() - 500 * 24 * HOUR;
    await db.query(
      `INSERT INTO gateway.usage_hourly (hour, consumer, key_id, requests)
       SELECT to_timestamp($1 / 1000.0) - (i / 1000) * interval '1 hour', 'consumer-' || (i % 1000), 'key-' || (i % 1000), 1
       FROM generate_series(0, 999999) AS i`,
      [old],
    );
    await db.query('ANALYZE gateway.usage_hourly');
    const times = [];
    let deleted = 0;
    const began = performance.now();
    for (;;) {
      const t = performance.now();
      const result = await db.query(
        `DELETE FROM gateway.usage_hourly WHERE ctid IN (SELECT ctid FROM gateway.usage_hourly WHERE "hour" < (now() - $1 * interval '1 day') LIMIT 5000)`,
        [400],
      );
      times.push(performance.now() - t);
      deleted += result.rowCount;
      if (result.rowCount < 5000) break;
    }
    const result = {
      deleted,
      statements: times.length,
      totalSeconds: +((performance.now() - began) / 1000).toFixed(1),
      statementMsMedian: +median(times).toFixed(1),
      statementMsP95: +percentile(times, 0.95).toFixed(1),
      statementMsMax: +Math.max(...times).toFixed(1),
    };
    console.log(
      `\n4. Retention: ${deleted.toLocaleString('en')} rows in ${result.statements} statements of 5,000 (${result.totalSeconds} s without the job's pauses); each statement (its row locks) ${result.statementMsMedian} ms median, ${result.statementMsP95} ms p95, ${result.statementMsMax} ms max`,
    );
    return result;
  });
}

async function main() {
  support.buildUnlessSkipped(args, ['pets', 'gateway']);
  await support.withRunDatabase('bench_usage', children, async (database) => {
    await support.preparePetsDatabase(database.url, 1000);
    // The gateway's tables: its migrations run when it starts (part 1 starts two).
    const path = PARTS.includes(1) ? await requestPath(database.url) : await migrateOnly(database.url);
    const rows = PARTS.includes(2) ? await rowsPerHour(database.url) : undefined;
    const history = PARTS.includes(3) ? await historyQuery(database.url) : undefined;
    const prune = PARTS.includes(4) ? await retention(database.url) : undefined;
    const report = {
      date: new Date().toISOString(),
      machine: {
        cpus: require('node:os').cpus().length,
        node: process.version,
        loadAverage: require('node:os').loadavg(),
      },
      requestPath: path,
      rowsPerHour: rows,
      history,
      retention: prune,
    };
    support.writeResults('usage.json', report);
  });
}

support.runBench(main, children, 'SIGKILL');
