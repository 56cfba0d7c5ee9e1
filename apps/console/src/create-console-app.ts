import { HostAllowList, PinoLoggerService, createAppLogger, restrictHosts } from '@app/platform';
import { configureWebApp, ensureSessionTable } from '@app/web';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { existsSync } from 'node:fs';
import type { Server } from 'node:http';
import path from 'node:path';
import { Pool } from 'pg';
import { ConsoleConfig } from './config/console.config';
import { ConsoleAppModule } from './console-app.module';
import { ConsoleExceptionFilter } from './console-exception.filter';

/** apps/console/views, found by walking up from this file: in the source (ts-jest) and once built (dist/apps/console/...). */
function viewsDir(): string {
  for (let dir = __dirname; ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, 'apps', 'console', 'views');
    if (existsSync(path.join(candidate, 'overview.hbs'))) return candidate;
    if (path.dirname(dir) === dir) throw new Error(`apps/console/views not found above ${__dirname}`);
  }
}

/**
 * The console app, ready to listen: its session table in its own schema (created if missing), then the pages.
 * The pool is closed with the app.
 */
export async function createConsoleApp(config: ConsoleConfig): Promise<NestExpressApplication> {
  if (!config.databaseUrl) throw new Error('createConsoleApp needs config.databaseUrl');
  const pool = new Pool({
    connectionString: config.databaseUrl,
    max: 4,
    connectionTimeoutMillis: 5_000,
    idleTimeoutMillis: 30_000,
  });
  pool.on('error', () => undefined); // an idle client lost (database restart): the next query reconnects
  await ensureSessionTable(pool, config.schema);
  const app = await NestFactory.create<NestExpressApplication>(ConsoleAppModule.register(config), {
    bodyParser: false,
    logger: new PinoLoggerService(createAppLogger('console', config.logLevel)),
  });
  const web = configureWebApp(app, {
    appName: 'Operator console',
    viewsDir: viewsDir(),
    publicUrl: config.publicUrl,
    trustProxy: config.trustProxy,
    plans: config.plans,
    exceptionFilter: new ConsoleExceptionFilter(),
    // The sign-out form ends at the provider (RP-initiated logout): its origin may take the form's redirect.
    formActionOrigins: config.oidc ? [new URL(config.oidc.issuer).origin] : [],
    session: {
      pool,
      schema: config.schema,
      secret: config.sessionSecret,
      cookieName: 'console.sid',
      idleTimeoutMs: config.idleTimeoutMs,
    },
  });
  // The callback address the provider sends people back to: CONSOLE_PUBLIC_URL's when set.
  if (config.publicUrl) app.getHttpAdapter().getInstance().locals.publicOrigin = new URL(config.publicUrl).origin;
  // Only its own host names (CONSOLE_ALLOWED_HOSTS, CONSOLE_PUBLIC_URL's) and loopback ones, before anything else.
  restrictHosts(app.getHttpServer() as Server, new HostAllowList(config.allowedHosts), 'page');
  const close = app.close.bind(app);
  app.close = async () => {
    await close();
    web.closeSessions();
    await pool.end();
  };
  return app;
}
