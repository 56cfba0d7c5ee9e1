#!/usr/bin/env node
/**
 * `npm run bench:allocations`: bytes the pets service allocates per request on its read path (issue #39 point 3),
 * `GET /pets?limit=20` and `GET /pets/{id}`, over a database of 1,000 pets.
 *
 * How: the service runs natively with V8's `--trace-gc-nvp` (its stdout line-buffered by stdbuf), which prints one line per garbage collection with
 * `allocated=` (bytes allocated since the previous collection). After --warmup requests, each scenario forces a
 * young-generation collection, sends --requests requests (autocannon, 8 connections), forces another: the sum of
 * `allocated=` over the collections after the first, the second forced one included, divided by the requests.
 * Options: --no-build, --requests (5000), --warmup (3000). Instructions per request: `npm run bench:instructions
 * -- --targets pets-list,pets-get`. Writes bench/results/allocations.json (not committed).
 */
const { spawn } = require('node:child_process');
const support = require('./support');

const { option, PETS_MAIN } = support;
const args = process.argv.slice(2);
const REQUESTS = Number(option(args, '--requests', '5000'));
const WARMUP = Number(option(args, '--warmup', '3000'));

support.pinLoadGenerator();
const autocannon = require('autocannon');

/** The GC lines V8 printed so far, as { allocated, at: index }. */
function collector(child) {
  const gcs = [];
  let rest = '';
  child.stdout.on('data', (chunk) => {
    const lines = (rest + chunk).split('\n');
    rest = lines.pop();
    for (const line of lines) {
      const allocated = /\ballocated=(\d+)/.exec(line);
      if (allocated) gcs.push(Number(allocated[1]));
    }
  });
  return gcs;
}

function send(options, amount) {
  return new Promise((resolve, reject) =>
    autocannon({ connections: 8, ...options, amount }, (error, result) => {
      if (error) return reject(error);
      if (result.non2xx + result.errors + result.timeouts > 0) return reject(new Error(`${options.url}: failures`));
      resolve(result);
    }),
  );
}

/**
 * Bytes per request: a young-generation collection forced before and after the requests (SIGUSR2 to
 * bench/gc-mark.js, preloaded), so the interval holds whole cycles: what the collections in it, the closing one
 * included, report as allocated is exactly what the requests (and the idle timers between them) allocated.
 */
async function bytesPerRequest(child, gcs, options) {
  const mark = async () => {
    const before = gcs.length;
    child.kill('SIGUSR2');
    await support.until(`the forced collection (${before} seen so far)`, () => gcs.length > before, 10_000);
    return gcs.length;
  };
  const from = await mark();
  await send(options, REQUESTS);
  const to = await mark();
  const bytes = gcs.slice(from, to).reduce((sum, n) => sum + n, 0);
  return { bytesPerRequest: Math.round(bytes / REQUESTS), collections: to - from - 1, requests: REQUESTS };
}

async function main() {
  const children = [];
  support.stopOnExit(children);
  support.ensureLocalServices();
  support.buildUnlessSkipped(args, ['pets']);
  await support.withRunDatabase('bench_alloc', children, async (database) => {
    await support.preparePetsDatabase(database.url, 1000);
    const port = await support.freePort();
    const child = spawn(
      'taskset',
      [
        '-c',
        support.SERVER_CORE,
        'stdbuf',
        '-oL',
        process.execPath,
        '--trace-gc-nvp',
        '--expose-gc',
        '--require',
        require.resolve('./gc-mark.js'),
        PETS_MAIN,
      ],
      {
        cwd: support.ROOT,
        env: {
          ...process.env,
          NODE_OPTIONS: require('../scripts/app-node-options').appNodeOptions(process.env.BENCH_APP_NODE_OPTIONS),
          NODE_ENV: 'production',
          LOG_LEVEL: 'warn',
          PETS_PORT: String(port),
          PETS_METRICS_PORT: '0',
          DATABASE_URL: database.url,
          CURSOR_SECRET: 'bench-cursor-secret-0123456789abcdef',
        },
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    children.push(child);
    const gcs = collector(child);
    const base = `http://127.0.0.1:${port}`;
    await support.waitForHttp(`${base}/health/live`);
    const { id } = (await (await fetch(`${base}/pets?limit=1`)).json())[0];
    const scenarios = {
      'GET /pets?limit=20': { url: `${base}/pets?limit=20` },
      'GET /pets/{id}': { url: `${base}/pets/${id}` },
    };
    for (const options of Object.values(scenarios)) await send(options, WARMUP);
    const results = {};
    for (const [name, options] of Object.entries(scenarios)) {
      results[name] = await bytesPerRequest(child, gcs, options);
      console.log(
        `${name.padEnd(20)} ${String(results[name].bytesPerRequest).padStart(8)} bytes allocated per request (${results[name].collections} collections over ${results[name].requests} requests)`,
      );
    }
    support.writeResults('allocations.json', { date: new Date().toISOString(), results });
  });
}

support.runBench(main, []);
