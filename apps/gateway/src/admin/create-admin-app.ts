import { jsonBodyMiddleware, unmatchedRouteHandler } from '@app/errors';
import { configureHttpApp, createAppLogger, LogLevelName, PinoLoggerService } from '@app/platform';
import { INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { NestExpressApplication } from '@nestjs/platform-express';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import type { Express, NextFunction, Request, Response } from 'express';
import type { OpenAPIObject } from '@nestjs/swagger';
import { adminRequestContext } from '../consumers/admin-context';
import type { DestinationStream } from 'pino';
import { AdminModule } from './admin.module';
import { AdminValidationPipe } from './admin-validation.pipe';

/** An import batch (500 consumers with their keys) fits; nothing on this port takes more. */
const ADMIN_BODY_LIMIT_BYTES = 1024 * 1024;

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
  const app = await NestFactory.create<NestExpressApplication>(
    AdminModule.forRoot({ token, gateway }),
    { bodyParser: false, logger: new PinoLoggerService(logger), abortOnError: false },
  );
  configureHttpApp(app, { body: jsonBodyMiddleware(ADMIN_BODY_LIMIT_BYTES) });
  // Who calls, from where, with which request id: for the guard, the repository's checks and the audit log.
  app.use((request: Request, _response: Response, next: NextFunction) => {
    const id = request.headers['x-request-id'];
    adminRequestContext.run({ requestId: typeof id === 'string' ? id : null, source: request.socket.remoteAddress ?? null }, next);
  });
  app.useGlobalPipes(new AdminValidationPipe());
  const document = SwaggerModule.createDocument(
    app,
    new DocumentBuilder()
      .setTitle('Pet adoption store: gateway admin API')
      .setDescription(
        'Consumers and API keys of the gateway (the control plane). Bound to loopback by default and never routed by the ' +
          'load balancer: every route needs `Authorization: Bearer <token>`, ADMIN_TOKEN (root: every scope) or an admin ' +
          'token (`adm_…`) holding the scope the route names (`x-required-scope`; otherwise 403 `FORBIDDEN`). ' +
          'Errors use the `{code, message, status}` body.',
      )
      .setVersion('1')
      .addBearerAuth({ type: 'http', scheme: 'bearer', description: 'ADMIN_TOKEN' })
      .build(),
  );
  describeScopes(document);
  SwaggerModule.setup('docs', app, document, { jsonDocumentUrl: 'docs-json', customSiteTitle: 'Gateway admin API' });
  await app.init();
  const express = app.getHttpAdapter().getInstance() as Express;
  express.use(unmatchedRouteHandler(express));
  return app;
}

/** Each operation's description says which scope it needs (from its `x-required-scope`), or that it is root's only. */
function describeScopes(document: OpenAPIObject): void {
  for (const item of Object.values(document.paths)) {
    for (const method of ['get', 'put', 'post', 'patch', 'delete'] as const) {
      const operation = item[method] as (Record<string, unknown> & { description?: string }) | undefined;
      if (!operation) continue;
      const scope = operation['x-required-scope'];
      const line = typeof scope === 'string' ? `Required scope: \`${scope}\` (or ADMIN_TOKEN).` : 'Root only (ADMIN_TOKEN).';
      operation.description = operation.description ? `${operation.description}\n\n${line}` : line;
    }
  }
}
