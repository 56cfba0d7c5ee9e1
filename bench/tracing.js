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
const { spawn, spawnSync, execSync } = require('node:child_process');
const { createServer } = require('node:http');
const { randomBytes } = require('node:crypto');
const { mkdirSync, readFileSync, writeFileSync } = require('node:fs');
const path = require('node:path');
const { appNodeOptions } = require('../scripts/app-node-options');

const args = process.argv.slice(2);
const option = (name, fallback) => (args.includes(name) ? args[args.indexOf(name) + 1] : fallback);
const ROOT = path.join(__dirname, '..');
const DURATION = Number(option('--duration', '5'));
const ROUNDS = Number(option('--rounds', '3'));
const CONNECTIONS = Number(option('--connections', '32'));
const WARMUP = 3;
const hasTaskset = spawnSync('taskset', ['-V']).status === 0;

if (hasTaskset && !process.env.BENCH_PINNED) {
  const child = spawnSync('taskset', ['-c', '1', process.execPath, __filename, ...args], { stdio: 'inherit', env: { ...process.env, BENCH_PINNED: '1' } });
  process.exit(child.status ?? 1);
}

const autocannon = require('autocannon');
const { Client } = require('pg');

const RUN = `bench_tracing_${Date.now()}`;
const PG_BASE = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
const ADMIN_TOKEN = randomBytes(32).toString('base64url');
const sh = (command, env = {}) => execSync(command, { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] }).toString();
const children = [];

function start(name, file, env) {
  const command = hasTaskset ? ['taskset', ['-c', '0', process.execPath, file]] : [process.execPath, [file]];
  const child = spawn(command[0], command[1], { cwd: ROOT, env: { ...process.env, NODE_OPTIONS: appNodeOptions(), ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
  child.stderr.on('data', (chunk) => process.stderr.write(`[${name}] ${chunk}`));
  children.push(child);
  return child;
}

/** CPU time (user + system) a process has used so far, in ms (clock ticks of 10 ms). */
const cpuMs = (pid) => readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ').slice(11, 13).reduce((sum, ticks) => sum + Number(ticks) * 10, 0);

async function waitForReady(url) {
  for (const deadline = Date.now() + 60_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 200))) {
    if (await fetch(url).then((r) => r.ok, () => false)) return;
  }
  throw new Error(`${url} did not come up`);
}

const load = (options) => new Promise((resolve, reject) => autocannon({ connections: CONNECTIONS, ...options }, (e, r) => (e ? reject(e) : resolve(r))));

/** Throughput and latency, and the CPU both apps spent per request: the figure least moved by a busy machine. */
async function measure(options, pids) {
  const cpuBefore = pids.reduce((sum, pid) => sum + cpuMs(pid), 0);
  const result = await load({ ...options, duration: DURATION });
  const cpuPerRequestMs = +((pids.reduce((sum, pid) => sum + cpuMs(pid), 0) - cpuBefore) / Math.max(result.requests.total, 1)).toFixed(3);
  return { rps: Math.round(result.requests.average), p50: result.latency.p50, p99: result.latency.p99, cpuPerRequestMs, errors: result.non2xx + result.errors + result.timeouts };
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

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
  if (!args.includes('--no-build')) {
    console.log('building...');
    sh('npm run -s build');
  }
  const admin = new Client({ connectionString: PG_BASE });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${RUN}`);
  const dbUrl = new URL(PG_BASE);
  dbUrl.pathname = `/${RUN}`;
  const DATABASE_URL = dbUrl.toString();
  sh(`DATABASE_URL=${DATABASE_URL} node dist/apps/pets/apps/pets/src/database/migrate.js`);
  const db = new Client({ connectionString: DATABASE_URL });
  await db.connect();
  await db.query(`INSERT INTO pets (name, category_id, status) SELECT 'Pet ' || i, 1 + i % 10, 'available' FROM generate_series(1, 1000) AS i`);
  await db.end();

  // The collector stand-in: accepts every export and drops it.
  let exportedBytes = 0;
  const receiver = createServer((request, response) => {
    request.on('data', (chunk) => (exportedBytes += chunk.length));
    request.on('end', () => response.writeHead(200, { 'content-type': 'application/x-protobuf' }).end());
  });
  await new Promise((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const tracingOn = { OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${receiver.address().port}`, OTEL_TRACES_SAMPLER: 'parentbased_always_on' };
  const tracingOff = { OTEL_EXPORTER_OTLP_ENDPOINT: '', OTEL_TRACES_EXPORTER: '' };

  const MODES = {
    off: tracingOff,
    'off (control)': tracingOff,
    'on, all sampled': tracingOn,
    'on, 10% sampled': { ...tracingOn, OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.1' },
  };
  const gateways = {};
  const admins = [];
  const pids = {};
  let port = 4110;
  for (const [mode, tracing] of Object.entries(MODES)) {
    const [petsPort, gatewayPort] = [port++, port++];
    const common = { NODE_ENV: 'production', LOG_LEVEL: 'warn', ...tracing };
    const pets = start(`pets ${mode}`, 'dist/apps/pets/apps/pets/src/main.js', { ...common, PETS_PORT: String(petsPort), DATABASE_URL, PETS_METRICS_PORT: '0', CURSOR_SECRET: 'bench-cursor-secret-0123456789abcdef' });
    const gateway = start(`gateway ${mode}`, 'dist/apps/gateway/apps/gateway/src/main.js', {
      ...common,
      PORT: String(gatewayPort),
      HOST: '127.0.0.1',
      METRICS_PORT: '0',
      PETS_URL: `http://127.0.0.1:${petsPort}`,
      REDIS_URL,
      REDIS_KEY_PREFIX: `${RUN}:${port}:`,
      GATEWAY_DATABASE_URL: DATABASE_URL,
      ADMIN_PORT: String(gatewayPort + 20),
      ADMIN_TOKEN,
    });
    gateways[mode] = `http://127.0.0.1:${gatewayPort}`;
    admins.push(`http://127.0.0.1:${gatewayPort + 20}`);
    pids[mode] = [pets.pid, gateway.pid];
  }
  for (const url of Object.values(gateways)) await waitForReady(`${url}/health/ready`);
  const key = sh('node scripts/keys.js create --plan enterprise --name bench --rpm 1000000000 --rpd 1000000000', { ADMIN_URL: admins[0], ADMIN_TOKEN }).trim().split('\n').pop();
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
  console.log(`\n${CONNECTIONS} connections, ${ROUNDS} rounds of ${DURATION} s per mode and scenario (after ${WARMUP} s warm-up); servers on core 0, load on core 1${hasTaskset ? '' : ' (taskset missing: not pinned)'}\n`);
  for (const url of Object.values(gateways)) for (const scenario of Object.values(scenarios)) await load({ ...scenario(url), duration: WARMUP });
  const rounds = {};
  for (let round = 0; round < ROUNDS; round++) {
    for (const [name, scenario] of Object.entries(scenarios)) {
      for (const [mode, url] of Object.entries(gateways)) {
        const row = await measure(scenario(url), pids[mode]);
        ((rounds[mode] ??= {})[name] ??= []).push(row);
        console.log(`round ${round + 1}  ${mode.padEnd(16)} ${name.padEnd(7)} ${String(row.rps).padStart(6)} req/s  p50 ${String(row.p50).padStart(3)} ms  p99 ${String(row.p99).padStart(4)} ms  CPU ${row.cpuPerRequestMs.toFixed(2)} ms/req${row.errors ? `  (${row.errors} non-2xx/errors)` : ''}`);
      }
    }
  }
  receiver.close();
  const results = {};
  console.log('\nmedians:');
  for (const [mode, byScenario] of Object.entries(rounds)) {
    for (const [name, rows] of Object.entries(byScenario)) {
      const row = { rps: median(rows.map((r) => r.rps)), p50: median(rows.map((r) => r.p50)), p99: median(rows.map((r) => r.p99)), cpuPerRequestMs: median(rows.map((r) => r.cpuPerRequestMs)), errors: rows.reduce((n, r) => n + r.errors, 0) };
      (results[mode] ??= {})[name] = row;
      console.log(`  ${mode.padEnd(16)} ${name.padEnd(7)} ${String(row.rps).padStart(6)} req/s  p50 ${String(row.p50).padStart(3)} ms  p99 ${String(row.p99).padStart(4)} ms  CPU ${row.cpuPerRequestMs.toFixed(2)} ms/req`);
    }
  }
  const ratio = (mode, name, field) => +(results[mode][name][field] / Math.max(results.off[name][field], 0.01)).toFixed(2);
  const ratios = {};
  for (const mode of Object.keys(MODES).slice(1)) {
    for (const name of Object.keys(scenarios)) {
      ratios[`${mode} / off, ${name}, throughput`] = ratio(mode, name, 'rps');
      ratios[`${mode} / off, ${name}, p50`] = ratio(mode, name, 'p50');
      ratios[`${mode} / off, ${name}, CPU per request`] = ratio(mode, name, 'cpuPerRequestMs');
    }
  }
  const recordEdgeOutcomeOffNs = +timeRecordEdgeOutcomeOff().toFixed(1);
  console.log(`\nspans exported: ${(exportedBytes / 1e6).toFixed(1)} MB of OTLP protobuf`);
  console.log(`recordEdgeOutcome() with tracing off: ${recordEdgeOutcomeOffNs} ns per call (two calls per request)`);
  console.log('ratios (median against median):');
  for (const [name, value] of Object.entries(ratios)) console.log(`  ${name.padEnd(44)} ${value}`);
  mkdirSync(path.join(__dirname, 'results'), { recursive: true });
  const report = { date: new Date().toISOString(), machine: { cpus: require('node:os').cpus().length, node: process.version, loadAverage: require('node:os').loadavg() }, connections: CONNECTIONS, durationSeconds: DURATION, rounds, results, ratios, recordEdgeOutcomeOffNs };
  writeFileSync(path.join(__dirname, 'results', 'tracing.json'), `${JSON.stringify(report, null, 2)}\n`);
  await admin.query(`DROP DATABASE IF EXISTS ${RUN} WITH (FORCE)`).catch(() => undefined);
  await admin.end();
}

process.on('exit', () => children.forEach((child) => child.kill('SIGKILL')));
main().then(
  () => process.exit(0),
  (error) => {
    console.error(error);
    process.exit(1);
  },
);
