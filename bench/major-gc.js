#!/usr/bin/env node
/**
 * `npm run bench:major-gc`: how often the gateway runs a major (mark-compact) collection on the /v1 read path,
 * natively: pets and the gateway (Redis counters) started as bench:instructions starts them, --warmup requests
 * (5,000), then --requests (20,000) of `GET /v1/pets?limit=20` (autocannon, 8 connections) with V8's --trace-gc
 * on the gateway; prints requests per Mark-Compact and per Scavenge. BENCH_APP_NODE_OPTIONS adds Node options
 * (e.g. `--max-old-space-size=1024` against the apps' own 128 MB), BENCH_NODE_FLAGS V8 flags on the command line
 * (e.g. `--no-allocation-site-pretenuring`). Counts, not timings: the machine's load does
 * not move them much. Why it matters: docs/benchmarks.md, "Major collections on the read path".
 */
const { randomBytes } = require('node:crypto');
const { appNodeOptions } = require('../scripts/app-node-options');
const support = require('./support');

const { option } = support;
const args = process.argv.slice(2);
const WARMUP = Number(option(args, '--warmup', '5000'));
const REQUESTS = Number(option(args, '--requests', '20000'));

support.pinLoadGenerator();
const autocannon = require('autocannon');

async function main() {
  const children = [];
  support.stopOnExit(children, 'SIGKILL');
  support.ensureLocalServices();
  support.buildUnlessSkipped(args);
  const database = await support.createRunDatabase('bench_major_gc');
  try {
    await support.preparePetsDatabase(database.url, 1000);
    const common = { NODE_ENV: 'production', LOG_LEVEL: 'warn', CURSOR_SECRET: 'bench-cursor-secret-0123456789abcdef' };
    const base = Number(process.env.BENCH_PORT_BASE || 4100) + 60;
    support.startApp(children, 'pets', support.PETS_MAIN, {
      ...common,
      PETS_PORT: String(base),
      DATABASE_URL: database.url,
    });
    await support.waitForHttp(`http://127.0.0.1:${base}/health/live`, 120_000);
    const token = randomBytes(32).toString('base64url');
    const gateway = support.startApp(
      children,
      'gateway',
      support.GATEWAY_MAIN,
      {
        ...common,
        PORT: String(base + 1),
        HOST: '127.0.0.1',
        PETS_URL: `http://127.0.0.1:${base}`,
        REDIS_URL: support.REDIS_URL,
        REDIS_KEY_PREFIX: `${support.runId('bench_major_gc')}:`,
        GATEWAY_DATABASE_URL: database.url,
        ADMIN_PORT: String(base + 2),
        ADMIN_TOKEN: token,
      },
      { nodeArgs: ['--trace-gc', ...(process.env.BENCH_NODE_FLAGS ?? '').split(' ').filter(Boolean)], stdout: true },
    );
    const seen = { counting: false, marks: 0, scavenges: 0 };
    gateway.stdout.on('data', (chunk) => {
      if (!seen.counting) return;
      const text = String(chunk);
      seen.marks += (text.match(/Mark-Compact/g) || []).length;
      seen.scavenges += (text.match(/Scavenge/g) || []).length;
    });
    await support.waitForHttp(`http://127.0.0.1:${base + 2}/health/live`, 120_000);
    const key = support.mintKey(
      { url: `http://127.0.0.1:${base + 2}`, token },
      '--plan enterprise --name bench --rpm 1000000000 --rpd 1000000000',
    );
    const send = (amount) =>
      new Promise((resolve, reject) =>
        autocannon(
          {
            url: `http://127.0.0.1:${base + 1}/v1/pets?limit=20`,
            headers: { authorization: `Bearer ${key}` },
            connections: 8,
            amount,
          },
          (error, result) =>
            error || result.non2xx + result.errors + result.timeouts > 0
              ? reject(error ?? new Error('failed requests'))
              : resolve(result),
        ),
      );
    await send(WARMUP);
    seen.counting = true;
    await send(REQUESTS);
    await support.sleep(500);
    const per = (n) => (n === 0 ? 'none' : `one per ${Math.round(REQUESTS / n).toLocaleString('en-US')} requests`);
    console.log(
      `gateway, ${REQUESTS.toLocaleString('en-US')} requests (NODE_OPTIONS ${appNodeOptions(process.env.BENCH_APP_NODE_OPTIONS)}${process.env.BENCH_NODE_FLAGS ? `; ${process.env.BENCH_NODE_FLAGS}` : ''}): Mark-Compact ${seen.marks} (${per(seen.marks)}), Scavenge ${seen.scavenges} (${per(seen.scavenges)})`,
    );
  } finally {
    for (const child of children) child.kill('SIGKILL');
    await database.drop();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
