/**
 * npm run bench:throttler-guard: the CPU one admission decision costs in process, PlanThrottlerGuard.decide as the
 * pipeline calls it (an ExecutionContext over request, response and the request's ApiExchange carrying an
 * authenticated consumer: the package's resolution, the one store call, the headers), for a consumer without
 * credits and one with prepaid credits in force (a daily refill, cost 1, a balance that never runs out), against
 * the bare store call it wraps. On the in-process store, and on Redis with --redis URL (the gateway process's CPU
 * only: Redis's own is not counted), where it also counts the commands the store's connection sends per decision
 * (MONITOR, over a separate run of --count decisions, filtered to that connection's address).
 * Options: --calls N (100,000 per round), --rounds N (5), --redis URL, --count N (1,000), --built DIR (the
 * compiled gateway to measure, default this checkout's dist: a build of an older commit measures "before").
 * Prints every round, the medians in µs CPU per decision, and the load average. Needs `npm run build`.
 */
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { median, option } = require('./support');

const args = process.argv.slice(2);

const ROOT = path.resolve(option(args, '--built', path.join(__dirname, '..')));
const BUILT = path.join(ROOT, 'dist/apps/gateway/apps/gateway/src');
const CALLS = Number(option(args, '--calls', '100000'));
const ROUNDS = Number(option(args, '--rounds', '5'));
const REDIS_URL = option(args, '--redis', '');
const COUNT = Number(option(args, '--count', '1000'));

const cpuMicros = (since) => {
  const used = process.cpuUsage(since);
  return used.user + used.system;
};
const load = () =>
  os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
const fromBuild = (file) => require(path.join(BUILT, file));

/** One store (in-process, or Redis at `redisUrl`): every round measures each consumer's decide and the bare call. */
async function measure(redisUrl) {
  const { loadGatewayConfig } = fromBuild('config/gateway.config.js');
  const { loadPlans } = fromBuild('plans/plans.js');
  const { createGatewayApp } = fromBuild('create-gateway-app.js');
  const { PlanThrottlerGuard } = fromBuild('rate-limit/plan-throttler.guard.js');
  const { RateLimitStore } = fromBuild('rate-limit/rate-limit-store.js');
  const { PetsProxyController } = fromBuild('proxy/pets-proxy.controller.js');
  const { ApiExchange } = fromBuild('routing/api-exchange.js');
  const { executionContext } = fromBuild('nest-internals.js');
  // Credits live in credits/ (billing/credits/ in older builds; none before prepaid credits).
  const withCredits = ['credits', 'billing/credits'].some((dir) =>
    fs.existsSync(path.join(BUILT, dir, 'credits.service.js')),
  );

  const prefix = `bench-guard-${process.pid}:`;
  const config = loadGatewayConfig({
    NODE_ENV: 'test',
    LOG_LEVEL: 'error',
    GATEWAY_PGLITE_DATA_DIR: 'memory://',
    METRICS_PORT: '0',
    ...(redisUrl ? { REDIS_URL: redisUrl, REDIS_KEY_PREFIX: prefix } : {}),
  });
  const app = await createGatewayApp({ config, plans: loadPlans(config.plansFile) });
  const guard = app.get(PlanThrottlerGuard);
  const store = app.get(RateLimitStore);
  const limits = { perMinute: 1e12, perDay: 1e12 };
  const anchor = Date.UTC(2026, 0, 1);
  const consumers = { 'no credits': { name: 'bench-plain', plan: 'enterprise', limits, billingAnchorMs: anchor } };
  if (withCredits) {
    consumers.credits = {
      name: 'bench-credits',
      plan: 'enterprise',
      limits,
      billingAnchorMs: anchor,
      credits: { refill: { amount: 1000, every: 'day' }, refillSet: true, costs: {} },
    };
    // A balance that never runs out, set as the admin API sets one (every decision is an admitted one).
    await store.credits('consumer:bench-credits', { set: 1e15 }, async () => ({
      balance: 0,
      refilledPeriodStartMs: 0,
    }));
  }
  const response = { setHeader() {} };
  const decide = (consumer) => {
    const request = { method: 'GET', url: '/v1/pets', headers: {}, socket: {} };
    const exchange = new ApiExchange(request, response, '/v1/pets');
    exchange.consumer = consumer;
    return guard.decide(
      executionContext([request, response, exchange], PetsProxyController, PetsProxyController.prototype.listPets),
    );
  };
  // The guard must see the consumer (the bench measured the anonymous path when it did not): its tracker counts.
  await decide(consumers['no credits']);
  const usage = await store.usage('consumer:bench-plain', [{ name: 'minute', limit: 1e12, ttlMs: 60_000 }]);
  if (usage.windows[0].count !== 1) throw new Error('the guard did not count the consumer');

  const windows = [
    { name: 'minute', limit: 1e12, ttlMs: 60_000 },
    { name: 'day', limit: 1e12, ttlMs: 86_400_000 },
  ];
  const ban = { threshold: 20, durationMs: 600_000, graceMs: 5_000 };
  const rounds = Object.fromEntries([...Object.keys(consumers), 'store.consume alone'].map((k) => [k, []]));
  for (let round = 0; round < ROUNDS; round += 1) {
    for (const [label, consumer] of Object.entries(consumers)) {
      const since = process.cpuUsage();
      for (let i = 0; i < CALLS; i += 1) await decide(consumer);
      rounds[label].push(cpuMicros(since) / CALLS);
    }
    const since = process.cpuUsage();
    for (let i = 0; i < CALLS; i += 1) await store.consume('consumer:bench-bare', windows, ban);
    rounds['store.consume alone'].push(cpuMicros(since) / CALLS);
    console.log(
      `  round ${round + 1}: ${Object.entries(rounds)
        .map(([k, v]) => `${k} ${v[round].toFixed(2)} µs`)
        .join(', ')}`,
    );
  }
  const medians = Object.fromEntries(Object.entries(rounds).map(([k, v]) => [k, median(v)]));
  // The credits' own cost, round by round (both consumers measured back to back, under the same load).
  if (withCredits)
    medians['credits - no credits, per round'] = median(rounds.credits.map((c, i) => c - rounds['no credits'][i]));
  if (withCredits) {
    const after = await store.credits('consumer:bench-credits', { read: true }, async () => {
      throw new Error('the balance is held');
    });
    const spent = 1e15 - after.after;
    if (spent < ROUNDS * CALLS) throw new Error(`credits not spent: ${spent}`);
  }

  let commands;
  if (redisUrl) {
    const Redis = require(require.resolve('ioredis', { paths: [ROOT] }));
    const socket = store.redis.stream;
    const address = `${socket.localAddress}:${socket.localPort}`;
    const monitor = await new Redis(redisUrl).monitor();
    commands = {};
    for (const label of Object.keys(consumers)) {
      const seen = [];
      const listener = (_time, argv, source) => {
        if (source === address) seen.push(String(argv[0]).toLowerCase());
      };
      monitor.on('monitor', listener);
      await new Promise((resolve) => setTimeout(resolve, 200));
      for (let i = 0; i < COUNT; i += 1) await decide(consumers[label]);
      await new Promise((resolve) => setTimeout(resolve, 500));
      monitor.off('monitor', listener);
      const kinds = {};
      for (const name of seen) kinds[name] = (kinds[name] ?? 0) + 1;
      commands[label] = { perDecision: seen.length / COUNT, kinds };
    }
    monitor.disconnect();
    const cleanup = new Redis(redisUrl);
    const keys = await cleanup.keys(`${prefix}*`);
    if (keys.length) await cleanup.del(...keys);
    cleanup.disconnect();
  }
  await app.close();
  return { medians, commands };
}

async function main() {
  process.chdir(ROOT);
  console.log(`build: ${ROOT}; ${CALLS} calls x ${ROUNDS} rounds; load average before: ${load()}`);
  for (const [label, url] of [['in-process store', ''], ...(REDIS_URL ? [['Redis', REDIS_URL]] : [])]) {
    console.log(`${label}:`);
    const { medians, commands } = await measure(url);
    for (const [k, v] of Object.entries(medians)) console.log(`  median ${k}: ${v.toFixed(2)} µs CPU per decision`);
    for (const [k, v] of Object.entries(commands ?? {}))
      console.log(`  Redis commands per decision, ${k}: ${v.perDecision} (${JSON.stringify(v.kinds)})`);
  }
  console.log(`load average after: ${load()}`);
}

main().then(
  () => process.exit(0),
  (error) => {
    console.error(error);
    process.exit(1);
  },
);
