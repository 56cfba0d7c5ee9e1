#!/usr/bin/env node
/**
 * `npm run bench:soak [-- --minutes N --rate N --no-build]`: do the apps' resident memories stay flat under a long
 * moderate load, as they are started by default?
 *
 * Starts the pets service and the gateway through scripts/start.js (what `npm start` runs, so with exactly the
 * Node flags the default start gives them, and no others) on PostgreSQL (a fresh database) and Redis (a key
 * prefix of its own), production mode, LOG_LEVEL=warn, pinned to core 0; the load generator runs on core 1.
 * Load, after a 30 s warm-up, for --minutes (10): --rate (150) req/s over 8 connections cycling GET
 * /v1/pets?limit=20, POST /v1/pets and GET /v1/pets/{random id} on an Enterprise key whose limits never trigger,
 * plus a Free key (60/min) asking 75 times a minute (429s, without reaching a ban) and an unknown key every 5 s
 * (401s, under the anonymous limit). Samples VmRSS of both apps every 15 s, prints the table and, per app, the
 * growth: median of the last third of the samples minus median of the first third, in MB.
 * Writes bench/results/soak.json. Exits 0 whatever the growth (judging it is for the reader); 1 if it cannot run.
 * Ports: BENCH_PORT_BASE (4100) + 20 (gateway), + 21 (pets), + 30 (admin API). BENCH_DATABASE_URL, BENCH_REDIS_URL.
 */
const { execSync } = require('node:child_process');
const { writeFileSync, mkdirSync, readFileSync } = require('node:fs');
const path = require('node:path');
const { setInterval, clearInterval } = require('node:timers');
const support = require('./support');

const { ROOT, SERVER_CORE, LOAD_CORE, hasTaskset, sh, ensureServices, waitForHttp, childPids, commandLine, rssMb, peakRssMb } = support;
const args = process.argv.slice(2);
const option = (name, fallback) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : fallback;
};
const MINUTES = Number(option('--minutes', '10'));
const RATE = Number(option('--rate', '150'));
const SAMPLE_SECONDS = 15;
const WARMUP_SECONDS = 30;
const CONNECTIONS = 8;

support.pinLoadGenerator(__filename, args);

const autocannon = require('autocannon');
const { Client } = require('pg');

const PORT_BASE = Number(process.env.BENCH_PORT_BASE || 4100);
const PORTS = { gateway: PORT_BASE + 20, pets: PORT_BASE + 21, admin: PORT_BASE + 30 };
const RUN = `bench_soak_${Date.now()}`;
const PG_BASE = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
const children = [];

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
};
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** The pids of the two apps: children of scripts/start.js, told apart by their entry point. */
async function appPids(startPid) {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    const found = {};
    for (const pid of childPids(startPid)) {
      const command = commandLine(pid);
      if (command.includes('apps/pets/src/main.js')) found.pets = pid;
      if (command.includes('apps/gateway/src/main.js')) found.gateway = pid;
    }
    if (found.pets && found.gateway) return found;
    await sleep(200);
  }
  throw new Error('scripts/start.js did not start both apps');
}

/** Side traffic, counted by status: a Free key over its limit, an unknown key. Stops when `until` has passed. */
function sideTraffic(freeKey, statuses, until) {
  const url = `http://127.0.0.1:${PORTS.gateway}/v1/pets?limit=5`;
  const ask = (key) =>
    fetch(url, { headers: { authorization: `Bearer ${key}` } }).then(
      async (response) => {
        await response.arrayBuffer();
        statuses[response.status] = (statuses[response.status] ?? 0) + 1;
      },
      () => (statuses.error = (statuses.error ?? 0) + 1),
    );
  const timers = [setInterval(() => ask(freeKey), 60_000 / 75), setInterval(() => ask('pk_unknown_0123456789abcdef0123456789abcdef'), 5_000)];
  return new Promise((resolve) =>
    setTimeout(() => {
      timers.forEach(clearInterval);
      resolve();
    }, until - Date.now()),
  );
}

function mixedLoad(key, seconds, statuses) {
  const auth = { authorization: `Bearer ${key}` };
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      {
        url: `http://127.0.0.1:${PORTS.gateway}`,
        connections: CONNECTIONS,
        overallRate: RATE,
        duration: seconds,
        requests: [
          { method: 'GET', path: '/v1/pets?limit=20', headers: auth },
          { method: 'POST', path: '/v1/pets', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'Soak', categoryId: 1, status: 'pending' }) },
          { method: 'GET', path: '/v1/pets/1', headers: auth, setupRequest: (request) => ({ ...request, path: `/v1/pets/${1 + Math.floor(Math.random() * 1000)}` }) },
        ],
      },
      (error, result) => (error ? reject(error) : resolve(result)),
    );
    instance.on('response', (client, statusCode) => {
      statuses[statusCode] = (statuses[statusCode] ?? 0) + 1;
    });
  });
}

async function main() {
  ensureServices();
  support.buildUnlessSkipped(args);
  const database = await support.createRunDatabase(PG_BASE, RUN);
  try {
    const DATABASE_URL = database.url;
    sh(`node dist/apps/pets/apps/pets/src/database/migrate.js`, { DATABASE_URL });
    const db = new Client({ connectionString: DATABASE_URL });
    await db.connect();
    await db.query(`INSERT INTO pets (name, category_id, status) SELECT 'Pet ' || i, 1 + i % 10, 'available' FROM generate_series(1, 1000) AS i`);
    await db.end();
    await soak(DATABASE_URL);
  } finally {
    stopAll();
    await sleep(1_000);
    await database.drop();
  }
}

async function soak(DATABASE_URL) {
  const ADMIN = { ADMIN_URL: `http://127.0.0.1:${PORTS.admin}`, ADMIN_TOKEN: `bench-admin-token-${RUN}-0123456789abcdef` };
  // Exactly how `npm start` runs the apps (scripts/start.js, no --build: built above), servers configured.
  const stack = support.start(children, 'start', process.execPath, ['scripts/start.js'], {
    NODE_ENV: 'production',
    LOG_LEVEL: 'warn',
    PORT: String(PORTS.gateway),
    HOST: '127.0.0.1',
    PETS_PORT: String(PORTS.pets),
    PETS_URL: `http://127.0.0.1:${PORTS.pets}`,
    DATABASE_URL,
    GATEWAY_DATABASE_URL: DATABASE_URL,
    CURSOR_SECRET: 'bench-cursor-secret-0123456789abcdef',
    REDIS_URL,
    REDIS_KEY_PREFIX: `${RUN}:`,
    ADMIN_PORT: String(PORTS.admin),
    ADMIN_TOKEN: ADMIN.ADMIN_TOKEN,
  });
  const pids = await appPids(stack.pid);
  await waitForHttp(`http://127.0.0.1:${PORTS.pets}/health/ready`, 60_000);
  await waitForHttp(`http://127.0.0.1:${PORTS.gateway}/health/ready`, 60_000);
  const mint = (flags) =>
    execSync(`node scripts/keys.js create ${flags}`, { cwd: ROOT, env: { ...process.env, ...ADMIN } }).toString().trim().split('\n').pop();
  const key = mint('--plan enterprise --name soak --rpm 1000000000 --rpd 1000000000');
  const freeKey = mint('--plan free --name soak-free');
  // Flags on the command line, and those start.js passes in NODE_OPTIONS (scripts/app-node-options.js).
  const environment = readFileSync(`/proc/${pids.gateway}/environ`, 'utf8').split('\0');
  const nodeOptions = (environment.find((entry) => entry.startsWith('NODE_OPTIONS=')) ?? '').slice('NODE_OPTIONS='.length);
  const flags = [...commandLine(pids.gateway).split(' '), ...nodeOptions.split(' ')].filter((part) => part.startsWith('-'));
  console.log(
    `\nsoak: ${MINUTES} min at ${RATE} req/s (${CONNECTIONS} connections; GET list, POST, GET by id) + a Free key at 75/min + an unknown key every 5 s;` +
      ` apps started by scripts/start.js (node flags: ${flags.length ? flags.join(' ') : 'none'}), servers on core ${SERVER_CORE}, load on core ${LOAD_CORE}${hasTaskset ? '' : ' (taskset missing: not pinned)'}`,
  );

  console.log(`warm-up ${WARMUP_SECONDS} s...`);
  await Promise.all([mixedLoad(key, WARMUP_SECONDS, {}), sideTraffic(freeKey, {}, Date.now() + WARMUP_SECONDS * 1000)]);

  const statuses = {};
  const side = {};
  const started = Date.now();
  const end = started + MINUTES * 60_000;
  const samples = [];
  const sample = () => {
    const row = { seconds: Math.round((Date.now() - started) / 1000), petsMb: rssMb(pids.pets), gatewayMb: rssMb(pids.gateway) };
    samples.push(row);
    console.log(`${String(row.seconds).padStart(6)} s   pets ${String(row.petsMb).padStart(5)} MB   gateway ${String(row.gatewayMb).padStart(5)} MB`);
  };
  console.log('\n  time   resident memory (VmRSS)');
  sample();
  const sampler = setInterval(sample, SAMPLE_SECONDS * 1000);
  const [result] = await Promise.all([mixedLoad(key, MINUTES * 60, statuses), sideTraffic(freeKey, side, end)]);
  clearInterval(sampler);
  if (Date.now() - started - samples.at(-1).seconds * 1000 > 5_000) sample();

  const third = Math.max(1, Math.floor(samples.length / 3));
  const growth = {};
  for (const app of ['pets', 'gateway']) {
    const values = samples.map((row) => row[`${app}Mb`]);
    const first = median(values.slice(0, third));
    const last = median(values.slice(-third));
    growth[app] = { firstThirdMedianMb: first, lastThirdMedianMb: last, growthMb: +(last - first).toFixed(1), peakMb: peakRssMb(pids[app]) };
  }
  const alive = samples.at(-1).petsMb > 0 && samples.at(-1).gatewayMb > 0;
  console.log(`\nmain load: ${result.requests.total} responses, ${Math.round(result.requests.average)} req/s, p99 ${result.latency.p99} ms, statuses ${JSON.stringify(statuses)}, errors ${result.errors}`);
  console.log(`side traffic (Free key, unknown key) statuses ${JSON.stringify(side)}`);
  for (const [app, g] of Object.entries(growth)) {
    console.log(
      `soak growth ${app.padEnd(7)} ${g.growthMb >= 0 ? '+' : ''}${g.growthMb} MB (median of the first third ${g.firstThirdMedianMb} MB, of the last third ${g.lastThirdMedianMb} MB; peak ${g.peakMb} MB)`,
    );
  }
  if (!alive) console.log('soak: an app was gone before the end (resident memory 0): see its output above');
  const report = {
    date: new Date().toISOString(),
    machine: { cpus: require('node:os').cpus().length, node: process.version },
    minutes: MINUTES,
    rate: RATE,
    connections: CONNECTIONS,
    nodeFlags: flags,
    sampleSeconds: SAMPLE_SECONDS,
    samples,
    growth,
    statuses,
    sideStatuses: side,
    latencyP99Ms: result.latency.p99,
    bothAppsAlive: alive,
  };
  mkdirSync(path.join(__dirname, 'results'), { recursive: true });
  writeFileSync(path.join(__dirname, 'results', 'soak.json'), `${JSON.stringify(report, null, 2)}\n`);
}

function stopAll() {
  for (const child of children) child.kill('SIGTERM');
}
process.on('exit', stopAll);
process.on('SIGINT', () => process.exit(130));
main().then(
  () => process.exit(0),
  (error) => {
    console.error(error);
    stopAll();
    process.exit(1);
  },
);
