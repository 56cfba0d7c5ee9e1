#!/usr/bin/env node
/**
 * `npm run bench:admission` (also run at the end of `npm run bench`): do the rate limits hold under pressure?
 *
 * 1. Admission on a loaded machine: two gateway instances sharing Redis and a fresh consumers database on
 *    PostgreSQL (keys minted through the first one's admin API; servers pinned to core 0), a
 *    throughput load (autocannon) on an Enterprise key through both, and meanwhile 1,000 concurrent requests
 *    with a fresh Free key spread over both instances. Reports admitted / limit (must be 60 / 60), per round.
 * 2. Memory under a flood of forwarded addresses: 20,000 keyless requests, each with a unique 8 KB
 *    X-Forwarded-For whose last entry (the one a trusted proxy appends; TRUST_PROXY=1) is a unique IPv4
 *    address: the worst case, 20,000 real trackers. Reports the gateway's resident memory before and after,
 *    and the Redis keys it created (count, bytes by MEMORY USAGE, longest name).
 * Options: --no-build, --rounds N (default 3), --flood N (default 20000); BENCH_DATABASE_URL, BENCH_REDIS_URL.
 */
const { randomBytes } = require('node:crypto');
const support = require('./support');

const { hasTaskset, option, REDIS_URL, PETS_MAIN, GATEWAY_MAIN, rssMb } = support;
const args = process.argv.slice(2);
const ROUNDS = Number(option(args, '--rounds', '3'));
const FLOOD = Number(option(args, '--flood', '20000'));

support.pinLoadGenerator();

const autocannon = require('autocannon');
const Redis = require('ioredis');
const RUN = support.runId('bench_admission');
const ADMIN_TOKEN = randomBytes(32).toString('base64url');
const children = [];
/** Free ports, taken in main(). */
const PORTS = { pets: 0, gateways: [0, 0], admins: [0, 0] };

function throughputLoad(key, seconds) {
  const loads = PORTS.gateways.map(
    (port) =>
      new Promise((resolve, reject) => {
        autocannon(
          {
            url: `http://127.0.0.1:${port}/v1/pets?limit=20`,
            headers: { authorization: `Bearer ${key}` },
            connections: 16,
            duration: seconds,
          },
          (error, result) => (error ? reject(error) : resolve(result)),
        );
      }),
  );
  return Promise.all(loads);
}

async function admissionRound(freeKey, loadKey) {
  const load = throughputLoad(loadKey, 6);
  await new Promise((resolve) => setTimeout(resolve, 1_500)); // let the load saturate the gateways first
  const started = Date.now();
  const statuses = await Promise.all(
    Array.from({ length: 1_000 }, (_, i) =>
      fetch(`http://127.0.0.1:${PORTS.gateways[i % 2]}/v1/pets?limit=1`, {
        headers: { authorization: `Bearer ${freeKey}` },
      })
        .then(async (response) => {
          await response.arrayBuffer();
          return response.status;
        })
        .catch(() => 'error'),
    ),
  );
  const burstMs = Date.now() - started;
  const loadResults = await load;
  const count = (status) => statuses.filter((s) => s === status).length;
  const others = statuses.filter((s) => s !== 200 && s !== 429);
  return {
    admitted: count(200),
    limit: 60,
    refused429: count(429),
    other: others.length,
    burstMs,
    loadRps: Math.round(loadResults.reduce((sum, r) => sum + r.requests.average, 0)),
  };
}

/** FLOOD keyless requests to one instance; `unique`: each appended address differs, else all share one. */
async function flood(port, gatewayPid, unique) {
  const before = rssMb(gatewayPid);
  const padding = 'x'.repeat(8_000);
  let next = 0;
  const worker = async () => {
    while (next < FLOOD) {
      const i = next++;
      const address = unique ? `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}` : '192.0.2.1';
      const response = await fetch(`http://127.0.0.1:${port}/v1/pets`, {
        headers: { 'x-forwarded-for': `${padding}${i}, ${address}` },
      });
      await response.arrayBuffer();
    }
  };
  const started = Date.now();
  await Promise.all(Array.from({ length: 50 }, worker));
  const seconds = (Date.now() - started) / 1000;
  const after = rssMb(gatewayPid);
  if (!unique) return { requests: FLOOD, seconds: +seconds.toFixed(1), gatewayRssMb: { before, after } };

  const redis = new Redis(REDIS_URL);
  let keys = 0;
  let bytes = 0;
  let longest = 0;
  let cursor = '0';
  do {
    const [nextCursor, batch] = await redis.scan(cursor, 'MATCH', `${RUN}:rl:{anonymous:*`, 'COUNT', 1000);
    cursor = nextCursor;
    keys += batch.length;
    for (const key of batch) {
      longest = Math.max(longest, Buffer.byteLength(key));
      bytes += Number(await redis.memory('USAGE', key)) || 0;
    }
  } while (cursor !== '0');
  redis.disconnect();
  return {
    requests: FLOOD,
    seconds: +seconds.toFixed(1),
    gatewayRssMb: { before, after },
    redis: { keys, kb: Math.round(bytes / 1024), longestKeyBytes: longest },
  };
}

async function main() {
  support.buildUnlessSkipped(args);
  PORTS.pets = await support.freePort();
  PORTS.gateways = [await support.freePort(), await support.freePort()];
  PORTS.admins = [await support.freePort(), await support.freePort()];
  // The consumers database both instances share: a fresh one on the PostgreSQL server, dropped at the end.
  await support.withRunDatabase('bench_admission', children, (database) => run(database.url));
}

async function run(GATEWAY_DATABASE_URL) {
  support.startApp(children, 'pets', PETS_MAIN, {
    NODE_ENV: 'production',
    LOG_LEVEL: 'warn',
    PETS_PORT: String(PORTS.pets),
    PGLITE_DATA_DIR: 'memory://',
    CURSOR_SECRET: 'bench-cursor-secret-0123456789abcdef',
  });
  const gateways = PORTS.gateways.map((port, i) =>
    support.startApp(children, `gateway ${i + 1}`, GATEWAY_MAIN, {
      NODE_ENV: 'production',
      LOG_LEVEL: 'error',
      PORT: String(port),
      HOST: '127.0.0.1',
      PETS_URL: `http://127.0.0.1:${PORTS.pets}`,
      REDIS_URL,
      REDIS_KEY_PREFIX: `${RUN}:`,
      GATEWAY_DATABASE_URL,
      ADMIN_PORT: String(PORTS.admins[i]),
      ADMIN_TOKEN,
      TRUST_PROXY: '1',
    }),
  );
  await support.waitForHttp(`http://127.0.0.1:${PORTS.pets}/health/live`);
  for (const port of PORTS.gateways) await support.waitForHttp(`http://127.0.0.1:${port}/health/live`);
  // Keys are minted through instance 1's admin API; instance 2 reads them from the shared database.
  const mint = (flags) => support.mintKey({ url: `http://127.0.0.1:${PORTS.admins[0]}`, token: ADMIN_TOKEN }, flags);
  const loadKey = mint('--plan enterprise --name load --rpm 1000000000 --rpd 1000000000');
  const freeKeys = Array.from({ length: ROUNDS }, (_, i) => mint(`--plan free --name admission-${i}`));

  console.log(
    `\nadmission: 1,000 concurrent requests, fresh Free key, two instances sharing Redis, throughput load on a second key${hasTaskset ? '' : ' (taskset missing: not pinned)'}`,
  );
  const rounds = [];
  for (let i = 0; i < ROUNDS; i += 1) {
    const round = await admissionRound(freeKeys[i], loadKey);
    rounds.push(round);
    console.log(
      `  round ${i + 1}: admitted ${round.admitted} / ${round.limit}, 429 ${round.refused429}, other ${round.other}, burst answered in ${round.burstMs} ms, load ${round.loadRps} req/s`,
    );
  }
  console.log(
    `\nflood: ${FLOOD.toLocaleString('en')} keyless requests, unique 8 KB X-Forwarded-For, unique appended IPv4 (TRUST_PROXY=1)`,
  );
  const memory = await flood(PORTS.gateways[0], gateways[0].pid, true);
  console.log(
    `  instance 1, unique addresses:  resident memory ${memory.gatewayRssMb.before} MB -> ${memory.gatewayRssMb.after} MB (${memory.seconds} s)`,
  );
  const control = await flood(PORTS.gateways[1], gateways[1].pid, false);
  console.log(
    `  instance 2, one address (control): resident memory ${control.gatewayRssMb.before} MB -> ${control.gatewayRssMb.after} MB (${control.seconds} s)`,
  );
  console.log(
    `  Redis: ${memory.redis.keys} anonymous keys, ${memory.redis.kb} KB (MEMORY USAGE), longest key ${memory.redis.longestKeyBytes} bytes`,
  );

  support.writeResults('admission.json', { date: new Date().toISOString(), rounds, memory, control });
  const redis = new Redis(REDIS_URL);
  let cursor = '0';
  do {
    const [nextCursor, batch] = await redis.scan(cursor, 'MATCH', `${RUN}:*`, 'COUNT', 1000);
    cursor = nextCursor;
    if (batch.length) await redis.del(...batch);
  } while (cursor !== '0');
  redis.disconnect();
  if (rounds.some((round) => round.admitted !== round.limit)) {
    console.error('admission: admitted != limit');
    process.exitCode = 1;
  }
}

support.runBench(main, children);
