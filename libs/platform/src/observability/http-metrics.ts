import { createServer, Server } from 'node:http';
import { OnApplicationShutdown } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { listenOn } from '../listen';

interface RouteLayer {
  route?: { path?: string };
  match(path: string): boolean;
}

/**
 * The route a request matched (a template, so that label values stay few), or "unmatched". A request answered
 * before routing (the gateway's admission refuses it: 401, 429) is labelled with the route its path would have
 * matched, read from the app's own router, so that refusals are counted per operation like everything else.
 */
export function routeOf(request: Request): string {
  const route = (request.route as { path?: string } | undefined)?.path;
  if (route && route !== '*path') return `${request.baseUrl}${route}`;
  const stack = (request.app as unknown as { router?: { stack: RouteLayer[] } } | undefined)?.router?.stack ?? [];
  const path = request.originalUrl.split('?')[0];
  for (const layer of stack) {
    const template = layer.route?.path;
    if (!template || template === '*path') continue;
    try {
      if (layer.match(path)) return template;
    } catch {
      // A path the router cannot decode (bad percent-encoding) matches no template.
    }
  }
  return 'unmatched';
}

/**
 * Prometheus metrics of one app, in a registry of its own (several apps can live in one process in tests),
 * served on a separate port that the load balancer does not publish.
 */
export class AppMetrics implements OnApplicationShutdown {
  readonly registry: Registry;
  private readonly requests: Counter<'method' | 'route' | 'status'>;
  private readonly duration: Histogram<'method' | 'route' | 'status'>;
  /** Children bound per method, route and status (few: routes are templates), so that a request costs no label lookup. */
  private readonly series = new Map<string, { requests: Counter.Internal; duration: Histogram.Internal<string> }>();
  private server?: Server;
  /** The port /metrics is served on, once serving. */
  port?: number;

  /**
   * `listener`: a second HTTP listener of the same app (the gateway's admin API), whose requests are counted in
   * the app's registry, served on the app's metrics port, as `<listener>_http_requests_total` and
   * `<listener>_http_request_duration_seconds`.
   */
  constructor(app: string, listener?: { name: string; of: AppMetrics }) {
    const prefix = listener ? `${listener.name}_` : '';
    if (listener) {
      this.registry = listener.of.registry;
    } else {
      this.registry = new Registry();
      this.registry.setDefaultLabels({ app });
      collectDefaultMetrics({ register: this.registry });
    }
    this.requests = new Counter({
      name: `${prefix}http_requests_total`,
      help: 'HTTP requests by route and status.',
      labelNames: ['method', 'route', 'status'],
      registers: [this.registry],
    });
    this.duration = new Histogram({
      name: `${prefix}http_request_duration_seconds`,
      help: 'HTTP request latency by route and status.',
      labelNames: ['method', 'route', 'status'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10],
      registers: [this.registry],
    });
  }

  /** Express middleware: counts and times every request when its response is finished. */
  readonly middleware = (request: Request, response: Response, next: NextFunction): void => {
    const started = process.hrtime.bigint();
    response.once('finish', () => {
      const series = this.seriesOf(request.method, routeOf(request), response.statusCode);
      series.requests.inc();
      series.duration.observe(Number(process.hrtime.bigint() - started) / 1e9);
    });
    next();
  };

  private seriesOf(method: string, route: string, status: number) {
    const key = `${method} ${status} ${route}`;
    let series = this.series.get(key);
    if (series === undefined) {
      const labels = { method, route, status: String(status) };
      series = { requests: this.requests.labels(labels), duration: this.duration.labels(labels) };
      this.series.set(key, series);
    }
    return series;
  }

  /**
   * Serves GET /metrics on its own port; returns the port (0 picks a free one). A port that cannot be had stops
   * the app with one line naming `variable`.
   */
  async serve(port: number, host: string, variable = 'METRICS_PORT'): Promise<number> {
    this.server = createServer((request, response) => {
      if (request.url !== '/metrics') {
        response.writeHead(404).end();
        return;
      }
      this.registry.metrics().then(
        (text) => response.writeHead(200, { 'content-type': this.registry.contentType }).end(text),
        () => response.writeHead(500).end(),
      );
    });
    const server = this.server;
    await listenOn(server, port, host, variable);
    this.port = (server.address() as { port: number }).port;
    return this.port;
  }

  async onApplicationShutdown(): Promise<void> {
    await this.close();
  }

  async close(): Promise<void> {
    const server = this.server;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
