#!/usr/bin/env node
/**
 * `npm run stack`: the docker-compose topology without Docker. The pets service, GATEWAY_INSTANCES gateway
 * instances (2) sharing Redis and the consumers database, and nginx in front of them as the only public port
 * (STACK_PORT, 8180: not compose's published 8080, so both can run), against this machine's PostgreSQL and Redis
 * (started if they are down; a fresh database unless DATABASE_URL is set). Every port has a variable of its own: docs/stack.md lists them.
 * Ctrl-C or SIGTERM stops everything it started, during the start too; a start that fails stops everything it
 * had started and exits 1 with one line saying why. The apps' lines print as `npm start` prints them
 * (scripts/start-output.js). Needs `npm run build` first, nginx, PostgreSQL and Redis.
 */
// First: on a Node older than the supported one, one line and exit 1 (the apps' own check).
require('./supported-node').exitOnUnsupportedNode();

const { execFileSync } = require('node:child_process');
const { startStack } = require('./stack/start-stack');
const { StackError } = require('./stack/stack-error');

module.exports = { startStack };

const EXIT_ON_SIGNAL = { SIGINT: 130, SIGTERM: 143 };

function printStack(stack) {
  const key = execFileSync(process.execPath, [stack.keysCli, 'create', '--plan', 'free'], {
    env: { ...process.env, ADMIN_URL: stack.admin.adminUrl, ADMIN_TOKEN: stack.admin.adminToken },
    timeout: 30_000,
  })
    .toString()
    .trim()
    .split('\n')
    .pop();
  console.log(
    `\nStack up: ${stack.gateways.length} gateways behind nginx on ${stack.url} (Swagger UI: ${stack.url}/docs)`,
  );
  console.log(`  pets service  ${stack.pets.url} (metrics on port ${stack.pets.metricsPort})`);
  for (const gateway of stack.gateways) {
    console.log(
      `  ${gateway.name.padEnd(12)}  port ${gateway.port}, admin API on port ${gateway.adminPort}, metrics on port ${gateway.metricsPort}`,
    );
  }
  if (stack.portal) console.log(`  portal        ${stack.portal.url} (developer portal, behind nginx)`);
  // The operator console is private and signs operators in with an admin token: the stack rehearses the public
  // topology and leaves it out (docs/stack.md says how to run it beside the stack).
  console.log('  console       not started by the stack (docs/stack.md, "The operator console")');
  console.log(`  database      ${stack.database}`);
  console.log(
    `  Redis         ${stack.redis.url ?? 'REDIS_CLUSTER_NODES / REDIS_SENTINELS'}, key prefix ${stack.redis.keyPrefix}`,
  );
  console.log(`Free-plan key for this stack: ${key}`);
  console.log(`Admin API (loopback only, not behind nginx): ${stack.admin.adminUrl}/docs`);
  console.log(
    `Mint more: ADMIN_URL=${stack.admin.adminUrl} ADMIN_TOKEN=${stack.admin.adminToken} npm run -s keys -- create --plan pro`,
  );
  console.log('Ctrl-C stops everything.');
}

if (require.main === module) {
  // A signal during the start abandons it: startStack stops what it had started, then this exits.
  let interrupt;
  const interrupted = new Promise((resolve) => {
    interrupt = resolve;
  });
  let signalled;
  const onSignal = (signal) => {
    signalled = signal;
    interrupt(signal);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);

  startStack({ interrupted }).then(
    async (stack) => {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
      const shutdown = () => stack.stop().then(() => process.exit(0));
      process.once('SIGINT', shutdown);
      process.once('SIGTERM', shutdown);
      if (signalled) return shutdown();
      try {
        printStack(stack);
      } catch (error) {
        console.error(
          `stack: the stack is up but minting its first key failed (${String(error.message).split('\n')[0]}); stopping it`,
        );
        await stack.stop();
        process.exit(1);
      }
    },
    (error) => {
      // A StackError says it all in one line; anything else is a bug, whose stack trace is worth the lines.
      console.error(`stack: ${error instanceof StackError ? error.message : String(error?.stack ?? error)}`);
      process.exit(signalled ? EXIT_ON_SIGNAL[signalled] : 1);
    },
  );
}
