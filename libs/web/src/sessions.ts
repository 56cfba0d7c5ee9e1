import { Logger } from '@nestjs/common';
import type { Request, RequestHandler, Response } from 'express';
import { href } from './base-path';
import session from 'express-session';
import connectPgSimple from 'connect-pg-simple';
import type { Pool } from 'pg';

declare module 'express-session' {
  interface SessionData {
    /** One message for the next page (after a redirect), shown once. */
    flash?: Flash;
  }
}

export interface Flash {
  kind: 'success' | 'error' | 'info';
  text: string;
}

export interface WebSessionOptions {
  /** The app's own pool: the table lives in the app's schema. */
  pool?: Pool;
  /** Another store instead of PostgreSQL (unit tests: express-session's MemoryStore). */
  store?: session.Store;
  /** Schema of the session table (created at start if missing: see ensureSessionTable). */
  schema: string;
  secret: string | string[];
  /** Cookie name; each app its own (two apps on one host must not share a cookie). */
  cookieName: string;
  /** https public address: the cookie is Secure. */
  secure: boolean;
  /** Idle timeout: every request pushes the expiry back (rolling). */
  idleTimeoutMs: number;
  /** Cookie path: the base path, so two apps on one host keep their cookies apart. */
  cookiePath?: string;
}

const TABLE = 'session';

/**
 * The session table, connect-pg-simple's own layout, in the app's schema: created here at start, idempotently,
 * under an advisory lock so that two instances starting together do not race. The apps' TypeORM migrations do not
 * own it (it is the library's, and no entity maps it); connect-pg-simple's createTableIfMissing is not used because
 * it does not create the schema and runs lazily on the first request.
 */
export async function ensureSessionTable(pool: Pool, schema: string): Promise<void> {
  if (!/^[a-z_][a-z0-9_]*$/.test(schema))
    throw new Error(`session schema must be a plain lower-case identifier, not "${schema}"`);
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    await client.query("SELECT pg_advisory_xact_lock(hashtext('libs/web session table'))");
    await client.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
    await client.query(
      `CREATE TABLE IF NOT EXISTS "${schema}"."${TABLE}" ("sid" varchar NOT NULL PRIMARY KEY, "sess" json NOT NULL, "expire" timestamp(6) NOT NULL)`,
    );
    await client.query(`CREATE INDEX IF NOT EXISTS "IDX_${TABLE}_expire" ON "${schema}"."${TABLE}" ("expire")`);
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}

/** The sessions middleware, and how to stop its store's work (pruning) before the app closes its pool. */
export interface WebSessions {
  handler: RequestHandler;
  close(): void;
}

/** The session cookie (name, path) of each request that went through webSession: what endSession clears. */
const sessionCookies = new WeakMap<Request, { name: string; path: string }>();

/** Requests whose session express-session made new during the request (none was loaded from the store). */
const newSessions = new WeakSet<object>();

/**
 * Whether the request's session is one worth binding to: loaded from the store (the visitor has a stored session),
 * or holding data now (set during this request, e.g. at sign-in). An anonymous visitor's empty session is not:
 * with `saveUninitialized: false` it is never stored, so nothing may depend on its id outliving the request.
 */
export function hasStoredSession(request: Request): boolean {
  const current: object | undefined = request.session;
  if (!current) return false;
  return !newSessions.has(request) || Object.keys(current).some((key) => key !== 'cookie');
}

/** express-session on PostgreSQL: HttpOnly, SameSite=Lax, Secure behind https, rolling idle expiry. */
export function webSession(options: WebSessionOptions): WebSessions {
  let store = options.store;
  let closeStore = () => undefined as void;
  if (!store) {
    if (!options.pool) throw new Error('webSession needs a pg pool (or a store)');
    const PgStore = connectPgSimple(session);
    const logger = new Logger('Sessions');
    let closed = false;
    // Through the app's logger, never console.error (the library's default); nothing once closed (the pool is going).
    const errorLog = (message: string, error: unknown) => {
      if (!closed) logger.warn(`${message} ${error instanceof Error ? error.message : String(error)}`);
    };
    const pgStore = new PgStore({
      pool: options.pool,
      schemaName: options.schema,
      tableName: TABLE,
      createTableIfMissing: false,
      pruneSessionInterval: 600,
      errorLog,
    });
    store = pgStore;
    closeStore = () => {
      closed = true;
      void pgStore.close();
    };
  }
  const cookie = { name: options.cookieName, path: options.cookiePath || '/' };
  const sessionHandler = session({
    name: options.cookieName,
    secret: options.secret,
    store,
    resave: false,
    saveUninitialized: false,
    rolling: true,
    proxy: undefined,
    cookie: {
      httpOnly: true,
      sameSite: 'lax',
      secure: options.secure,
      maxAge: options.idleTimeoutMs,
      path: cookie.path,
    },
  });
  // express-session makes every new session (none loaded, or regenerated) through store.generate: noted per request.
  const generating = store as session.Store & { generate: (request: Request) => void };
  const generate = generating.generate.bind(store);
  generating.generate = (request: Request) => {
    newSessions.add(request);
    generate(request);
  };
  const handler: RequestHandler = (request, response, next) => {
    sessionCookies.set(request, cookie);
    sessionHandler(request, response, next);
  };
  return { handler, close: closeStore };
}

/** A new session id for the same visitor (sign-in): defeats session fixation. The old session's data is dropped. */
export function regenerateSession(request: Request): Promise<void> {
  return new Promise((resolve, reject) =>
    request.session.regenerate((error: unknown) => (error ? reject(error as Error) : resolve())),
  );
}

/** Ends the session (sign-out, or a token the admin API no longer accepts). */
export function destroySession(request: Request): Promise<void> {
  return new Promise((resolve, reject) =>
    request.session.destroy((error: unknown) => (error ? reject(error as Error) : resolve())),
  );
}

/** Signs out: ends the session and clears its cookie (the name and path webSession set), even if ending failed. */
export async function endSession(request: Request, response: Response): Promise<void> {
  const cookie = sessionCookies.get(request);
  try {
    await destroySession(request);
  } finally {
    if (cookie) response.clearCookie(cookie.name, { path: cookie.path });
  }
}

/** Saves the session now (before a redirect that must see it). */
export function saveSession(request: Request): Promise<void> {
  return new Promise((resolve, reject) =>
    request.session.save((error: unknown) => (error ? reject(error as Error) : resolve())),
  );
}

export function setFlash(request: Request, kind: Flash['kind'], text: string): void {
  request.session.flash = { kind, text };
}

/**
 * 303 to `appPath` (the base path joined) once the session is stored. express-session writes the headers before
 * its own save completes (it holds back only the last byte of the body), so a browser following a plain redirect
 * can load the session before the change (a flash message, a sign-in) is in the store, and lose it.
 */
export async function redirectAfterSave(request: Request, response: Response, appPath: string): Promise<void> {
  if (request.session) await saveSession(request);
  response.redirect(303, href(String(response.locals.base ?? ''), appPath));
}
