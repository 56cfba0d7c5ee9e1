#!/usr/bin/env node
/**
 * `npm run bench:budget`: what each step of a /v1 request costs in µs of CPU (issue #27 point 4), from a V8 CPU
 * profile of the gateway under the bench's load.
 * Starts the pets service and the gateway as `npm run bench` does (PostgreSQL, Redis-backed limits, production,
 * LOG_LEVEL=warn) but the gateway alone on core 0 (the pets service and the load on core 1: with both apps on one
 * core, V8's sampling thread mostly ran when the gateway was waiting, and the profile saw a tenth of its CPU),
 * the gateway with `--cpu-prof` (--interval µs between samples,
 * default 250), drives `GET /v1/pets?limit=20` (or `POST /v1/pets` with --post) with 32 connections for a warm-up
 * and then --duration seconds (10), stops the gateway (the profile is written at its exit) and keeps only the
 * samples of the measured interval. Each sample goes to the innermost step its stack is in (STEPS below: a
 * frame's function name and file); the µs per request of a step are its share of the profile's busy samples
 * times the gateway's CPU per request over the same interval (utime + stime from /proc, so that the table adds
 * up to what `npm run bench` prints; the threads the profile does not see, GC helpers and libuv's, are spread in
 * proportion). Prints the table, writes bench/results/request-budget.json and keeps the profile there too
 * (open it in Chrome's DevTools). Options: --no-build, --post, --origin (every request carries `Origin:
 * https://app.example`, with CORS_ORIGINS allowing it: a browser client), --duration S, --interval US, --connections N;
 * --tracing RATIO turns tracing on in both apps (OTLP/HTTP to a receiver in this process that drops the spans,
 * `parentbased_traceidratio` RATIO); --app pets profiles the pets service instead (it takes core 0, the gateway
 * core 1); --by-package puts each sample under the package (or Node internal module) of its innermost frame
 * instead of the steps, which is what a profile of tracing or of the pets service needs.
 */
const { mkdtempSync, readdirSync, readFileSync, copyFileSync } = require('node:fs');
const { tmpdir } = require('node:os');
const path = require('node:path');
const support = require('./support');

const args = process.argv.slice(2);
const { option } = support;
const DURATION = Number(option(args, '--duration', '10'));
const INTERVAL_US = Number(option(args, '--interval', '250'));
const CONNECTIONS = Number(option(args, '--connections', '32'));
const POST = args.includes('--post');
const ORIGIN = args.includes('--origin') ? 'https://app.example' : undefined;
const TRACING = option(args, '--tracing', '');
const PROFILED = option(args, '--app', 'gateway');
const BY_PACKAGE = args.includes('--by-package');
if (!['gateway', 'pets', 'peer'].includes(PROFILED))
  throw new Error(`--app must be gateway, pets or peer (got ${PROFILED})`);
if (TRACING && !(Number(TRACING) >= 0 && Number(TRACING) <= 1))
  throw new Error(`--tracing must be a ratio from 0 to 1 (got ${TRACING})`);
const WARMUP = 3;
const children = [];

support.pinLoadGenerator();
const autocannon = require('autocannon');

/**
 * The steps of a /v1 request, innermost first: a sample belongs to the first step (in this order) any frame of
 * its stack matches, looked up from the leaf towards the root. `fn` matches the function name, `file` the
 * script's path (both regular expressions; a rule with both needs both).
 */
const STEPS = [
  { step: 'request id', file: /request-id\.middleware\.js$/ },
  { step: 'metrics (prom-client, on finish)', file: /http-metrics\.js$|prom-client/ },
  { step: 'request log (pino, on finish)', file: /request-logging\.js$|[/]pino|sonic-boom/ },
  { step: 'security headers', file: /security-headers\.js$/ },
  { step: 'CORS (the cors package)', file: /node_modules\/(cors|vary|object-assign)\// },
  { step: 'usage recording', file: /gateway\/src\/usage\// },
  {
    step: 'authentication: key lookup (hash, cache)',
    file: /consumers\/(api-key|key-cache\.service|key-filter)\.js$|auth\/api-key-authenticator\.js$/,
  },
  { step: 'limits: rate-limit headers', file: /rate-limit-headers\.js$/ },
  {
    step: 'limits: throttler decision (guard, store, Redis client)',
    file: /rate-limit\/|@nestjs\/throttler|ioredis|redis-parser|denque|cluster-key-slot/,
  },
  {
    step: 'pipeline: the sequence, route match, context',
    file: /pipeline\/api-pipeline\.js$|routing\/route-table\.js$|nest-internals\.js$|execution-context-host|path-to-regexp/,
  },
  { step: 'tracing hooks (edge outcome, off)', file: /tracing\/edge-outcome\.js$/ },
  { step: 'answer: write the response (node:http)', file: /^node:_http_outgoing$/ },
  {
    step: 'answer: write the response (node:http)',
    fn: /^(writeHead|_implicitHeader|resOnFinish|onServerResponseClose)$/,
    file: /^node:_http_server$/,
  },
  { step: 'forward: upstream request and answer (undici)', file: /undici/ },
  {
    step: 'forward: body read',
    file: /errors\/src\/request-body\.js$|body-parser|raw-body|type-is|on-finished|iconv|content-type/,
  },
  { step: 'forward: headers, links', file: /proxy\/(upstream\.service|next-link|public-location)\.js$/ },
  { step: 'controller and sunset', file: /proxy\/pets-proxy\.controller\.js$|routing\/(sunset|api-exchange)\.js$/ },
  {
    step: 'parse: HTTP parser, IncomingMessage (node:http)',
    file: /^node:(_http_common|_http_server|_http_incoming)$/,
  },
];
/** Node internals shared by several steps (sockets, streams, events): a sample in them goes to the step that called them. */
const WEAK_STEPS = [
  {
    step: 'sockets and streams (node:net, streams)',
    file: /^node:(net|internal\/stream_base_commons|internal\/streams\/.*|stream)$/,
  },
];

const OTHER = 'other (timers, microtasks, sockets, event loop)';

/** --by-package: the package of a frame's script (`@scope/name`, `name`), a Node internal module, or our own file. */
function packageOf(url) {
  if (!url) return undefined;
  const at = url.lastIndexOf('node_modules/');
  if (at >= 0) {
    const parts = url.slice(at + 'node_modules/'.length).split('/');
    return parts[0].startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0];
  }
  if (url.startsWith('node:'))
    return url
      .replace(/^node:(internal\/)?/, 'node:')
      .split('/')
      .slice(0, 2)
      .join('/');
  const dist = url.indexOf('/dist/apps/');
  return dist >= 0
    ? `ours: ${url
        .slice(dist + '/dist/apps/'.length)
        .split('/')
        .slice(1, -1)
        .join('/')}`
    : url;
}

function classify(profile, fromUs, toUs) {
  const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const stepOf = new Map();
  const resolve = (id) => {
    if (stepOf.has(id)) return stepOf.get(id);
    const { callFrame } = nodes.get(id);
    const name = callFrame.functionName;
    let step;
    if (name === '(idle)') step = 'idle';
    else if (name === '(garbage collector)') step = 'garbage collection';
    else if (name === '(program)') step = 'V8 and native (program)';
    else if (BY_PACKAGE) {
      for (let at = id; at !== undefined && step === undefined; at = parent.get(at))
        step = packageOf(nodes.get(at).callFrame.url);
      step ??= OTHER;
    } else {
      // Innermost first: this frame, then its callers; a Node internal shared by several steps only if no step calls it.
      const matches = (rules, frame) =>
        rules.find(
          (candidate) =>
            (!candidate.fn || candidate.fn.test(frame.functionName)) &&
            (!candidate.file || candidate.file.test(frame.url)),
        );
      let weak;
      for (let at = id; at !== undefined && step === undefined; at = parent.get(at)) {
        const frame = nodes.get(at).callFrame;
        step = matches(STEPS, frame)?.step;
        weak ??= matches(WEAK_STEPS, frame)?.step;
      }
      step ??= weak ?? OTHER;
    }
    stepOf.set(id, step);
    return step;
  };
  const counts = new Map();
  let at = profile.startTime;
  for (let i = 0; i < profile.samples.length; i += 1) {
    at += profile.timeDeltas[i];
    if (at < fromUs || at > toUs) continue;
    const step = resolve(profile.samples[i]);
    counts.set(step, (counts.get(step) ?? 0) + 1);
  }
  return counts;
}

async function main() {
  support.ensureLocalServices();
  support.buildUnlessSkipped(args, ['pets', 'gateway']);
  const profileDir = mkdtempSync(path.join(tmpdir(), 'petstore-budget-'));
  await support.withRunDatabase('budget', children, async (database) => {
    await support.preparePetsDatabase(database.url, 0);
    const { Client } = require('pg');
    const db = new Client({ connectionString: database.url });
    await db.connect();
    await db.query(
      `INSERT INTO pets (name, category_id, status) SELECT 'Pet ' || i, 1 + i % 10, (ARRAY['available','pending','sold',NULL])[1 + i % 4]::pet_status FROM generate_series(1, 1000) AS i`,
    );
    await db.end();
    const [petsPort, gatewayPort, adminPort] = [
      await support.freePort(),
      await support.freePort(),
      await support.freePort(),
    ];
    const run = support.runId('budget');
    const admin = { url: `http://127.0.0.1:${adminPort}`, token: `bench-admin-token-${run}-0123456789abcdef` };
    const receiver = TRACING ? await support.startDroppingOtlpReceiver() : undefined;
    const tracing = receiver
      ? {
          OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${receiver.address().port}`,
          OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
          OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
          OTEL_TRACES_SAMPLER_ARG: TRACING,
        }
      : {};
    const common = { NODE_ENV: 'production', LOG_LEVEL: 'warn', ...tracing };
    // The profiled app alone on the server core (V8's sampling thread then sees it as it runs, not only when the
    // other app has the core); the other app beside the load generator. The profiler's flags go on the command
    // line (NODE_OPTIONS refuses them).
    const profilerFlags = ['--cpu-prof', `--cpu-prof-dir=${profileDir}`, `--cpu-prof-interval=${INTERVAL_US}`];
    const launch = (app, main, env) =>
      support.startApp(
        children,
        app,
        main,
        env,
        app === PROFILED ? { nodeArgs: profilerFlags } : { core: support.LOAD_CORE },
      );
    const pets = launch('pets', support.PETS_MAIN, {
      ...common,
      PETS_PORT: String(petsPort),
      DATABASE_URL: database.url,
      CURSOR_SECRET: 'bench-cursor-secret-0123456789abcdef',
    });
    const gateway = launch('gateway', support.GATEWAY_MAIN, {
      ...common,
      PORT: String(gatewayPort),
      HOST: '127.0.0.1',
      PETS_URL: `http://127.0.0.1:${petsPort}`,
      REDIS_URL: support.REDIS_URL,
      REDIS_KEY_PREFIX: `${run}:`,
      GATEWAY_DATABASE_URL: database.url,
      ADMIN_PORT: String(adminPort),
      ADMIN_TOKEN: admin.token,
      ...(ORIGIN ? { CORS_ORIGINS: ORIGIN } : {}),
    });
    await support.waitForHttp(`http://127.0.0.1:${petsPort}/health/live`);
    await support.waitForHttp(`http://127.0.0.1:${gatewayPort}/health/live`);
    const key = support.mintKey(admin, '--plan enterprise --name bench --rpm 1000000000 --rpd 1000000000');
    // --app peer: the peer gateway of `npm run bench` (fastify + reply-from + @fastify/rate-limit on the same Redis)
    // takes the gateway's place on core 0 and the load; ours idles beside the pets service on core 1.
    let peer;
    let targetPort = gatewayPort;
    if (PROFILED === 'peer') {
      targetPort = await support.freePort();
      peer = support.start(children, 'peer', process.execPath, [...profilerFlags, 'bench/peer-gateway.js'], {
        ...common,
        PORT: String(targetPort),
        HOST: '127.0.0.1',
        PETS_URL: `http://127.0.0.1:${petsPort}`,
        REDIS_URL: support.REDIS_URL,
        REDIS_KEY_PREFIX: `${run}:peer:`,
        PEER_KEYS: JSON.stringify({ [key]: { consumer: 'bench', perMinute: 1_000_000_000 } }),
      });
      await support.waitForHttp(`http://127.0.0.1:${targetPort}/health/live`);
    }
    const profiled = PROFILED === 'pets' ? pets : PROFILED === 'peer' ? peer : gateway;
    const options = {
      url: `http://127.0.0.1:${targetPort}/v1/pets${POST ? '' : '?limit=20'}`,
      connections: CONNECTIONS,
      headers: {
        authorization: `Bearer ${key}`,
        ...(POST ? { 'content-type': 'application/json' } : {}),
        ...(ORIGIN ? { origin: ORIGIN } : {}),
      },
      ...(POST ? { method: 'POST', body: JSON.stringify({ name: 'Bench', categoryId: 1, status: 'pending' }) } : {}),
    };
    const load = (duration) =>
      new Promise((resolve, reject) =>
        autocannon({ ...options, duration }, (error, result) => (error ? reject(error) : resolve(result))),
      );
    await load(WARMUP);
    const cpuBefore = support.cpuMicros(profiled.pid);
    const fromUs = Number(process.hrtime.bigint() / 1000n);
    const result = await load(DURATION);
    const toUs = Number(process.hrtime.bigint() / 1000n);
    const requests = result.requests.total;
    const cpuPerRequest = (support.cpuMicros(profiled.pid) - cpuBefore) / requests;
    await support.stopAndWait(profiled, 20_000);
    receiver?.close();

    const file = readdirSync(profileDir).find((name) => name.endsWith('.cpuprofile'));
    if (!file) throw new Error(`no profile in ${profileDir}: did the ${PROFILED} exit cleanly?`);
    const profile = JSON.parse(readFileSync(path.join(profileDir, file), 'utf8'));
    const profileEndUs = profile.startTime + profile.timeDeltas.reduce((a, b) => a + b, 0);
    if (fromUs < profile.startTime || toUs > profileEndUs)
      throw new Error(
        `the measured interval ${fromUs}-${toUs} µs is not inside the profile's ${profile.startTime}-${profileEndUs} µs (clocks differ?)`,
      );
    const counts = classify(profile, fromUs, toUs);
    const busy = [...counts].filter(([step]) => step !== 'idle').reduce((sum, [, n]) => sum + n, 0);
    const sampledUsPerRequest = (busy * INTERVAL_US) / requests;
    console.log(
      `\n${POST ? 'POST /v1/pets' : 'GET /v1/pets?limit=20'}, ${CONNECTIONS} connections, ${DURATION} s: ${requests} requests (${Math.round(requests / DURATION)} req/s, ` +
        `${result.non2xx + result.errors} non-2xx/errors), ${PROFILED} CPU ${cpuPerRequest.toFixed(0)} µs per request (/proc, with the profiler on);` +
        ` the profile's busy samples ${busy} (${sampledUsPerRequest.toFixed(0)} µs per request at ${INTERVAL_US} µs a sample), idle ${counts.get('idle') ?? 0}\n`,
    );
    const rows = [...counts]
      .filter(([step]) => step !== 'idle')
      .sort((a, b) => b[1] - a[1])
      .map(([step, n]) => ({ step, samples: n, share: n / busy, usPerRequest: (n / busy) * cpuPerRequest }));
    for (const row of rows)
      console.log(
        `  ${row.step.padEnd(62)} ${row.usPerRequest.toFixed(1).padStart(7)} µs  ${(row.share * 100).toFixed(1).padStart(5)} %  (${row.samples} samples)`,
      );
    const name = `request-budget-${PROFILED === 'gateway' ? '' : `${PROFILED}-`}${POST ? 'post' : 'get'}${TRACING ? `-tracing-${TRACING}` : ''}`;
    const kept = path.join(__dirname, 'results', `${name}.cpuprofile`);
    support.writeResults(`${name}.json`, {
      date: new Date().toISOString(),
      request: POST ? 'POST /v1/pets' : 'GET /v1/pets?limit=20',
      app: PROFILED,
      tracingRatio: TRACING || null,
      connections: CONNECTIONS,
      durationSeconds: DURATION,
      intervalUs: INTERVAL_US,
      requests,
      rps: Math.round(requests / DURATION),
      fromUs,
      toUs,
      cpuUsPerRequest: +cpuPerRequest.toFixed(1),
      sampledUsPerRequest: +sampledUsPerRequest.toFixed(1),
      rows,
    });
    copyFileSync(path.join(profileDir, file), kept);
    console.log(`\nprofile: ${path.relative(support.ROOT, kept)}`);
  });
}

support.runBench(main, children);
