import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { freePort } from '../../scripts/free-port';
import { createGatewayTestDatabase, GatewayTestDatabase, mintKey } from '../support/gateway';
import { OtlpReceiver, ReceivedSpan, SPAN_KIND } from '../support/otlp-receiver';
import { createTestDatabase, TestDatabase } from '../support/pets-service';
import { runIf } from '../support/skip';

/*
 * One request, one trace, on the built apps started as real processes with tracing on: the SDK must patch
 * http, express, undici, pg, ioredis and pino before they load, which Jest's module registry cannot promise
 * in-process. Spans go to a local OTLP/HTTP receiver (JSON); nothing leaves the machine.
 */

const ROOT = join(__dirname, '../..');
const GATEWAY_MAIN = join(ROOT, 'dist/apps/gateway/apps/gateway/src/main.js');
const PETS_MAIN = join(ROOT, 'dist/apps/pets/apps/pets/src/main.js');
const BUILT = [
  GATEWAY_MAIN,
  PETS_MAIN,
  join(ROOT, 'dist/apps/gateway/libs/platform/src/tracing/start-tracing.js'),
  join(ROOT, 'dist/apps/pets/libs/platform/src/tracing/start-tracing.js'),
];

const INTERNAL_SECRET = `internal-${randomBytes(12).toString('hex')}`;
const ADMIN_TOKEN = `admin-${randomBytes(24).toString('hex')}`;
/** A client's trace context (W3C): an edge that does not trust it must not continue it. */
const CLIENT_TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const CLIENT_SPAN_ID = '00f067aa0ba902b7';
const CLIENT_TRACEPARENT = `00-${CLIENT_TRACE_ID}-${CLIENT_SPAN_ID}-01`;

interface RunningApp {
  process: ChildProcess;
  url: string;
  /** Its JSON log lines, parsed. */
  logs: Record<string, unknown>[];
}

async function startApp(main: string, port: number, env: Record<string, string>): Promise<RunningApp> {
  const child = spawn(process.execPath, [main], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...env },
  });
  const logs: Record<string, unknown>[] = [];
  let rest = '';
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    const lines = (rest + chunk.toString()).split('\n');
    rest = lines.pop()!;
    for (const line of lines) if (line.startsWith('{')) logs.push(JSON.parse(line) as Record<string, unknown>);
  });
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 90_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`${main} exited ${child.exitCode}: ${output}`);
    if (
      await fetch(`${url}/health/ready`).then(
        (r) => r.ok,
        () => false,
      )
    )
      return { process: child, url, logs };
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  child.kill('SIGKILL');
  throw new Error(`${main} not ready in time: ${output}`);
}

/** The pets service's environment for the test database: its fresh database on DATABASE_URL's server, else PGlite. */
function petsDatabaseEnv({ config }: TestDatabase): Record<string, string> {
  return config.databaseUrl
    ? { DATABASE_URL: config.databaseUrl, DB_MIGRATE_ON_START: 'true' }
    : { PGLITE_DATA_DIR: config.pgliteDataDir, DATABASE_URL: '' };
}

describe('tracing (OpenTelemetry)', () => {
  const receiver = new OtlpReceiver();
  const consumer = `tracing-${randomBytes(3).toString('hex')}`;
  const limitedConsumer = `tracing-limited-${randomBytes(3).toString('hex')}`;
  let key: string;
  let limitedKey: string;
  let database: TestDatabase;
  let consumers: GatewayTestDatabase;
  let pets: RunningApp;
  let gateway: RunningApp;
  let trustingGateway: RunningApp;
  let gatewayEnv: Record<string, string>;

  beforeAll(async () => {
    if (!BUILT.every((file) => existsSync(file))) {
      execFileSync('npx', ['nest', 'build', 'pets'], { cwd: ROOT, stdio: 'ignore' });
      execFileSync('npx', ['nest', 'build', 'gateway'], { cwd: ROOT, stdio: 'ignore' });
    }
    const otlp = await receiver.start();
    const tracing = {
      OTEL_EXPORTER_OTLP_ENDPOINT: otlp,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_BSP_SCHEDULE_DELAY: '50',
      OTEL_SERVICE_NAME: '',
      OTEL_TRACES_SAMPLER: '',
      OTEL_TRUST_INCOMING_TRACEPARENT: '',
      NODE_ENV: 'test',
      LOG_LEVEL: 'log',
      INTERNAL_SECRET,
    };
    database = await createTestDatabase();
    consumers = await createGatewayTestDatabase();
    const [petsPort, gatewayPort, trustingPort, adminPort, trustingAdminPort] = await Promise.all([
      freePort(),
      freePort(),
      freePort(),
      freePort(),
      freePort(),
    ]);
    pets = await startApp(PETS_MAIN, petsPort, {
      ...tracing,
      ...petsDatabaseEnv(database),
      PETS_PORT: String(petsPort),
      PETS_HOST: '127.0.0.1',
      PETS_METRICS_PORT: '0',
    });
    gatewayEnv = {
      ...tracing,
      HOST: '127.0.0.1',
      PETS_URL: pets.url,
      GATEWAY_DATABASE_URL: consumers.url,
      ADMIN_TOKEN,
      METRICS_PORT: '0',
      DEMO_KEY: 'false',
      REDIS_URL: process.env.REDIS_URL ?? '',
      REDIS_KEY_PREFIX: `${process.env.REDIS_KEY_PREFIX ?? 'test:'}${randomBytes(6).toString('hex')}:`,
    };
    // One after the other: the first creates the consumers schema in the shared database.
    gateway = await startApp(GATEWAY_MAIN, gatewayPort, {
      ...gatewayEnv,
      PORT: String(gatewayPort),
      ADMIN_PORT: String(adminPort),
    });
    // This one holds its spans (a batch delay of ten minutes) until it exits: the flush on exit is tested too.
    trustingGateway = await startApp(GATEWAY_MAIN, trustingPort, {
      ...gatewayEnv,
      PORT: String(trustingPort),
      ADMIN_PORT: String(trustingAdminPort),
      OTEL_TRUST_INCOMING_TRACEPARENT: 'true',
      OTEL_BSP_SCHEDULE_DELAY: '600000',
    });
    const admin = { adminUrl: `http://127.0.0.1:${adminPort}`, adminToken: ADMIN_TOKEN };
    key = await mintKey(admin, 'pro', consumer);
    limitedKey = await mintKey(admin, 'pro', limitedConsumer, { perMinute: 1, perDay: 1000 });
  }, 180_000);

  afterAll(async () => {
    for (const app of [gateway, trustingGateway, pets]) app?.process.kill('SIGKILL');
    await receiver.stop();
    await database?.drop();
    await consumers?.drop();
  });

  /** Sends a request with a request id of its own, and finds its trace through the gateway's log line. */
  async function send(
    app: RunningApp,
    path: string,
    init: RequestInit = {},
  ): Promise<{ status: number; traceId: string; serverSpanId: string }> {
    const requestId = randomBytes(8).toString('hex');
    const response = await fetch(`${app.url}${path}`, {
      ...init,
      headers: { ...(init.headers as Record<string, string>), 'x-request-id': requestId },
    });
    await response.arrayBuffer();
    const line = await receiver.waitFor(() =>
      app.logs.find((entry) => (entry.req as { id?: string } | undefined)?.id === requestId),
    );
    return { status: response.status, traceId: String(line.trace_id), serverSpanId: String(line.span_id) };
  }

  const serverSpanOf = (traceId: string, service: string) =>
    receiver.waitFor((spans) =>
      spans.find((s) => s.traceId === traceId && s.service === service && s.kind === SPAN_KIND.SERVER),
    );

  const createPet = (app: RunningApp, headers: Record<string, string> = {}) =>
    send(app, '/v1/pets', {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers },
      body: JSON.stringify({ name: 'Traced', categoryId: 1, status: 'available' }),
    });

  it('one POST /v1/pets is one trace: gateway server span > hop > pets server span > handler > SQL insert', async () => {
    const { status, traceId, serverSpanId } = await createPet(gateway);
    expect(status).toBe(201);

    const spans = await receiver.waitFor((all) => {
      const trace = all.filter((s) => s.traceId === traceId);
      const done =
        trace.some((s) => s.service === 'petstore-gateway' && s.kind === SPAN_KIND.SERVER) &&
        trace.some((s) => /^INSERT INTO "pets"/.test(String(sqlOf(s))));
      return done && trace;
    });
    const byId = new Map(spans.map((s) => [s.spanId, s]));
    const parentOf = (span: ReceivedSpan) => (span.parentSpanId ? byId.get(span.parentSpanId) : undefined);

    const edge = spans.find((s) => s.service === 'petstore-gateway' && s.kind === SPAN_KIND.SERVER)!;
    expect(edge.spanId).toBe(serverSpanId); // the log line names the span it was written in
    expect(edge.parentSpanId).toBeUndefined(); // the root of the trace
    expect(edge.name).toBe('POST /v1/pets');
    expect(edge.attributes).toMatchObject({
      'http.route': '/v1/pets',
      'petstore.auth.result': 'accepted',
      'petstore.consumer.name': consumer,
      'petstore.consumer.plan': 'pro',
      'petstore.rate_limit.outcome': 'allowed',
    });

    const hop = spans.find(
      (s) => s.service === 'petstore-gateway' && s.kind === SPAN_KIND.CLIENT && s.scope.includes('undici'),
    )!;
    expect(hop).toBeDefined();
    expect(hop.parentSpanId).toBe(edge.spanId);

    const petsServer = spans.find((s) => s.service === 'petstore-pets' && s.kind === SPAN_KIND.SERVER)!;
    expect(petsServer.parentSpanId).toBe(hop.spanId); // the pets service continued the propagated traceparent
    expect(petsServer.attributes['http.route']).toBe('/pets');

    const handler = spans.find((s) => s.service === 'petstore-pets' && s.scope.includes('express'))!;
    expect(handler.name).toBe('handler POST /pets');
    expect(handler.parentSpanId).toBe(petsServer.spanId);

    const insert = spans.find((s) => /^INSERT INTO "pets"/.test(String(sqlOf(s))))!;
    expect(insert.service).toBe('petstore-pets');
    expect(insert.kind).toBe(SPAN_KIND.CLIENT);
    const ancestors: string[] = [];
    for (let span = parentOf(insert); span; span = parentOf(span)) ancestors.push(span.spanId);
    expect(ancestors).toEqual(expect.arrayContaining([handler.spanId, petsServer.spanId, hop.spanId, edge.spanId]));

    // The pets service's log line of this request carries the same trace.
    const petsLine = await receiver.waitFor(() =>
      pets.logs.find(
        (entry) => entry.trace_id === traceId && (entry.res as { status?: number } | undefined)?.status === 201,
      ),
    );
    expect(petsLine.span_id).toBe(petsServer.spanId);
  });

  // Without REDIS_URL the counters are in-process and there is no Redis call to trace (CI runs this file both ways).
  const ifRedis = runIf(process.env.REDIS_URL, 'REDIS_URL (a Redis server)');
  ifRedis.it(
    "the same trace holds the rate-limit script's Redis call, a child of the gateway server span",
    async () => {
      const { status, traceId, serverSpanId } = await createPet(gateway);
      expect(status).toBe(201);
      const trace = await receiver.waitFor((spans) => {
        const found = spans.filter((s) => s.traceId === traceId);
        return (
          found.some((s) => s.scope.includes('ioredis')) && found.some((s) => s.service === 'petstore-pets') && found
        );
      });
      const redis = trace.find((s) => s.scope.includes('ioredis'))!;
      expect(redis.service).toBe('petstore-gateway');
      expect(redis.kind).toBe(SPAN_KIND.CLIENT);
      expect(redis.parentSpanId).toBe(serverSpanId);
    },
  );

  it('with tracing off, nothing of the SDK is loaded: only the API, whose calls are no-ops', () => {
    const tracingDir = join(ROOT, 'dist/apps/gateway/libs/platform/src/tracing');
    const loadedBy = (env: Record<string, string>) => {
      const script = `require(${JSON.stringify(join(tracingDir, 'register-edge.js'))}); require(${JSON.stringify(join(tracingDir, 'edge-outcome.js'))});
        const packageOf = (file) => { const at = file.lastIndexOf('node_modules/@opentelemetry/'); return at < 0 ? undefined : file.slice(at + 13).split('/').slice(0, 2).join('/'); };
        const packages = new Set(Object.keys(require.cache).map(packageOf).filter(Boolean));
        process.stdout.write(JSON.stringify([...packages].sort())); process.exit(0);`;
      const output = execFileSync(process.execPath, ['-e', script], {
        cwd: ROOT,
        env: { ...process.env, OTEL_EXPORTER_OTLP_ENDPOINT: '', OTEL_TRACES_EXPORTER: '', ...env },
      });
      return JSON.parse(output.toString()) as string[];
    };
    expect(loadedBy({})).toEqual(['@opentelemetry/api']);
    expect(loadedBy({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9' })).toEqual(
      expect.arrayContaining(['@opentelemetry/sdk-node', '@opentelemetry/instrumentation-http']),
    );
  });

  it('a bad OTEL_TRUST_INCOMING_TRACEPARENT stops the gateway at start-up with one line', async () => {
    const child = spawn(process.execPath, [GATEWAY_MAIN], {
      cwd: ROOT,
      env: { ...process.env, OTEL_TRUST_INCOMING_TRACEPARENT: 'yes', PORT: '0' },
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect(code).toBe(1);
    expect(stderr.trim()).toBe(
      'Invalid configuration: OTEL_TRUST_INCOMING_TRACEPARENT must be true or false (got "yes")',
    );
  });

  it('a 429 is a trace with the refusal recorded on the server span', async () => {
    const headers = { authorization: `Bearer ${limitedKey}` };
    expect((await send(gateway, '/v1/pets', { headers })).status).toBe(200);
    const refused = await send(gateway, '/v1/pets', { headers });
    expect(refused.status).toBe(429);
    const edge = await serverSpanOf(refused.traceId, 'petstore-gateway');
    expect(edge.spanId).toBe(refused.serverSpanId);
    expect(edge.attributes).toMatchObject({
      'petstore.consumer.name': limitedConsumer,
      'petstore.rate_limit.outcome': 'limited',
      'petstore.rate_limit.window': 'minute',
      'http.response.status_code': 429,
    });
    // Refused at the edge: nothing went to the pets service.
    expect(receiver.trace(refused.traceId).filter((s) => s.service === 'petstore-pets')).toEqual([]);
  });

  it('a 401 is a trace with the refused authentication recorded, and no consumer', async () => {
    const refused = await send(gateway, '/v1/pets', { headers: { authorization: `Bearer petk_${'x'.repeat(43)}` } });
    expect(refused.status).toBe(401);
    const edge = await serverSpanOf(refused.traceId, 'petstore-gateway');
    expect(edge.attributes).toMatchObject({
      'petstore.auth.result': 'refused',
      'petstore.consumer.plan': 'anonymous',
      'petstore.rate_limit.outcome': 'allowed',
      'http.response.status_code': 401,
    });
    expect(edge.attributes).not.toHaveProperty('petstore.consumer.name');
  });

  it("does not continue a client's traceparent by default: a new trace, still propagated to the pets service", async () => {
    const { status, traceId, serverSpanId } = await createPet(gateway, {
      traceparent: CLIENT_TRACEPARENT,
      baggage: 'tenant=evil',
    });
    expect(status).toBe(201);
    expect(traceId).not.toBe(CLIENT_TRACE_ID);
    const edge = await serverSpanOf(traceId, 'petstore-gateway');
    expect(edge.spanId).toBe(serverSpanId);
    expect(edge.parentSpanId).toBeUndefined();
    const petsServer = await serverSpanOf(traceId, 'petstore-pets');
    expect(petsServer.traceId).toBe(traceId);
    expect(receiver.trace(CLIENT_TRACE_ID)).toEqual([]);
  });

  it('continues it when OTEL_TRUST_INCOMING_TRACEPARENT=true, and flushes the last spans when the gateway exits', async () => {
    const { status, traceId } = await createPet(trustingGateway, { traceparent: CLIENT_TRACEPARENT });
    expect(status).toBe(201);
    expect(traceId).toBe(CLIENT_TRACE_ID);
    expect((await serverSpanOf(CLIENT_TRACE_ID, 'petstore-pets')).traceId).toBe(CLIENT_TRACE_ID);
    // Still in the gateway's batch; SIGTERM: graceful shutdown, then the batch leaves before the process ends.
    expect(receiver.trace(CLIENT_TRACE_ID).filter((s) => s.service === 'petstore-gateway')).toEqual([]);
    const exited = new Promise<number | null>((resolve) => trustingGateway.process.once('exit', resolve));
    trustingGateway.process.kill('SIGTERM');
    expect(await exited).toBe(0);
    const edge = receiver
      .trace(CLIENT_TRACE_ID)
      .find((s) => s.service === 'petstore-gateway' && s.kind === SPAN_KIND.SERVER);
    expect(edge?.parentSpanId).toBe(CLIENT_SPAN_ID);
  });

  it('a request whose trace is not sampled leaves no span anywhere, its log line says so (trace_flags 00), and the pets service follows the decision (traceparent flags 00)', async () => {
    // Roots never sampled at this gateway; the pets service keeps its default (parent-based, always on), so a hop
    // that did not carry the decision would be sampled there as a trace of its own.
    const [port, adminPort] = await Promise.all([freePort(), freePort()]);
    const unsampled = await startApp(GATEWAY_MAIN, port, {
      ...gatewayEnv,
      PORT: String(port),
      ADMIN_PORT: String(adminPort),
      OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
      OTEL_TRACES_SAMPLER_ARG: '0',
    });
    try {
      const before = receiver.spans.length;
      expect((await createPet(unsampled)).status).toBe(201);
      expect((await send(unsampled, '/v1/pets?limit=2', { headers: { authorization: `Bearer ${key}` } })).status).toBe(
        200,
      );
      expect((await send(unsampled, '/v1/pets?limit=2')).status).toBe(401); // an error answer of the fast path
      // Each request's log line still names its trace, flagged as not sampled (00): there is nothing to look up.
      const requestLines = unsampled.logs.filter((entry) =>
        String((entry.req as { path?: string } | undefined)?.path).startsWith('/v1/'),
      );
      expect(requestLines).toHaveLength(3);
      for (const line of requestLines)
        expect(line).toMatchObject({ trace_id: expect.stringMatching(/^[0-9a-f]{32}$/), trace_flags: '00' });
      // A sampled request after them, then ten times the batch delay: what either service exported for the
      // unsampled ones would be in by then.
      const sampled = await createPet(gateway);
      await serverSpanOf(sampled.traceId, 'petstore-pets');
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(receiver.spans.slice(before).filter((s) => s.traceId !== sampled.traceId)).toEqual([]);
    } finally {
      unsampled.process.kill('SIGKILL');
    }
  });

  it('no span carries a key, an Authorization header, the internal secret or the admin token', async () => {
    // Every request above is in: at least the traces of five gateway requests and their pets spans, and the two
    // admin API calls that minted the keys (the admin token went in their Authorization header).
    const gatewayServerSpans = receiver.spans.filter(
      (s) => s.service === 'petstore-gateway' && s.kind === SPAN_KIND.SERVER,
    );
    // Requests the admission refuses before routing (401, 429) carry the route of its mount, `/v1`.
    expect(
      gatewayServerSpans.filter((s) => String(s.attributes['http.route']).startsWith('/v1')).length,
    ).toBeGreaterThanOrEqual(5);
    expect(gatewayServerSpans.filter((s) => s.attributes['http.route'] === '/consumers')).toHaveLength(2);
    expect(receiver.spans.some((s) => s.service === 'petstore-pets')).toBe(true);
    const secrets = [key, limitedKey, INTERNAL_SECRET, ADMIN_TOKEN, 'Bearer', 'petk_'];
    for (const secret of secrets) expect(secret).toMatch(/./); // the keys were minted (beforeAll), none is undefined
    for (const span of receiver.spans) {
      for (const secret of secrets) expect(span.raw).not.toContain(secret);
      expect(Object.keys(span.attributes).filter((name) => /authorization|internal-secret/i.test(name))).toEqual([]);
    }
  });
});

const sqlOf = (span: ReceivedSpan) => span.attributes['db.query.text'] ?? span.attributes['db.statement'];
