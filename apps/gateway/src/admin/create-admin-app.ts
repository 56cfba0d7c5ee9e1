import { jsonBodyMiddleware, unmatchedRouteHandler } from '@app/errors';
import {
  AppMetrics,
  configureHttpApp,
  createAppLogger,
  HostAllowList,
  LogLevelName,
  PinoLoggerService,
  restrictHosts,
} from '@app/platform';
import type { Server } from 'node:http';
import { GATEWAY_CONFIG, GatewayConfig } from '../config/gateway.config';
import { INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { NestExpressApplication } from '@nestjs/platform-express';
import { SwaggerModule } from '@nestjs/swagger';
import type { Express, NextFunction, Response } from 'express';
import type { DestinationStream } from 'pino';
import { AdminModule } from './admin.module';
import { AdminRequest } from '../access/admin-request';
import { buildAdminOpenApiDocument } from './admin-openapi';
import { ADMIN_BODY_LIMIT_BYTES } from '../admin-conventions/admin-responses';
import { AdminValidationPipe } from './admin-validation.pipe';

/**
 * The admin API: its own Nest app on its own port (ADMIN_PORT, loopback by default), built from the running
 * gateway's store and counters so that a change made here reaches this instance's cache at once. Never routed
 * by the balancer. Its OpenAPI document and Swagger UI are at /docs and /docs-json on the same port.
 */
export async function createAdminApp(
  gateway: INestApplication,
  options: { token: string; logLevel: LogLevelName; logDestination?: DestinationStream },
): Promise<INestApplication> {
  const { token } = options;
  // The same app name: Nest's Logger is process-wide, so the gateway's own lines keep saying "gateway".
  const logger = createAppLogger('gateway', options.logLevel, options.logDestination);
  const app = await NestFactory.create<NestExpressApplication>(AdminModule.forRoot({ token, gateway }), {
    bodyParser: false,
    logger: new PinoLoggerService(logger),
    abortOnError: false,
  });
  // The public app's request log and metrics too: one JSON line per call, and `admin_http_requests_total` and
  // `admin_http_request_duration_seconds` beside the public app's series, on its metrics port. The line names the
  // route, never the path sent: a token pasted into a path by mistake stays out of the logs.
  const metrics = new AppMetrics('gateway', { name: 'admin', of: gateway.get(AppMetrics) });
  configureHttpApp(app, {
    body: jsonBodyMiddleware(ADMIN_BODY_LIMIT_BYTES),
    observability: { logger, metrics, pathsOf: 'route' },
  });
  // From where, with which request id: the guard adds who, and the controllers hand it all to the repository
  // and the audit log. On the request, not in an async context store: that would slow every /v1 request down.
  app.use((request: AdminRequest, _response: Response, next: NextFunction) => {
    const id = request.headers['x-request-id'];
    request.adminOrigin = {
      requestId: typeof id === 'string' ? id : null,
      source: request.socket.remoteAddress ?? null,
    };
    next();
  });
  app.useGlobalPipes(new AdminValidationPipe());
  const document = buildAdminOpenApiDocument(app, true);
  SwaggerModule.setup('docs', app, document, { jsonDocumentUrl: 'docs-json', customSiteTitle: 'Gateway admin API' });
  await app.init();
  const express = app.getHttpAdapter().getInstance() as Express;
  express.use(unmatchedRouteHandler(express));
  // Only its own host names (ADMIN_ALLOWED_HOSTS) and loopback ones: a rebound name reaches nothing here.
  const { allowedHosts } = gateway.get<typeof GATEWAY_CONFIG, GatewayConfig>(GATEWAY_CONFIG).admin;
  restrictHosts(app.getHttpServer() as Server, new HostAllowList(allowedHosts), 'error-body');
  return app;
}
