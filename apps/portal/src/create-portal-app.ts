import { INestApplication, Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { NestExpressApplication } from '@nestjs/platform-express';
import express, { NextFunction, Request, Response } from 'express';
import { AppMetrics, HostAllowList, PinoLoggerService, createAppLogger, restrictHosts } from '@app/platform';
import type { Server } from 'node:http';
import { configureWebApp, ensureSessionTable } from '@app/web';
import { PortalConfig } from './config/portal.config';
import { openPortalDatabase } from './database/portal-database';
import { Mailer } from '@app/mail';
import { PortalAppModule } from './portal-app.module';
import { PORTAL_ASSETS, PORTAL_VIEWS } from './portal-root';
import { SWAGGER_UI_DIST, SWAGGER_UI_FILES } from './reference/reference.controller';
import { PortalExceptionFilter } from './portal-exception.filter';
import { ShutdownHooks } from './shutdown-hooks';

/** How long a signed-in session lasts without a request. */
export const SESSION_IDLE_MS = 2 * 60 * 60 * 1000;

/** Builds the portal (not yet listening): main.ts and the tests share it. */
export async function createPortalApp(config: PortalConfig): Promise<INestApplication> {
  const logger = new PinoLoggerService(createAppLogger('portal', config.logLevel));
  // The database opens before the app exists: its migration lines go through the same JSON logger.
  Logger.overrideLogger(logger);
  const database = await openPortalDatabase(config);
  await ensureSessionTable(database.pool, config.schema);
  const mailer = new Mailer(config.smtpUrl, config.mailFrom);
  const metrics = new AppMetrics('portal');
  const identityProviders = config.oidcProviders.map(({ id, name }) => ({ name, path: `/login/oidc/${id}` }));
  const app = await NestFactory.create<NestExpressApplication>(
    PortalAppModule.forRoot(config, database, mailer, metrics),
    {
      bodyParser: false,
      logger,
      abortOnError: false,
    },
  );
  const web = configureWebApp(app, {
    appName: 'Developer portal',
    exceptionFilter: new PortalExceptionFilter(),
    viewsDir: PORTAL_VIEWS,
    basePath: config.basePath,
    publicUrl: config.publicUrl,
    trustProxy: config.trustProxy,
    plans: config.plans,
    // "Link <provider>" on the sign-in methods page is a form that ends at the provider (docs/sso.md).
    formActionOrigins: [...new Set(config.oidcProviders.map((provider) => new URL(provider.issuer).origin))],
    session: {
      pool: database.pool,
      schema: config.schema,
      secret: config.sessionSecret,
      cookieName: 'portal.sid',
      idleTimeoutMs: SESSION_IDLE_MS,
    },
    // The menu of a signed-in session on every page, the CSRF refusal included; the providers' buttons (docs/sso.md).
    pageLocals: (request, response) => {
      response.locals.signedIn = !!request.session?.accountId;
      response.locals.identityProviders = identityProviders;
    },
  });
  // Only its own host names (PORTAL_ALLOWED_HOSTS, PORTAL_PUBLIC_URL's) and loopback ones, before anything else.
  restrictHosts(app.getHttpServer() as Server, new HostAllowList(config.allowedHosts), 'page');
  app.use('/assets/portal', express.static(PORTAL_ASSETS, { index: false, maxAge: '1h' }));
  // Only the two files the API reference page loads: not the package's demo page, package.json or source maps.
  const swaggerUi = express.static(SWAGGER_UI_DIST, { index: false, maxAge: '1h' });
  app.use('/assets/swagger-ui', (request: Request, response: Response, next: NextFunction) =>
    SWAGGER_UI_FILES.has(request.path) ? swaggerUi(request, response, next) : next(),
  );
  app.get(ShutdownHooks).onClose(async () => {
    mailer.close();
    web.closeSessions();
    await database.close();
  });
  try {
    await app.init();
    if (config.metrics) await metrics.serve(config.metrics.port, config.metrics.host, 'PORTAL_METRICS_PORT');
  } catch (error) {
    await app.close().catch(() => undefined);
    throw error;
  }
  return app;
}
