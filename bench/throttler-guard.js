/**
 * npm run bench:throttler-guard: the CPU one admission decision costs in process, PlanThrottlerGuard.decide (the
 * package's resolution, the one store call, the headers) against the bare store call it wraps, on the in-process
 * store, so that the guard's own share of a request's CPU is measured without the network or a second process.
 * Options: --calls N (100,000 per round), --rounds N (5); prints every round and the medians. Needs `npm run build`.
 */
const path = require('node:path');
const { median, option } = require('./support');

const args = process.argv.slice(2);

const BUILT = path.join(__dirname, '..', 'dist/apps/gateway/apps/gateway/src');
const CALLS = Number(option(args, '--calls', '100000'));
const ROUNDS = Number(option(args, '--rounds', '5'));

const cpuMicros = (since) => {
  const used = process.cpuUsage(since);
  return used.user + used.system;
};

async function main() {
  process.chdir(path.join(__dirname, '..'));
  const { loadGatewayConfig } = require(path.join(BUILT, 'config/gateway.config.js'));
  const { loadPlans } = require(path.join(BUILT, 'plans/plans.js'));
  const { createGatewayApp } = require(path.join(BUILT, 'create-gateway-app.js'));
  const { PlanThrottlerGuard } = require(path.join(BUILT, 'rate-limit/plan-throttler.guard.js'));
  const { RateLimitStore } = require(path.join(BUILT, 'rate-limit/rate-limit-store.js'));
  const { PetsProxyController } = require(path.join(BUILT, 'proxy/pets-proxy.controller.js'));
  const { ExecutionContextHost } = require(require.resolve('@nestjs/core/helpers/execution-context-host.js'));

  const config = loadGatewayConfig({
    NODE_ENV: 'test',
    LOG_LEVEL: 'error',
    GATEWAY_PGLITE_DATA_DIR: 'memory://',
    METRICS_PORT: '0',
  });
  const app = await createGatewayApp({ config, plans: loadPlans(config.plansFile) });
  const guard = app.get(PlanThrottlerGuard);
  const store = app.get(RateLimitStore);
  const consumer = { name: 'bench', plan: 'enterprise', limits: { perMinute: 1e12, perDay: 1e12 } };
  const response = { setHeader() {} };
  const windows = [
    { name: 'minute', limit: 1e12, ttlMs: 60_000 },
    { name: 'day', limit: 1e12, ttlMs: 86_400_000 },
  ];
  const ban = { threshold: 20, durationMs: 600_000, graceMs: 5_000 };
  const guardRounds = [];
  const storeRounds = [];
  for (let round = 0; round < ROUNDS; round += 1) {
    let since = process.cpuUsage();
    for (let i = 0; i < CALLS; i += 1) {
      const request = { consumer, headers: {}, socket: {} };
      await guard.decide(
        new ExecutionContextHost([request, response], PetsProxyController, PetsProxyController.prototype.listPets),
      );
    }
    guardRounds.push(cpuMicros(since) / CALLS);
    since = process.cpuUsage();
    for (let i = 0; i < CALLS; i += 1) await store.consume('consumer:bench', windows, ban);
    storeRounds.push(cpuMicros(since) / CALLS);
    console.log(
      `round ${round + 1}: PlanThrottlerGuard.decide ${guardRounds[round].toFixed(2)} µs, store.consume alone ${storeRounds[round].toFixed(2)} µs`,
    );
  }
  const guardMedian = median(guardRounds);
  const storeMedian = median(storeRounds);
  console.log(
    `median: decide ${guardMedian.toFixed(2)} µs per request, of which the store ${storeMedian.toFixed(2)} µs; the guard's own ${(guardMedian - storeMedian).toFixed(2)} µs`,
  );
  await app.close();
}

main().then(
  () => process.exit(0),
  (error) => {
    console.error(error);
    process.exit(1);
  },
);
