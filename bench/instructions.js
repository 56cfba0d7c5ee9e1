#!/usr/bin/env node
/**
 * `npm run bench:instructions` (also run by `npm run bench`): instructions per request, a figure that does not move
 * with the machine's load (issue #39 point 1). This VM has no hardware counters (`perf stat -e instructions:u`
 * answers "not supported": the kernel found no PMU), so each measured server runs under valgrind's callgrind, which
 * counts the instructions a process executes (every thread of it) whatever else the machine does.
 *
 * Method, per target (one at a time, the others idle): the server starts under callgrind with instrumentation off
 * (valgrind's JIT only, ~10× faster than counting); --warmup requests with it off (Node's JIT tiers up); then
 * instrumentation on (`callgrind_control -i on`) and --warmup-on requests (valgrind re-translates the code it now
 * counts); then --windows windows of --requests requests each, every window zeroed (`-z`) before and dumped (`-d`)
 * after; then the lowest of three idle windows of --idle seconds (no request) gives the instructions the idle server runs per second
 * (timers, pings), which is subtracted from each window in proportion to its duration. The figure of a run is the
 * median of its windows' (instructions − idle) / requests: a window in which V8 still optimises a function or runs a
 * major GC stands out and the median sets it aside; every window's figure is printed.
 * Requests come from autocannon with a fixed `amount` (8 connections), so every target answers the same requests.
 *
 * Targets (--targets, comma-separated; default gateway,peer,nginx):
 *   gateway      GET /v1/pets?limit=20 through the gateway (Enterprise key, Redis-backed limits)
 *   gateway-token   the same with an OAuth access token (a JWT, ES256) of the consumer's bound client instead of
 *                the key (issue #50 point 6: target within 1.2 × gateway); the issuer is a static one the bench
 *                serves on loopback (discovery and JWKS), the token verified once and then held by its hash
 *   peer         the same through bench/peer-gateway.js (fastify + reply-from + rate-limit on Redis)
 *   nginx        GET /pets?limit=20 through nginx (one process: master_process off) as a keep-alive proxy
 *   gateway-post, peer-post   POST /v1/pets through each
 *   pets-list    GET /pets?limit=20 on the pets service itself
 *   pets-get     GET /pets/{id} on the pets service itself
 *   traced-off, traced-0, traced-10, traced-100   GET /v1/pets?limit=20 through the gateway with tracing off, on and
 *                nothing sampled (parentbased_traceidratio 0: what an unsampled request pays), 10 % sampled
 *                (parentbased_traceidratio 0.1), all sampled (parentbased_always_on): the gateway AND the pets
 *                service behind it run under callgrind, their counts added (issue #39 point 2); spans go to a
 *                local receiver that drops them.
 * The services behind a measured proxy run natively. --runs N (default 1) measures each target N times in fresh
 * processes and prints the spread between runs ((max − min) / median). Options: --no-build, --requests (500),
 * --windows (9), --warmup (5000), --warmup-on (200), --idle (3). BENCH_PORT_BASE (4100) + 40.. for its ports.
 * The counted Node processes get a 1 GB old generation and their periodic work stretched (see where they start);
 * BENCH_NODE_FLAGS adds V8 flags to them, BENCH_CHILD_STDOUT=1 shows their stdout, BENCH_MARK_WINDOWS=1 each window.
 * Writes bench/results/instructions.json (not committed).
 */
const { spawn, spawnSync } = require('node:child_process');
const { mkdtempSync, readdirSync, readFileSync, unlinkSync, writeFileSync } = require('node:fs');
const { tmpdir } = require('node:os');
const path = require('node:path');
const support = require('./support');

const { option, REDIS_URL, GATEWAY_MAIN, median } = support;
const ALL_CORES = `0-${require('node:os').cpus().length - 1}`;
/** BENCH_PETS_MAIN: another build of the pets service to count (e.g. the one before a change, kept aside). */
const PETS_MAIN = process.env.BENCH_PETS_MAIN ?? support.PETS_MAIN;
/** V8 flags for the counted Node processes (BENCH_NODE_FLAGS, space-separated: e.g. `--trace-gc` to see a window's collections). */
const NODE_FLAGS = (process.env.BENCH_NODE_FLAGS ?? '').split(' ').filter(Boolean);

/** Whether callgrind is here; the reason it cannot be used otherwise. */
function callgrindMissing() {
  return spawnSync('valgrind', ['--version']).status === 0 && spawnSync('callgrind_control', ['-h']).status === 0
    ? undefined
    : 'valgrind (callgrind) is not installed: apt-get install valgrind';
}

/** The command line that runs `command args` under callgrind, counting nothing until told, dumps into `dir`. */
function underCallgrind(dir, command, args) {
  return [
    'valgrind',
    [
      '--tool=callgrind',
      '--instr-atstart=no',
      '--dump-line=no',
      '--compress-strings=no',
      `--callgrind-out-file=${path.join(dir, 'callgrind.%p.out')}`,
      command,
      ...args,
    ],
  ];
}

/**
 * valgrind names the pipes callgrind_control talks through after the process's HOST variable, which the gateway
 * and the peer use for their bind address: callgrind_control is given the same.
 */
const hostOf = new Map();

function controlEnv(pid) {
  const env = { ...process.env };
  const host = hostOf.get(pid);
  if (host === undefined) delete env.HOST;
  else env.HOST = host;
  return env;
}

function callgrindControl(pid, ...flags) {
  const result = spawnSync('callgrind_control', [...flags, String(pid)], {
    encoding: 'utf8',
    timeout: 600_000,
    env: controlEnv(pid),
  });
  if (result.status !== 0 || !/OK\./.test(result.stdout))
    throw new Error(`callgrind_control ${flags.join(' ')} ${pid}: ${result.stderr || result.stdout}`);
}

/** The dumps callgrind has written for `pid` in `dir`, by number. */
function dumps(dir, pid) {
  const prefix = `callgrind.${pid}.out.`;
  return readdirSync(dir)
    .filter((name) => name.startsWith(prefix))
    .map((name) => Number(name.slice(prefix.length)))
    .sort((a, b) => a - b);
}

/**
 * V8's compilers (TurboFan, Maglev, Sparkplug, the parser and bytecode generator, their zone allocator): work a
 * warm server does once per function, not per request. Under callgrind a gateway still optimises functions after
 * thousands of requests, a window at a time, and that work moved one window's count by 2-3× against the next.
 */
const JIT =
  /v8::internal::(compiler|maglev|baseline|interpreter|wasm)::|v8::internal::(Zone|Parser|ParserBase|PreParser|Scanner|AstValueFactory|Compiler|OptimizedCompilationJob|TurbofanCompilationJob|OptimizingCompileDispatcher|ScopeInfo|DeclarationScope|Scope|AstNodeFactory|FuncNameInferrer|BytecodeArrayBuilder)\b|v8::internal::(\w+::)?(Zone|Scope)\w*::/;

/**
 * The instructions of a callgrind dump: in all, and those of V8's compilers (JIT). A function's self cost is the
 * sum of its cost lines, except the line after `calls=` (the callee's inclusive cost).
 */
function readDump(text) {
  let total = 0;
  let jit = 0;
  let inJit = false;
  let afterCall = false;
  for (const line of text.split('\n')) {
    if (line.startsWith('fn=')) {
      inJit = JIT.test(line);
      afterCall = false;
    } else if (line.startsWith('calls=')) {
      afterCall = true;
    } else if (/^[+\-*\d]/.test(line)) {
      if (afterCall) {
        afterCall = false;
        continue;
      }
      const cost = Number(line.slice(line.lastIndexOf(' ') + 1));
      total += cost;
      if (inJit) jit += cost;
    }
  }
  return { total, jit };
}

/**
 * Dumps the counters of `pid`; the instructions counted since the last zero: { total, jit }. callgrind acts on a
 * command when the process next runs: an idle server (the pets service has no timer) is woken by `poke`, one
 * cheap request every second until the dump is written (its cost lands in the next window, ~0.1 % of it).
 */
async function dumpInstructions(dir, pid, poke) {
  const before = dumps(dir, pid).length;
  const control = spawn('callgrind_control', ['-d', String(pid)], { env: controlEnv(pid), stdio: 'ignore' });
  try {
    await support.until(
      `callgrind dump of ${pid}`,
      async () => {
        if (dumps(dir, pid).length > before) return true;
        await poke?.();
        await support.sleep(1000);
        return dumps(dir, pid).length > before;
      },
      600_000,
    );
  } finally {
    control.kill();
  }
  const file = path.join(dir, `callgrind.${pid}.out.${dumps(dir, pid).pop()}`);
  let text = '';
  await support.until(`callgrind totals in ${file}`, () => /^totals: \d+/m.test((text = readFileSync(file, 'utf8'))));
  const counted = readDump(text);
  const totals = Number(/^totals: (\d+)/m.exec(text)[1]);
  if (Math.abs(counted.total - totals) > totals * 0.001)
    throw new Error(`${file}: the cost lines add up to ${counted.total}, its totals say ${totals}`);
  unlinkSync(file);
  return counted;
}

/**
 * Instructions per request of the processes `pids` (each running under callgrind, see underCallgrind; their counts
 * are added: e.g. the gateway and the pets service behind it) while `send(n)` sends n requests and waits for their
 * answers. `pokes[i]` wakes process i when it is idle (see dumpInstructions). Returns { perRequest (median of the
 * windows), windows: [...], idlePerSecond }. `pid`/`poke` are the one-process form.
 */
async function countInstructions({
  dir,
  pid,
  poke,
  pids = [pid],
  pokes = [poke],
  send,
  requests = 300,
  windows = 3,
  warmup = 1500,
  warmupOn = 200,
  idleSeconds = 3,
}) {
  const dumpAll = async () => {
    const sum = { total: 0, jit: 0 };
    for (const [i, one] of pids.entries()) {
      const counted = await dumpInstructions(dir, one, pokes[i]);
      sum.total += counted.total;
      sum.jit += counted.jit;
    }
    return sum;
  };
  await send(warmup);
  for (const one of pids) callgrindControl(one, '-i', 'on');
  await send(warmupOn);
  const counted = [];
  for (let w = 0; w < windows; w += 1) {
    if (process.env.BENCH_MARK_WINDOWS === '1') console.error(`--- window ${w + 1} starts`);
    for (const one of pids) callgrindControl(one, '-z');
    const started = process.hrtime.bigint();
    await send(requests);
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    counted.push({ ...(await dumpAll()), seconds });
  }
  // The idle rate is the lowest of three idle windows: one that a late collection or optimisation lands in would
  // count that burst as idle work and take it off every window (it once made a run's counts negative).
  let idlePerSecond = Infinity;
  for (let i = 0; i < 3; i += 1) {
    for (const one of pids) callgrindControl(one, '-z');
    await support.sleep(idleSeconds * 1000);
    const idle = await dumpAll();
    idlePerSecond = Math.min(idlePerSecond, (idle.total - idle.jit) / idleSeconds);
  }
  const perWindow = counted.map(({ total, jit, seconds }) =>
    Math.round((total - jit - idlePerSecond * seconds) / requests),
  );
  const jitPerWindow = counted.map(({ jit }) => Math.round(jit / requests));
  // The windows are bimodal (a window with a major collection counts ~300 M more): the low mode, the windows within
  // a quarter of the lowest, is the request path without the collections; the mean counts them in.
  const lowest = Math.min(...perWindow);
  const lowMode = perWindow.filter((one) => one <= lowest * 1.25);
  return {
    perRequest: Math.round(median(perWindow)),
    lowModePerRequest: Math.round(median(lowMode)),
    lowModeWindows: lowMode.length,
    meanPerRequest: Math.round(perWindow.reduce((sum, one) => sum + one, 0) / perWindow.length),
    windows: perWindow,
    jitPerRequest: jitPerWindow,
    idlePerSecond: Math.round(idlePerSecond),
  };
}

/** A `send(n)` for countInstructions: n requests of `options` through autocannon (8 connections); fails on errors. */
function autocannonSender(options) {
  const autocannon = require('autocannon');
  return (amount) =>
    new Promise((resolve, reject) =>
      autocannon({ connections: 8, pipelining: 1, timeout: 120, ...options, amount }, (error, result) => {
        if (error) return reject(error);
        const bad = result.non2xx + result.errors + result.timeouts;
        if (bad > 0) return reject(new Error(`${options.method ?? 'GET'} ${options.url}: ${bad} of ${amount} failed`));
        resolve(result);
      }),
    );
}

/** (max − min) / median of `values`. */
function spread(values) {
  const middle = median(values);
  return middle ? (Math.max(...values) - Math.min(...values)) / middle : 0;
}

const formatCount = (n) => n.toLocaleString('en-US');

/**
 * An OAuth issuer as small as a gateway needs (issue #50): its discovery document and JWKS on a loopback port, and
 * `token(clientId, audience)`, an RFC 9068 access token (ES256, a day long: a run under callgrind is slow) it signs.
 */
async function startStaticIssuer() {
  const { exportJWK, generateKeyPair, SignJWT } = require('jose');
  const { privateKey, publicKey } = await generateKeyPair('ES256');
  const jwk = { ...(await exportJWK(publicKey)), kid: 'bench', alg: 'ES256', use: 'sig' };
  const server = require('node:http').createServer((request, response) => {
    const body =
      request.url === '/.well-known/openid-configuration'
        ? { issuer: url, jwks_uri: `${url}/jwks` }
        : request.url === '/jwks'
          ? { keys: [jwk] }
          : undefined;
    response.writeHead(body ? 200 : 404, { 'content-type': 'application/json' });
    response.end(JSON.stringify(body ?? {}));
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  server.unref();
  const url = `http://127.0.0.1:${server.address().port}`;
  const token = (clientId, audience) =>
    new SignJWT({ client_id: clientId, scope: 'pets:read' })
      .setProtectedHeader({ alg: 'ES256', typ: 'at+jwt', kid: 'bench' })
      .setIssuer(url)
      .setAudience(audience)
      .setSubject(clientId)
      .setIssuedAt()
      .setExpirationTime('24h')
      .sign(privateKey);
  return { url, token };
}

module.exports = { callgrindMissing, underCallgrind, countInstructions, autocannonSender, spread, formatCount };

// ---- the command ----

const DEFAULT_TARGETS = 'gateway,peer,nginx';

async function main() {
  const args = process.argv.slice(2);
  const missing = callgrindMissing();
  if (missing) throw new Error(missing);
  const targets = option(args, '--targets', DEFAULT_TARGETS).split(',');
  const runs = Number(option(args, '--runs', '1'));
  const counting = {
    requests: Number(option(args, '--requests', '500')),
    windows: Number(option(args, '--windows', '9')),
    warmup: Number(option(args, '--warmup', '5000')),
    warmupOn: Number(option(args, '--warmup-on', '200')),
    idleSeconds: Number(option(args, '--idle', '3')),
  };
  const PORT_BASE = Number(process.env.BENCH_PORT_BASE || 4100) + 40;
  const RUN = support.runId('bench_instr');
  const children = [];
  support.stopOnExit(children, 'SIGKILL');
  support.ensureLocalServices();
  support.buildUnlessSkipped(args);
  const work = mkdtempSync(path.join(tmpdir(), 'petstore-instructions-'));
  const database = await support.createRunDatabase('bench_instr');
  const results = {};
  try {
    await support.preparePetsDatabase(database.url, 1000);
    const common = { NODE_ENV: 'production', LOG_LEVEL: 'warn', CURSOR_SECRET: 'bench-cursor-secret-0123456789abcdef' };
    const ports = {
      pets: PORT_BASE,
      gateway: PORT_BASE + 1,
      admin: PORT_BASE + 2,
      peer: PORT_BASE + 3,
      nginx: PORT_BASE + 4,
      petsCounted: PORT_BASE + 5,
    };
    const adminToken = `bench-admin-token-${RUN}-0123456789abcdef`;
    // The pets service behind the measured proxies runs natively; the key is minted through a native gateway.
    const pets = support.startApp(children, 'pets', PETS_MAIN, {
      ...common,
      PETS_PORT: String(ports.pets),
      DATABASE_URL: database.url,
    });
    await support.waitForHttp(`http://127.0.0.1:${ports.pets}/health/live`, 300_000);
    const gatewayEnv = (port, adminPort) => ({
      ...common,
      PORT: String(port),
      HOST: '127.0.0.1',
      PETS_URL: `http://127.0.0.1:${ports.pets}`,
      REDIS_URL,
      REDIS_KEY_PREFIX: `${RUN}:`,
      GATEWAY_DATABASE_URL: database.url,
      ADMIN_PORT: String(adminPort),
      ADMIN_TOKEN: adminToken,
      METRICS_PORT: '0',
      // Under callgrind a request runs ~100× slower (more on a loaded machine): the gateway's own deadlines at their
      // longest, so a slow count is never a failed one. A timer's length does not change what is counted.
      UPSTREAM_TIMEOUT_MS: '600000',
      UPSTREAM_CONNECT_TIMEOUT_MS: '60000',
      REDIS_COMMAND_TIMEOUT_MS: '60000',
      // Periodic work stretched as callgrind stretches time: natively the usage flush (5 s), the key cache's 30 s
      // expiry and the key filter's rebuild (5 min) come once per thousands of requests; ~100× slower, they came
      // once per window and made the windows bimodal (625 k and 920 k instructions a request in one run). The
      // request path is what is counted; the periodic work's own cost is `npm run bench:usage`'s and the filter's.
      USAGE_FLUSH_MS: '300000',
      KEY_CACHE_TTL_MS: '3600000',
      KEY_FILTER_REBUILD_MS: '86400000',
      OAUTH_ISSUERS: JSON.stringify([{ issuer: issuer.url, audience: 'https://bench.petstore.test' }]),
    });
    // A static issuer on loopback (its discovery document and JWKS) and a token of its client, bound to the consumer.
    const issuer = await startStaticIssuer();
    const minting = support.startApp(children, 'gateway (key)', GATEWAY_MAIN, gatewayEnv(ports.gateway, ports.admin));
    await support
      .waitForHttp(`http://127.0.0.1:${ports.admin}/health/live`, 300_000)
      .catch(() => support.waitForHttp(`http://127.0.0.1:${ports.gateway}/health/live`, 300_000));
    const key = support.mintKey(
      { url: `http://127.0.0.1:${ports.admin}`, token: adminToken },
      '--plan enterprise --name bench --rpm 1000000000 --rpd 1000000000',
    );
    const bound = await fetch(`http://127.0.0.1:${ports.admin}/consumers/bench/client-bindings`, {
      method: 'POST',
      headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ issuer: issuer.url, clientId: 'bench-client' }),
    });
    if (bound.status !== 201) throw new Error(`binding the bench client: ${bound.status} ${await bound.text()}`);
    await support.stopAndWait(minting);
    const auth = { authorization: `Bearer ${key}` };
    const tokenAuth = { authorization: `Bearer ${await issuer.token('bench-client', 'https://bench.petstore.test')}` };
    const { rows } = await queryOnce(database.url, 'SELECT min(id) AS id FROM pets');
    const petId = rows[0].id;
    writeFileSync(
      path.join(work, 'nginx.conf'),
      `worker_processes 1; master_process off; daemon off; pid ${work}/nginx.pid; error_log ${work}/error.log warn;
events { worker_connections 1024; }
http { access_log off; client_body_temp_path ${work}; proxy_temp_path ${work};
  upstream pets { server 127.0.0.1:${ports.pets}; keepalive 64; }
  server { listen 127.0.0.1:${ports.nginx};
    location / { proxy_pass http://pets; proxy_http_version 1.1; proxy_set_header Connection "";
      proxy_set_header Host 127.0.0.1:${ports.pets}; } } }
`,
    );
    const post = (port) => ({
      url: `http://127.0.0.1:${port}/v1/pets`,
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Bench', categoryId: 1, status: 'pending' }),
    });
    // The counted Node processes get a 1 GB old generation (the apps' own cap is 128 MB, scripts/app-node-options.js,
    // whose 16 MB semi-spaces they keep): at 96 MB, on Node 20, the gateway ran a major collection every ~1,500
    // requests (natively; ~1,000 under callgrind), so one window in two held one and
    // the median jumped between ~620 k and ~910 k a request. At 1 GB at most one window in five holds one and the
    // median is the request path; the mean beside it counts the collections where they fell. (Forcing a full
    // collection before each window was tried: V8 then flushes compiled code, and the next window recompiles.)
    const nodeOptions = require('../scripts/app-node-options').appNodeOptions(
      process.env.BENCH_APP_NODE_OPTIONS ?? '--max-old-space-size=1024',
    );
    const TARGETS = {
      gateway: {
        start: () => [process.execPath, [GATEWAY_MAIN], gatewayEnv(ports.gateway, ports.admin)],
        ready: `http://127.0.0.1:${ports.gateway}/health/live`,
        request: { url: `http://127.0.0.1:${ports.gateway}/v1/pets?limit=20`, headers: auth },
      },
      'gateway-token': {
        start: () => [process.execPath, [GATEWAY_MAIN], gatewayEnv(ports.gateway, ports.admin)],
        ready: `http://127.0.0.1:${ports.gateway}/health/live`,
        request: { url: `http://127.0.0.1:${ports.gateway}/v1/pets?limit=20`, headers: tokenAuth },
      },
      'gateway-post': {
        start: () => [process.execPath, [GATEWAY_MAIN], gatewayEnv(ports.gateway, ports.admin)],
        ready: `http://127.0.0.1:${ports.gateway}/health/live`,
        request: post(ports.gateway),
      },
      peer: {
        start: () => [process.execPath, ['bench/peer-gateway.js'], peerEnv()],
        ready: `http://127.0.0.1:${ports.peer}/health/live`,
        request: { url: `http://127.0.0.1:${ports.peer}/v1/pets?limit=20`, headers: auth },
      },
      'peer-post': {
        start: () => [process.execPath, ['bench/peer-gateway.js'], peerEnv()],
        ready: `http://127.0.0.1:${ports.peer}/health/live`,
        request: post(ports.peer),
      },
      nginx: {
        start: () => ['nginx', ['-p', work, '-c', path.join(work, 'nginx.conf')], {}],
        ready: `http://127.0.0.1:${ports.nginx}/health/live`,
        request: { url: `http://127.0.0.1:${ports.nginx}/pets?limit=20` },
      },
      'pets-list': {
        start: () => [
          process.execPath,
          [PETS_MAIN],
          { ...common, PETS_PORT: String(ports.petsCounted), DATABASE_URL: database.url, PETS_METRICS_PORT: '0' },
        ],
        ready: `http://127.0.0.1:${ports.petsCounted}/health/live`,
        request: { url: `http://127.0.0.1:${ports.petsCounted}/pets?limit=20` },
      },
      'pets-get': {
        start: () => [
          process.execPath,
          [PETS_MAIN],
          { ...common, PETS_PORT: String(ports.petsCounted), DATABASE_URL: database.url, PETS_METRICS_PORT: '0' },
        ],
        ready: `http://127.0.0.1:${ports.petsCounted}/health/live`,
        request: { url: `http://127.0.0.1:${ports.petsCounted}/pets/${petId}` },
      },
    };
    // Tracing (issue #39 point 2): the gateway and the pets service behind it, both counted, both with the same
    // tracing settings; spans go to a receiver that drops them.
    const petsEnv = (tracing) => ({
      ...common,
      ...tracing,
      PETS_PORT: String(ports.petsCounted),
      DATABASE_URL: database.url,
      PETS_METRICS_PORT: '0',
    });
    const tracedGateway = (tracing) => ({
      start: () => [
        process.execPath,
        [GATEWAY_MAIN],
        { ...gatewayEnv(ports.gateway, ports.admin), ...tracing, PETS_URL: `http://127.0.0.1:${ports.petsCounted}` },
      ],
      ready: `http://127.0.0.1:${ports.gateway}/health/live`,
      request: { url: `http://127.0.0.1:${ports.gateway}/v1/pets?limit=20`, headers: auth },
      behind: {
        start: () => [process.execPath, [PETS_MAIN], petsEnv(tracing)],
        ready: `http://127.0.0.1:${ports.petsCounted}/health/live`,
      },
    });
    let receiver;
    const otlp = () => `http://127.0.0.1:${receiver.address().port}`;
    const tracingModes = {
      'traced-off': () => ({ OTEL_EXPORTER_OTLP_ENDPOINT: '', OTEL_TRACES_EXPORTER: '' }),
      'traced-0': () => ({
        OTEL_EXPORTER_OTLP_ENDPOINT: otlp(),
        OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
        OTEL_TRACES_SAMPLER_ARG: '0',
      }),
      'traced-10': () => ({
        OTEL_EXPORTER_OTLP_ENDPOINT: otlp(),
        OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
        OTEL_TRACES_SAMPLER_ARG: '0.1',
      }),
      'traced-100': () => ({ OTEL_EXPORTER_OTLP_ENDPOINT: otlp(), OTEL_TRACES_SAMPLER: 'parentbased_always_on' }),
    };
    if (targets.some((name) => name in tracingModes)) receiver = await support.startDroppingOtlpReceiver();
    for (const [name, tracing] of Object.entries(tracingModes))
      Object.defineProperty(TARGETS, name, { enumerable: true, get: () => tracedGateway(tracing()) });
    function peerEnv() {
      return {
        ...common,
        PORT: String(ports.peer),
        HOST: '127.0.0.1',
        PETS_URL: `http://127.0.0.1:${ports.pets}`,
        REDIS_URL,
        REDIS_KEY_PREFIX: `${RUN}:peer:`,
        PEER_REDIS_CONNECT_TIMEOUT_MS: '600000',
        PEER_KEYS: JSON.stringify({ [key]: { consumer: 'bench', perMinute: 1_000_000_000 } }),
      };
    }
    console.log(
      `instructions per request (callgrind): ${counting.warmup} requests warm-up, ${counting.warmupOn} counted-off, then ${counting.windows} windows of ${counting.requests}; the idle rate (lowest of three idle windows of ${counting.idleSeconds} s) subtracted; ${runs} run(s)`,
    );
    for (const name of targets) {
      const target = TARGETS[name];
      if (!target) throw new Error(`unknown target ${name} (known: ${Object.keys(TARGETS).join(', ')})`);
      const perRun = [];
      for (let run = 0; run < runs; run += 1) {
        // The counted processes: the service behind the target first (when it is counted too), then the target.
        const counted = [];
        for (const [label, one] of [...(target.behind ? [[`${name} (behind)`, target.behind]] : []), [name, target]]) {
          const [command, commandArgs, env] = one.start();
          const nodeFlags = command === process.execPath ? NODE_FLAGS : [];
          const [valgrind, valgrindArgs] = underCallgrind(work, command, [...nodeFlags, ...commandArgs]);
          // Not pinned: the count does not depend on the core, and on a loaded machine a process under callgrind
          // (~100× slower) pinned to the server core beside the bench's other servers took an hour.
          const child = support.start(
            children,
            `${label} (callgrind)`,
            valgrind,
            valgrindArgs,
            { ...env, NODE_OPTIONS: command === 'nginx' ? '' : nodeOptions },
            ALL_CORES,
          );
          hostOf.set(child.pid, env.HOST ?? process.env.HOST);
          await support.waitForHttp(one.ready, 900_000);
          counted.push({ child, poke: () => fetch(one.ready).then((response) => response.arrayBuffer()) });
        }
        const result = await countInstructions({
          dir: work,
          pids: counted.map(({ child }) => child.pid),
          pokes: counted.map(({ poke }) => poke),
          send: autocannonSender(target.request),
          ...counting,
        });
        for (const { child } of counted.reverse()) await support.stopAndWait(child, 30_000);
        perRun.push(result);
        console.log(
          `  ${name.padEnd(13)} run ${run + 1}: ${formatCount(result.perRequest).padStart(10)} instructions/request (low mode ${formatCount(result.lowModePerRequest)} in ${result.lowModeWindows} windows; mean ${formatCount(result.meanPerRequest)}; windows ${result.windows.map(formatCount).join(', ')}; JIT ${result.jitPerRequest.map(formatCount).join(', ')} on top; idle ${formatCount(result.idlePerSecond)}/s)`,
        );
      }
      const figures = perRun.map((one) => one.perRequest);
      results[name] = {
        perRequest: Math.round(median(figures)),
        lowModePerRequest: Math.round(median(perRun.map((one) => one.lowModePerRequest))),
        meanPerRequest: Math.round(perRun.reduce((sum, one) => sum + one.meanPerRequest, 0) / perRun.length),
        runs: perRun,
        spreadBetweenRuns: +spread(figures).toFixed(4),
      };
    }
    receiver?.close();
    void pets;
  } finally {
    await support.stopAllAndWait(children);
    await database.drop();
  }
  printSummary(results);
  support.writeResults('instructions.json', { date: new Date().toISOString(), counting, results });
}

async function queryOnce(url, sql) {
  const { Client } = require('pg');
  const db = new Client({ connectionString: url });
  await db.connect();
  try {
    return await db.query(sql);
  } finally {
    await db.end();
  }
}

/** The table and the ratios the issue tracks, from bench/results/instructions.json's `results`. */
function printSummary(results) {
  console.log(
    '\ninstructions per request (median of the runs; spread between runs; the low mode: the request path; the mean: with collections):',
  );
  for (const [name, row] of Object.entries(results))
    console.log(
      `  ${name.padEnd(13)} ${formatCount(row.perRequest).padStart(10)}  (${row.runs.length} run(s), spread ${(row.spreadBetweenRuns * 100).toFixed(2)} %; low mode ${formatCount(row.lowModePerRequest ?? row.perRequest)}, mean ${formatCount(row.meanPerRequest ?? row.perRequest)})`,
    );
  const of = (a, b, field) =>
    (results[a][field] ?? results[a].perRequest) / (results[b][field] ?? results[b].perRequest);
  const ratio = (a, b) =>
    results[a] && results[b]
      ? `${of(a, b, 'perRequest').toFixed(2)} × (low mode ${of(a, b, 'lowModePerRequest').toFixed(2)} ×, mean ${of(a, b, 'meanPerRequest').toFixed(2)} ×)`
      : undefined;
  for (const [label, a, b] of [
    ['gateway / peer, GET', 'gateway', 'peer'],
    ['gateway / nginx, GET', 'gateway', 'nginx'],
    ['gateway / peer, POST', 'gateway-post', 'peer-post'],
    ['tracing 0 % / off', 'traced-0', 'traced-off'],
    ['tracing 10 % / off', 'traced-10', 'traced-off'],
    ['tracing 100 % / off', 'traced-100', 'traced-off'],
  ]) {
    const value = ratio(a, b);
    if (value !== undefined) console.log(`  ${label.padEnd(24)} ${value}`);
  }
}
module.exports.printSummary = printSummary;

if (require.main === module) {
  support.pinLoadGenerator();
  main().then(
    () => process.exit(0),
    (error) => {
      console.error(error);
      process.exit(1);
    },
  );
}
