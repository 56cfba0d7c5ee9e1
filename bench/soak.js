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
const { readFileSync } = require('node:fs');
const { setInterval, clearInterval } = require('node:timers');
const support = require('./support');

const {
  SERVER_CORE,
  LOAD_CORE,
  hasTaskset,
  option,
  REDIS_URL,
  median,
  ensureLocalServices,
  until,
  waitForHttp,
  childPids,
  commandLine,
  rssMb,
  peakRssMb,
} = support;
const args = process.argv.slice(2);
const MINUTES = Number(option(args, '--minutes', '10'));
const RATE = Number(option(args, '--rate', '150'));
const SAMPLE_SECONDS = 15;
const WARMUP_SECONDS = 30;
const CONNECTIONS = 8;

support.pinLoadGenerator();

const autocannon = require('autocannon');

const PORT_BASE = Number(process.env.BENCH_PORT_BASE || 4100);
const PORTS = { gateway: PORT_BASE + 20, pets: PORT_BASE + 21, admin: PORT_BASE + 30 };
const RUN = support.runId('bench_soak');
const children = [];

/** The pids of the two apps: children of scripts/start.js, told apart by their entry point. */
async function appPids(startPid) {
  const found = {};
  await until('scripts/start.js starting both apps', () => {
    for (const pid of childPids(startPid)) {
      const command = commandLine(pid);
      if (command.includes(support.PETS_MAIN)) found.pets = pid;
      if (command.includes(support.GATEWAY_MAIN)) found.gateway = pid;
    }
    return found.pets && found.gateway;
  });
  return found;
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
  const timers = [
    setInterval(() => ask(freeKey), 60_000 / 75),
    setInterval(() => ask('pk_unknown_0123456789abcdef0123456789abcdef'), 5_000),
  ];
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
          {
            method: 'POST',
            path: '/v1/pets',
            headers: { ...auth, 'content-type': 'application/json' },
            body: JSON.stringify({ name: 'Soak', categoryId: 1, status: 'pending' }),
          },
          {
            method: 'GET',
            path: '/v1/pets/1',
            headers: auth,
            setupRequest: (request) => ({ ...request, path: `/v1/pets/${1 + Math.floor(Math.random() * 1000)}` }),
          },
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
  ensureLocalServices();
  support.buildUnlessSkipped(args);
  await support.withRunDatabase('bench_soak', children, async (database) => {
    await support.preparePetsDatabase(database.url, 1000);
    await soak(database.url);
  });
}

async function soak(DATABASE_URL) {
  const admin = { url: `http://127.0.0.1:${PORTS.admin}`, token: `bench-admin-token-${RUN}-0123456789abcdef` };
  // Exactly how `npm start` runs the apps (scripts/start.js, no --build: built above), servers configured.
  const stack = support.start(children, 'start', process.execPath, ['scripts/start.js'], {
    NODE_ENV: 'production',
    LOG_LEVEL: 'warn',
    PORT: String(PORTS.gateway),
    HOST: '127.0.0.1',
    PETS_PORT: String(PORTS.pets),
    // Metrics on ports the OS picks, as in the other benches: the defaults may be taken by another run.
    METRICS_PORT: '0',
    PETS_METRICS_PORT: '0',
    PETS_URL: `http://127.0.0.1:${PORTS.pets}`,
    DATABASE_URL,
    GATEWAY_DATABASE_URL: DATABASE_URL,
    CURSOR_SECRET: 'bench-cursor-secret-0123456789abcdef',
    REDIS_URL,
    REDIS_KEY_PREFIX: `${RUN}:`,
    ADMIN_PORT: String(PORTS.admin),
    ADMIN_TOKEN: admin.token,
  });
  const pids = await appPids(stack.pid);
  await waitForHttp(`http://127.0.0.1:${PORTS.pets}/health/ready`);
  await waitForHttp(`http://127.0.0.1:${PORTS.gateway}/health/ready`);
  const mint = (flags) => support.mintKey(admin, flags);
  const key = mint('--plan enterprise --name soak --rpm 1000000000 --rpd 1000000000');
  const freeKey = mint('--plan free --name soak-free');
  // Flags on the command line, and those start.js passes in NODE_OPTIONS (scripts/app-node-options.js).
  const environment = readFileSync(`/proc/${pids.gateway}/environ`, 'utf8').split('\0');
  const nodeOptions = (environment.find((entry) => entry.startsWith('NODE_OPTIONS=')) ?? '').slice(
    'NODE_OPTIONS='.length,
  );
  const flags = [...commandLine(pids.gateway).split(' '), ...nodeOptions.split(' ')].filter((part) =>
    part.startsWith('-'),
  );
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
    const row = {
      seconds: Math.round((Date.now() - started) / 1000),
      petsMb: rssMb(pids.pets),
      gatewayMb: rssMb(pids.gateway),
    };
    samples.push(row);
    console.log(
      `${String(row.seconds).padStart(6)} s   pets ${String(row.petsMb).padStart(5)} MB   gateway ${String(row.gatewayMb).padStart(5)} MB`,
    );
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
    growth[app] = {
      firstThirdMedianMb: first,
      lastThirdMedianMb: last,
      growthMb: +(last - first).toFixed(1),
      peakMb: peakRssMb(pids[app]),
    };
  }
  const alive = samples.at(-1).petsMb > 0 && samples.at(-1).gatewayMb > 0;
  console.log(
    `\nmain load: ${result.requests.total} responses, ${Math.round(result.requests.average)} req/s, p99 ${result.latency.p99} ms, statuses ${JSON.stringify(statuses)}, errors ${result.errors}`,
  );
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
  support.writeResults('soak.json', report);
}

support.runBench(main, children);
