import { AllExceptionsFilter, unmatchedRouteHandler } from '@app/errors';
import { AppMetrics, PinoLoggerService, configureHttpApp, createAppLogger } from '@app/platform';
import { INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ExecutionContextHost } from '@nestjs/core/helpers/execution-context-host';
import { NestExpressApplication } from '@nestjs/platform-express';
import { SwaggerModule } from '@nestjs/swagger';
import type { ErrorRequestHandler, Express } from 'express';
import { AdmissionMiddleware } from './auth/admission.middleware';
import { buildOpenApiDocument } from './docs/openapi';
import { GatewayAppModule, GatewayOptions } from './gateway-app.module';
import { API_PREFIX, UNPREFIXED_PATHS } from './routing/api-routes';
import { apiCacheControl } from './proxy/cache-control.middleware';
import { ProxyFastPath } from './proxy/proxy-fast-path';
import type { Server } from 'node:http';

/** What a browser client may read with CORS on: the rate-limit state, Retry-After, deprecation, the id, a new animal's Location. */
const EXPOSED_HEADERS = [
  'X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset', 'RateLimit', 'RateLimit-Policy',
  'Retry-After', 'X-Request-Id', 'Deprecation', 'Sunset', 'Link', 'WWW-Authenticate', 'Location',
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
  const pipeline = configureHttpApp(app, {
    trustProxy: options.config.trustProxy,
    // Bodies are read by the proxy after authentication and rate limiting (UpstreamService), not here.
    body: [],
    observability: { logger, metrics },
    corsOrigins: options.config.corsOrigins,
    exposedHeaders: EXPOSED_HEADERS,
    serverLimits: options.config.http,
  });
  app.setGlobalPrefix(API_PREFIX, { exclude: UNPREFIXED_PATHS });
  mountAdmission(app, pipeline.filter);
  const document = buildOpenApiDocument(app, options.config, options.plans, true);
  SwaggerModule.setup('docs', app, document, {
    jsonDocumentUrl: 'docs-json',
    yamlDocumentUrl: 'docs-yaml',
    customSiteTitle: 'Pet adoption store: animals API',
    swaggerOptions: { persistAuthorization: true, displayRequestDuration: true },
  });
  await app.init();
  app.get(ProxyFastPath).install(app.getHttpServer() as Server, app.getHttpAdapter().getInstance() as Express, pipeline);
  await metrics.serve(options.config.metrics.port, options.config.metrics.host);
  // Nest mounts its not-found handler under /v1; everything else outside /v1, health and docs ends here.
  const express = app.getHttpAdapter().getInstance() as Express;
  express.use(unmatchedRouteHandler(express));
  return app;
}

/**
 * Cache-Control (never stored), authentication and the rate-limit decision for every request under /v1, ahead
 * of Nest's routes, so that the answers no route takes (404, 405) and the router's own 400 (a path it cannot
 * percent-decode) are authenticated and counted too. A plain prefix mount, not `MiddlewareConsumer.forRoutes('*')`: that one is
 * mounted on `/v1/{*path}`, whose parameter Express decodes, and would answer %FF with 400 before admission.
 * Refusals go to the same exception filter as every other error (the gateway registers no translators), with
 * the rate-limit headers already set.
 */
function mountAdmission(app: INestApplication, filter: AllExceptionsFilter): void {
  const admission = app.get(AdmissionMiddleware);
  const refuse: ErrorRequestHandler = (error, request, response, next) =>
    filter.catch(error, new ExecutionContextHost([request, response, next]));
  app.use(API_PREFIX, apiCacheControl, admission.use.bind(admission), refuse);
}
