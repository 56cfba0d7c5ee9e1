import { INestApplication } from '@nestjs/common';
import type { CorsOptions } from 'cors';
import type { Express, RequestHandler } from 'express';
import type { IncomingMessage, Server } from 'node:http';
import { AllExceptionsFilter, ErrorTranslator, jsonBodyMiddleware, preRoutingErrorHandler } from '@app/errors';
import type { Logger } from 'pino';
import { sampleFirst } from './tracing/sampling-first';
import { quietWhenUnsampled } from './tracing/unsampled';
import { AppMetrics } from './observability/http-metrics';
import { HttpServerLimits, hardenHttpServer } from './http-server';
import { assignRequestId, requestId } from './observability/request-id.middleware';
import { CallerOf, requestLogging } from './observability/request-logging';
import { securityHeaders, securityHeadersMiddleware } from './security-headers';

export interface HttpAppOptions {
  /** Body handling placed before the routes; the pets service parses JSON, the gateway forwards raw bytes. */
  body?: RequestHandler[];
  trustProxy?: string | boolean | number;
  /** Origins allowed to call from a browser; CORS stays off when empty. */
  corsOrigins?: string[];
  /** Response headers a browser client may read (with CORS on). */
  exposedHeaders?: string[];
  /** Request logs and metrics (first in line, so that every answer is counted and logged). */
  /** `pathsOf: 'route'`: the log names the route template only, never the path sent (the admin API's: a path can carry a token pasted by mistake). */
  observability?: { logger: Logger; metrics: AppMetrics; callerOf?: CallerOf; pathsOf?: 'request' | 'route' };
  /** Keep-alive, header and request timeouts of the server (defaults: DEFAULT_HTTP_SERVER_LIMITS). */
  serverLimits?: HttpServerLimits;
  /** App-specific errors the exception filter should answer as what they are (e.g. a database outage as 503). */
  errorTranslators?: ErrorTranslator[];
}

/** What configureHttpApp put in front of the routes, for a handler that serves some requests without the router. */
export interface HttpAppPipeline {
  /**
   * The handlers every request passes before routing, in order: request id, metrics, request log, security
   * headers. Each is synchronous and calls `next()` exactly once, with no error.
   */
  readonly everyRequest: readonly RequestHandler[];
  /** The one exception filter, which writes the Error body. */
  readonly filter: AllExceptionsFilter;
  /** CORS's options when it is on (its middleware is not among `everyRequest`), else undefined. */
  readonly cors: CorsOptions | undefined;
  /**
   * `everyRequest` taken apart, for a handler that writes its answer's headers in one call (`writeHead` with a
   * flat array, which skips Node's per-header map): the request id to assign, the observers (metrics, request log:
   * they only listen for the end), and the security headers as `[name, value, ...]`, computed once.
   */
  readonly headerless: {
    readonly assignRequestId: (request: IncomingMessage) => string;
    readonly observers: readonly RequestHandler[];
    readonly securityHeaders: readonly string[];
  };
}

/**
 * What both apps do to their HTTP layer: no framework fingerprint, no weak ETags on API answers, the body
 * middleware with an error handler right behind it, and the one exception filter that writes the Error body.
 * Create the app with `bodyParser: false` so that Nest does not install its own parser first.
 */
export function configureHttpApp(app: INestApplication, options: HttpAppOptions = {}): HttpAppPipeline {
  const express = app.getHttpAdapter().getInstance() as Express;
  hardenHttpServer(app.getHttpServer() as Server, options.serverLimits);
  // With tracing on: sampling decided before the instrumentation sees a request (no context for the unsampled).
  sampleFirst(app.getHttpServer() as Server);
  express.disable('x-powered-by');
  express.set('etag', false);
  if (options.trustProxy !== undefined) express.set('trust proxy', options.trustProxy);
  // First: a request whose trace is not sampled runs the rest with tracing suppressed (no child spans).
  app.use(quietWhenUnsampled);
  const observers: RequestHandler[] = options.observability
    ? [
        options.observability.metrics.middleware,
        requestLogging(options.observability.logger, options.observability.callerOf, options.observability.pathsOf),
      ]
    : [];
  const security = securityHeaders();
  const everyRequest: RequestHandler[] = [requestId, ...observers, securityHeadersMiddleware(security)];
  for (const handler of everyRequest) app.use(handler);
  const cors: CorsOptions | undefined =
    options.corsOrigins && options.corsOrigins.length > 0
      ? { origin: options.corsOrigins, exposedHeaders: options.exposedHeaders, maxAge: 600 }
      : undefined;
  if (cors) app.enableCors(cors);
  for (const handler of options.body ?? jsonBodyMiddleware()) app.use(handler);
  app.use(preRoutingErrorHandler);
  const filter = new AllExceptionsFilter(express, options.errorTranslators);
  app.useGlobalFilters(filter);
  const headerless = { assignRequestId, observers, securityHeaders: security.flat() };
  return { everyRequest, filter, cors, headerless };
}
