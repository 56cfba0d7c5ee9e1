import { AppMetrics } from '@app/platform';
import { mintKey } from '../../support/gateway';
import { call } from '../../support/http';
import { withStack } from '../../support/with-stack';

/** One request, followed end to end by its id through the JSON logs and the Prometheus metrics. */
describe('logs and metrics', () => {
  const lines: string[] = [];
  const stack = withStack({
    pets: {},
    gateway: { env: { LOG_LEVEL: 'log' }, logDestination: { write: (line: string) => lines.push(line) } },
  });

  let key: string;

  beforeAll(async () => {
    key = await mintKey(stack.gateway, 'enterprise', 'observed', { perMinute: 2, perDay: 100 });
  });

  const metricsOf = async (port: number | undefined) => (await fetch(`http://127.0.0.1:${port}/metrics`)).text();

  it('logs one JSON line per request with id, method, route, status, duration and consumer, never the key', async () => {
    await call(`${stack.gateway.url}/v1/pets?limit=1`, {
      headers: { authorization: `Bearer ${key}`, 'x-request-id': 'trace-observed-1' },
    });
    const entries = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    const entry = entries.find((e) => (e.req as { id?: string } | undefined)?.id === 'trace-observed-1');
    expect(entry).toMatchObject({
      app: 'gateway',
      req: { id: 'trace-observed-1', method: 'GET', path: '/v1/pets' },
      res: { status: 200 },
      route: '/v1/pets',
      consumer: 'observed',
      plan: 'enterprise',
    });
    expect(typeof entry!.responseTime).toBe('number');
    expect(lines.join('\n')).not.toContain(key);
    expect(lines.join('\n').toLowerCase()).not.toContain('bearer');
  });

  it('counts requests by route and status, and refusals by plan, on the metrics port', async () => {
    await call(`${stack.gateway.url}/v1/pets?limit=1`, { headers: { authorization: `Bearer ${key}` } });
    await call(`${stack.gateway.url}/v1/pets?limit=1`, { headers: { authorization: `Bearer ${key}` } });
    const gatewayPort = stack.gateway.app.get(AppMetrics).port;
    const text = await metricsOf(gatewayPort);
    expect(text).toMatch(/http_requests_total\{method="GET",route="\/v1\/pets",status="200",app="gateway"\} [2-9]/);
    expect(text).toMatch(/http_requests_total\{method="GET",route="\/v1\/pets",status="429",app="gateway"\} 1/);
    expect(text).toMatch(/rate_limit_refusals_total\{plan="enterprise",app="gateway"\} 1/);
    expect(text).toContain('http_request_duration_seconds_bucket');

    const petsText = await metricsOf(stack.pets.app.get(AppMetrics).port);
    expect(petsText).toMatch(/http_requests_total\{method="GET",route="\/pets",status="200",app="pets"\} [1-9]/);
    expect(petsText).toMatch(/db_pool_connections\{state="total",app="pets"\} \d+/);
  });

  it('logs and counts the admin API’s calls too, by route, never the path sent', async () => {
    const refused = await call(`${stack.gateway.adminUrl}/consumers/not-a-consumer-${'s'.repeat(8)}`, {
      headers: { authorization: `Bearer ${stack.gateway.adminToken}`, 'x-request-id': 'admin-observed-1' },
    });
    expect(refused.status).toBe(404);
    const entries = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    const entry = entries.find((e) => (e.req as { id?: string } | undefined)?.id === 'admin-observed-1');
    expect(entry).toMatchObject({
      req: { id: 'admin-observed-1', method: 'GET', path: '/consumers/:name' },
      res: { status: 404 },
      route: '/consumers/:name',
    });
    const text = await metricsOf(stack.gateway.app.get(AppMetrics).port);
    expect(text).toMatch(
      /admin_http_requests_total\{method="GET",route="\/consumers\/:name",status="404",app="gateway"\} 1/,
    );
    expect(text).toContain('admin_http_request_duration_seconds_bucket');
  });

  it('does not serve metrics on the public port', async () => {
    expect((await call(`${stack.gateway.url}/metrics`)).status).toBe(404);
  });
});
