import { unmatchedRouteHandler } from '@app/errors';
import {
  AppMetrics,
  HostAllowList,
  PinoLoggerService,
  configureHttpApp,
  createAppLogger,
  restrictHosts,
} from '@app/platform';
import { INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { NestExpressApplication } from '@nestjs/platform-express';
import { SwaggerModule } from '@nestjs/swagger';
import type { Express } from 'express';
import { buildOpenApiDocument } from './docs/openapi';
import { GatewayAppModule, GatewayOptions } from './gateway-app.module';
import { API_PREFIX, UNPREFIXED_PATHS } from './routing/api-routes';
import { ApiPipeline } from './pipeline/api-pipeline';
import { ApiExchange } from './routing/api-exchange';
import type { Server } from 'node:http';
import type { Logger } from 'pino';

/** What a browser client may read with CORS on: the rate-limit state, Retry-After, deprecation, the id, a new animal's Location. */
const EXPOSED_HEADERS = [
  'X-RateLimit-Limit',
  'X-RateLimit-Remaining',
  'X-RateLimit-Reset',
  'RateLimit',
  'RateLimit-Policy',
  'Retry-After',
  'X-Request-Id',
  'Deprecation',
  'Sunset',
  'Link',
  'WWW-Authenticate',
  'Location',
];

/** Builds the gateway (not yet listening): /v1 routes, health outside it, the docs at /docs and /docs-json. */
export async function createGatewayApp(options: GatewayOptions): Promise<INestApplication> {
  const logger = createAppLogger('gateway', options.config.logLevel, options.logDestination);
  const metrics = new AppMetrics('gateway');
  const app = await NestFactory.create<NestExpressApplication>(GatewayAppModule.forRoot({ ...options, metrics }), {
    bodyParser: false,
    logger: new PinoLoggerService(logger),
    abortOnError: false,
  });
  return assembleGatewayHttp(app, { ...options, logger, metrics });
}

/**
 * The public app's HTTP assembly over its module: the shared steps, the /v1 prefix, the docs, the one /v1 pipeline
 * in front of Express, the Host allow-list, the metrics port and the unmatched-route answer. The gateway's module
 * for every start (createGatewayApp), a module of fakes for the pipeline's component tests: one assembly for both.
 */
export async function assembleGatewayHttp(
  app: INestApplication,
  options: GatewayOptions & { logger: Logger; metrics: AppMetrics },
): Promise<INestApplication> {
  const { logger, metrics } = options;
  const pipeline = configureHttpApp(app, {
    trustProxy: options.config.trustProxy,
    // Bodies are read by the proxy after authentication and rate limiting (UpstreamService), not here.
    body: [],
    // The request log names the consumer the pipeline authenticated (its exchange), never the key.
    observability: { logger, metrics, callerOf: (request) => ApiExchange.of(request)?.consumer },
    corsOrigins: options.config.corsOrigins,
    exposedHeaders: EXPOSED_HEADERS,
    serverLimits: options.config.http,
  });
  app.setGlobalPrefix(API_PREFIX, { exclude: UNPREFIXED_PATHS });
  const document = buildOpenApiDocument(app, options.config, options.plans, true);
  SwaggerModule.setup('docs', app, document, {
    jsonDocumentUrl: 'docs-json',
    yamlDocumentUrl: 'docs-yaml',
    customSiteTitle: 'Pet adoption store: animals API',
    swaggerOptions: { persistAuthorization: true, displayRequestDuration: true },
  });
  await app.init();
  // Every /v1 request, from here on, takes the one pipeline; Express keeps health, the docs and the rest.
  app.get(ApiPipeline).install(app.getHttpServer() as Server, app.getHttpAdapter().getInstance() as Express, pipeline);
  // In front of everything, the /v1 pipeline included: a Host the gateway does not serve reaches nothing.
  restrictHosts(app.getHttpServer() as Server, new HostAllowList(options.config.allowedHosts), 'error-body');
  await metrics.serve(options.config.metrics.port, options.config.metrics.host);
  // Nest mounts its not-found handler under /v1; everything else outside /v1, health and docs ends here.
  const express = app.getHttpAdapter().getInstance() as Express;
  express.use(unmatchedRouteHandler(express));
  return app;
}
