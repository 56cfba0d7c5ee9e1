#!/usr/bin/env node
/**
 * `npm run bench:tracing`: what tracing costs the gateway, on this machine. Starts four stacks (pets service +
 * gateway) side by side against PostgreSQL and Redis: tracing off, off again (a control: the noise floor),
 * on with every request sampled (the default parentbased_always_on), and on with 10% sampled
 * (parentbased_traceidratio 0.1). Spans go as OTLP/HTTP protobuf to a local receiver that accepts and drops
 * them. autocannon drives GET /v1/pets?limit=20 and POST /v1/pets against each stack in turn, for several
 * rounds, so that a change in the machine's load hits every mode alike; medians are reported. It also times
 * the only code the request path runs with tracing off: recordEdgeOutcome() against the API's no-op.
 * The four gateways share one consumers database (the fresh database of the run); the key is minted through
 * the first one's admin API. Servers on core 0, the load generator (and the receiver) on core 1. Options: --no-build, --duration SECONDS
 * per measurement (default 5), --rounds N (default 3), --connections N (default 32).
 * Writes bench/results/tracing.json (not committed).
 */
const { randomBytes } = require('node:crypto');
const support = require('./support');

const { hasTaskset, option, REDIS_URL, PETS_MAIN, GATEWAY_MAIN, cpuMicros, median } = support;
const args = process.argv.slice(2);
const DURATION = Number(option(args, '--duration', '5'));
const ROUNDS = Number(option(args, '--rounds', '3'));
const CONNECTIONS = Number(option(args, '--connections', '32'));
const WARMUP = 3;

support.pinLoadGenerator();

const autocannon = require('autocannon');

const RUN = support.runId('bench_tracing');
const ADMIN_TOKEN = randomBytes(32).toString('base64url');
const children = [];

/** CPU time (user + system) the processes have used so far, in ms. */
const cpuMs = (pids) => pids.reduce((sum, pid) => sum + cpuMicros(pid), 0) / 1000;

const load = (options) =>
  new Promise((resolve, reject) =>
    autocannon({ connections: CONNECTIONS, ...options }, (e, r) => (e ? reject(e) : resolve(r))),
  );

/** Throughput and latency, and the CPU both apps spent per request: the figure least moved by a busy machine. */
async function measure(options, pids) {
  const cpuBefore = cpuMs(pids);
  const result = await load({ ...options, duration: DURATION });
  const cpuPerRequestMs = +((cpuMs(pids) - cpuBefore) / Math.max(result.requests.total, 1)).toFixed(3);
  return {
    rps: Math.round(result.requests.average),
    p50: result.latency.p50,
    p99: result.latency.p99,
    cpuPerRequestMs,
    errors: result.non2xx + result.errors + result.timeouts,
  };
}

/** ns per call of the edge's only tracing code on the hot path, with no SDK loaded (the API's no-op). */
function timeRecordEdgeOutcomeOff() {
  const { recordEdgeOutcome } = require('../dist/apps/gateway/libs/platform/src/tracing/edge-outcome.js');
  const consumer = { name: 'bench', plan: 'enterprise' };
  const decision = { outcome: 'allowed', windows: [] };
  const calls = 2_000_000;
  for (let i = 0; i < 100_000; i++) recordEdgeOutcome({ consumer });
  const started = process.hrtime.bigint();
  for (let i = 0; i < calls / 2; i++) {
    recordEdgeOutcome({ consumer });
    recordEdgeOutcome({ plan: 'enterprise', rateLimit: decision });
  }
  return Number(process.hrtime.bigint() - started) / calls;
}

async function main() {
  support.buildUnlessSkipped(args);
  await support.withRunDatabase('bench_tracing', children, async (database) => {
    await support.preparePetsDatabase(database.url, 1000);
    await run(database.url);
  });
}

async function run(DATABASE_URL) {
  const receiver = await support.startDroppingOtlpReceiver();
  const tracingOn = {
    OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${receiver.address().port}`,
    OTEL_TRACES_SAMPLER: 'parentbased_always_on',
  };
  const tracingOff = { OTEL_EXPORTER_OTLP_ENDPOINT: '', OTEL_TRACES_EXPORTER: '' };

  const MODES = {
    off: tracingOff,
    'off (control)': tracingOff,
    'on, all sampled': tracingOn,
    'on, 10% sampled': {
      ...tracingOn,
      OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
      OTEL_TRACES_SAMPLER_ARG: '0.1',
    },
  };
  const gateways = {};
  const admins = [];
  const pids = {};
  for (const [mode, tracing] of Object.entries(MODES)) {
    const [petsPort, gatewayPort, adminPort] = [
      await support.freePort(),
      await support.freePort(),
      await support.freePort(),
    ];
    const common = {
      NODE_ENV: 'production',
      LOG_LEVEL: 'warn',
      CURSOR_SECRET: 'bench-cursor-secret-0123456789abcdef',
      ...tracing,
    };
    const pets = support.startApp(children, `pets ${mode}`, PETS_MAIN, {
      ...common,
      PETS_PORT: String(petsPort),
      DATABASE_URL,
    });
    const gateway = support.startApp(children, `gateway ${mode}`, GATEWAY_MAIN, {
      ...common,
      PORT: String(gatewayPort),
      HOST: '127.0.0.1',
      PETS_URL: `http://127.0.0.1:${petsPort}`,
      REDIS_URL,
      REDIS_KEY_PREFIX: `${RUN}:${gatewayPort}:`,
      GATEWAY_DATABASE_URL: DATABASE_URL,
      ADMIN_PORT: String(adminPort),
      ADMIN_TOKEN,
    });
    gateways[mode] = `http://127.0.0.1:${gatewayPort}`;
    admins.push(`http://127.0.0.1:${adminPort}`);
    pids[mode] = [pets.pid, gateway.pid];
  }
  for (const url of Object.values(gateways)) await support.waitForHttp(`${url}/health/ready`);
  const key = support.mintKey(
    { url: admins[0], token: ADMIN_TOKEN },
    '--plan enterprise --name bench --rpm 1000000000 --rpd 1000000000',
  );
  const auth = { authorization: `Bearer ${key}` };
  const scenarios = {
    list: (url) => ({ url: `${url}/v1/pets?limit=20`, headers: auth }),
    create: (url) => ({
      url: `${url}/v1/pets`,
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Bench', categoryId: 1, status: 'pending' }),
    }),
  };
  console.log(
    `\n${CONNECTIONS} connections, ${ROUNDS} rounds of ${DURATION} s per mode and scenario (after ${WARMUP} s warm-up); servers on core 0, load on core 1${hasTaskset ? '' : ' (taskset missing: not pinned)'}\n`,
  );
  for (const url of Object.values(gateways))
    for (const scenario of Object.values(scenarios)) await load({ ...scenario(url), duration: WARMUP });
  const rounds = {};
  for (let round = 0; round < ROUNDS; round++) {
    for (const [name, scenario] of Object.entries(scenarios)) {
      for (const [mode, url] of Object.entries(gateways)) {
        const row = await measure(scenario(url), pids[mode]);
        ((rounds[mode] ??= {})[name] ??= []).push(row);
        console.log(
          `round ${round + 1}  ${mode.padEnd(16)} ${name.padEnd(7)} ${String(row.rps).padStart(6)} req/s  p50 ${String(row.p50).padStart(3)} ms  p99 ${String(row.p99).padStart(4)} ms  CPU ${row.cpuPerRequestMs.toFixed(2)} ms/req${row.errors ? `  (${row.errors} non-2xx/errors)` : ''}`,
        );
      }
    }
  }
  receiver.close();
  const results = {};
  console.log('\nmedians:');
  for (const [mode, byScenario] of Object.entries(rounds)) {
    for (const [name, rows] of Object.entries(byScenario)) {
      const row = {
        rps: median(rows.map((r) => r.rps)),
        p50: median(rows.map((r) => r.p50)),
        p99: median(rows.map((r) => r.p99)),
        cpuPerRequestMs: median(rows.map((r) => r.cpuPerRequestMs)),
        errors: rows.reduce((n, r) => n + r.errors, 0),
      };
      (results[mode] ??= {})[name] = row;
      console.log(
        `  ${mode.padEnd(16)} ${name.padEnd(7)} ${String(row.rps).padStart(6)} req/s  p50 ${String(row.p50).padStart(3)} ms  p99 ${String(row.p99).padStart(4)} ms  CPU ${row.cpuPerRequestMs.toFixed(2)} ms/req`,
      );
    }
  }
  const ratio = (mode, name, field) =>
    +(results[mode][name][field] / Math.max(results.off[name][field], 0.01)).toFixed(2);
  const ratios = {};
  for (const mode of Object.keys(MODES).slice(1)) {
    for (const name of Object.keys(scenarios)) {
      ratios[`${mode} / off, ${name}, throughput`] = ratio(mode, name, 'rps');
      ratios[`${mode} / off, ${name}, p50`] = ratio(mode, name, 'p50');
      ratios[`${mode} / off, ${name}, CPU per request`] = ratio(mode, name, 'cpuPerRequestMs');
    }
  }
  const recordEdgeOutcomeOffNs = +timeRecordEdgeOutcomeOff().toFixed(1);
  console.log(`\nspans exported: ${(receiver.exportedBytes / 1e6).toFixed(1)} MB of OTLP protobuf`);
  console.log(`recordEdgeOutcome() with tracing off: ${recordEdgeOutcomeOffNs} ns per call (two calls per request)`);
  console.log('ratios (median against median):');
  for (const [name, value] of Object.entries(ratios)) console.log(`  ${name.padEnd(44)} ${value}`);
  const report = {
    date: new Date().toISOString(),
    machine: {
      cpus: require('node:os').cpus().length,
      node: process.version,
      loadAverage: require('node:os').loadavg(),
    },
    connections: CONNECTIONS,
    durationSeconds: DURATION,
    rounds,
    results,
    ratios,
    recordEdgeOutcomeOffNs,
  };
  support.writeResults('tracing.json', report);
}

support.runBench(main, children, 'SIGKILL');
