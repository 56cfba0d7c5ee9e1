import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { ExceptionFilter } from '@nestjs/common';
import type { NestExpressApplication } from '@nestjs/platform-express';
import cookieParser from 'cookie-parser';
import express, { NextFunction, Request, Response } from 'express';
import hbs from 'hbs';
import type { Store } from 'express-session';
import type { Pool } from 'pg';
import type { PlanCatalogue } from '@app/contract';
import { HeaderField, securityHeaders, securityHeadersMiddleware } from '@app/platform';
import { normalizeBasePath, stripBasePath } from './base-path';
import { csrfProtection } from './csrf';
import { registerWebHelpers } from './helpers';
import { webSession } from './sessions';
import { UPLOT_DIST, WEB_ASSETS, WEB_VIEWS } from './web-root';
import { WebExceptionFilter } from './web-exception.filter';

export interface WebAppOptions {
  /** Shown in the header and every page title ("Operator console", "Developer portal"). */
  appName: string;
  /** The app's own templates (pages, and partials in <views>/partials: a `nav` partial fills the header's nav). */
  viewsDir: string;
  /** '' or a prefix such as /portal (normalized here): every link and form action carries it. */
  basePath?: string;
  /** The address people reach the app at; https makes the cookies Secure. */
  publicUrl?: string;
  /** Express's trust proxy (behind nginx: the proxy's address, or 1), as expressTrustProxy from @app/platform gives it. */
  trustProxy?: string | boolean | number;
  /** The plan catalogue (PLANS_FILE) for the `planLimits` helper. */
  plans?: PlanCatalogue;
  /**
   * Origins a form of the app may end up at besides its own (CSP form-action, which Chromium applies to a form's
   * redirects too): an identity provider the sign-in and sign-out forms redirect to (docs/sso.md).
   */
  formActionOrigins?: readonly string[];
  /** Replaces the library's WebExceptionFilter (an app that must also redirect, e.g. to its sign-in page). */
  exceptionFilter?: ExceptionFilter;
  /**
   * The app's own locals of every page (who is signed in, for the menu), set before anything can answer: the CSRF
   * refusal page too shows the menu of the session it refused a form of.
   */
  pageLocals?: (request: Request, response: Response) => void;
  session: {
    pool?: Pool;
    store?: Store;
    schema: string;
    secret: string | string[];
    cookieName: string;
    idleTimeoutMs: number;
  };
}

export interface WebAppSettings {
  basePath: string;
  secure: boolean;
  /** Stops the session store's background work (pruning): call it before the app closes the pool it was given. */
  closeSessions(): void;
}

function registerPartialsFrom(dir: string): void {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  for (const file of names) {
    if (file.endsWith('.hbs')) hbs.registerPartial(file.slice(0, -4), readFileSync(path.join(dir, file), 'utf8'));
  }
}

/**
 * Configures a Nest express app for server-rendered pages (create it with `bodyParser: false`): helmet's headers
 * (CSP default-src 'self': no inline script, every script a file), the base path, static assets (our CSS and scripts
 * under /assets, uPlot's dist under /assets/uplot), form bodies, cookies, sessions on PostgreSQL, CSRF on every POST,
 * the hbs engine with the shared layout and partials, and the HTML exception filter.
 */
/** helmet's CSP with `origins` added to its form-action directive (computed once). */
function withFormActions(fields: readonly HeaderField[], origins: readonly string[]): readonly HeaderField[] {
  if (origins.length === 0) return fields;
  return fields.map(([name, value]): HeaderField =>
    name.toLowerCase() === 'content-security-policy'
      ? [name, value.replace(/form-action 'self'/, `form-action 'self' ${origins.join(' ')}`)]
      : [name, value],
  );
}

export function configureWebApp(app: NestExpressApplication, options: WebAppOptions): WebAppSettings {
  const basePath = normalizeBasePath(options.basePath);
  const secure = (options.publicUrl ?? '').startsWith('https:');
  const server = app.getHttpAdapter().getInstance() as express.Express;
  server.disable('x-powered-by');
  if (options.trustProxy !== undefined) app.set('trust proxy', options.trustProxy);
  app.use(securityHeadersMiddleware(withFormActions(securityHeaders(), options.formActionOrigins ?? [])));
  app.use(stripBasePath(basePath));
  app.use('/assets/uplot', express.static(UPLOT_DIST, { index: false, maxAge: '1h' }));
  app.use('/assets', express.static(WEB_ASSETS, { index: false, maxAge: '1h' }));
  app.use(express.urlencoded({ extended: false, limit: '64kb', parameterLimit: 200 }));
  app.use(cookieParser());
  const sessions = webSession({ ...options.session, secure, cookiePath: basePath === '' ? '/' : basePath });
  app.use(sessions.handler);
  app.use((request: Request, response: Response, next: NextFunction) => {
    // Every page (the assets, some mounted by the apps after this, keep their caching): a signed-in page holds an account's data and every form a
    // session's CSRF token, so neither the browser's history cache nor a shared cache may keep one.
    if (!request.path.startsWith('/assets/')) response.setHeader('Cache-Control', 'no-store');
    response.locals.base = basePath;
    response.locals.appName = options.appName;
    response.locals.currentPath = request.path;
    if (request.session?.flash) {
      response.locals.flash = request.session.flash;
      delete request.session.flash;
    }
    options.pageLocals?.(request, response);
    next();
  });
  app.use(csrfProtection({ secret: options.session.secret, secure, cookieName: `${options.session.cookieName}.csrf` }));
  app.setBaseViewsDir([options.viewsDir, WEB_VIEWS]);
  app.setViewEngine('hbs');
  app.set('view options', { layout: 'layout' });
  registerWebHelpers(hbs, options.plans);
  registerPartialsFrom(path.join(WEB_VIEWS, 'partials'));
  registerPartialsFrom(path.join(options.viewsDir, 'partials'));
  app.useGlobalFilters(options.exceptionFilter ?? new WebExceptionFilter());
  return { basePath, secure, closeSessions: sessions.close };
}
