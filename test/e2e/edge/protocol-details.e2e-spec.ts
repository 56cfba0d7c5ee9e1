import { AppMetrics } from '@app/platform';
import { DataSource } from 'typeorm';
import { mintKey } from '../../support/gateway';
import { call, expectErrorBody, postJson } from '../../support/http';
import { RunningPets } from '../../support/pets-service';
import { withStack } from '../../support/with-stack';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function readinessRequestsServed(pets: RunningPets): Promise<number> {
  const metric = await pets.app.get(AppMetrics).registry.getSingleMetric('http_requests_total')!.get();
  return metric.values.filter((v) => v.labels.route === '/health/ready').reduce((sum, v) => sum + v.value, 0);
}

/** Messages in the project's words, HEAD, and a readiness endpoint that cannot be used to amplify load. */
describe('protocol details', () => {
  const logs: Array<{ level: number; msg: string; context?: string }> = [];
  const stack = withStack({
    pets: {},
    gateway: {
      env: { LOG_LEVEL: 'log' },
      logDestination: { write: (line: string) => void logs.push(JSON.parse(line) as (typeof logs)[number]) },
    },
  });

  let key: string;

  beforeAll(async () => {
    key = await mintKey(stack.gateway, 'enterprise', 'details', { perMinute: 100_000, perDay: 1_000_000 });
    await postJson(`${stack.gateway.url}/v1/pets`, { name: 'Rex', categoryId: 1 }, { authorization: `Bearer ${key}` });
  });
  const auth = () => ({ authorization: `Bearer ${key}` });

  it('names an unknown body field and lists the allowed ones', async () => {
    const reply = await postJson(
      `${stack.gateway.url}/v1/pets`,
      { name: 'Rex', categoryId: 1, color: 'brown' },
      auth(),
    );
    expectErrorBody(reply, 400, 'VALIDATION_FAILED');
    expect((reply.body as { message: string }).message).toBe(
      'unknown field `color`: allowed fields are name, categoryId, status',
    );
  });

  it('names an unknown query parameter and lists the allowed ones', async () => {
    const reply = await call(`${stack.gateway.url}/v1/pets?colour=brown`, { headers: auth() });
    expectErrorBody(reply, 400, 'VALIDATION_FAILED');
    expect((reply.body as { message: string }).message).toBe(
      'unknown query parameter `colour`: allowed query parameters are limit, status, after',
    );
  });

  it('answers HEAD with the headers GET would have, Content-Length included, and no body', async () => {
    const get = await fetch(`${stack.gateway.url}/v1/pets?limit=5`, { headers: auth() });
    const getBody = Buffer.from(await get.arrayBuffer());
    const head = await fetch(`${stack.gateway.url}/v1/pets?limit=5`, { method: 'HEAD', headers: auth() });
    expect(head.status).toBe(200);
    expect(getBody.length).toBeGreaterThan(2);
    expect(head.headers.get('content-length')).toBe(String(getBody.length));
    expect(head.headers.get('content-type')).toBe(get.headers.get('content-type'));
    expect(head.headers.get('x-ratelimit-remaining')).not.toBeNull();
    expect((await head.arrayBuffer()).byteLength).toBe(0);
  });

  it('asks the pets service for its readiness at most once a second, however often it is probed', async () => {
    await sleep(1100);
    const before = await readinessRequestsServed(stack.pets);
    const started = Date.now();
    const probes = await Promise.all(Array.from({ length: 40 }, () => call(`${stack.gateway.url}/health/ready`)));
    for (let i = 0; i < 10; i += 1) probes.push(await call(`${stack.gateway.url}/health/ready`));
    const elapsed = Date.now() - started;
    expect(probes.every((p) => p.status === 200)).toBe(true);
    const asked = (await readinessRequestsServed(stack.pets)) - before;
    expect(asked).toBeGreaterThanOrEqual(1);
    // Without the cache it would be 50; with it, one per second elapsed (plus the one in flight at a boundary).
    expect(asked).toBeLessThanOrEqual(Math.ceil(elapsed / 1000) + 1);
  });

  it('logs a failing dependency once per outage, and its recovery once', async () => {
    const dataSource = stack.pets.app.get(DataSource);
    const lines = (text: string) => logs.filter((l) => l.msg.startsWith(text));
    await dataSource.destroy();
    try {
      // Answers are reused for a second (by the gateway and by the pets service): wait for the first 503.
      let status = 200;
      for (let i = 0; i < 30 && status !== 503; i += 1) {
        await sleep(100);
        status = (await call(`${stack.gateway.url}/health/ready`)).status;
      }
      for (let i = 0; i < 20; i += 1) {
        expect((await call(`${stack.gateway.url}/health/ready`)).status).toBe(503);
        await sleep(120);
      }
    } finally {
      await dataSource.initialize();
    }
    let ready = 503;
    for (let i = 0; i < 50 && ready !== 200; i += 1) {
      await sleep(200);
      ready = (await call(`${stack.gateway.url}/health/ready`)).status;
    }
    expect(ready).toBe(200);
    expect(lines('The pets service is not ready')).toHaveLength(1);
    expect(lines('The pets service is not ready')[0].level).toBe(50);
    expect(lines('The pets service is ready again')).toHaveLength(1);
  });
});
