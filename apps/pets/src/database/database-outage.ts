import { ApiError, ErrorTranslator } from '@app/errors';
import { QueryFailedError, QueryRunnerAlreadyReleasedError } from 'typeorm';

/** Seconds a client is asked to wait after a database outage answer: about one readiness period. */
export const DATABASE_RETRY_AFTER_SECONDS = 5;

/**
 * What a database failure means for the request that met it:
 * - `not-sent`: no statement of the request reached the database (it refused or was never reached), or the
 *   connection died inside a transaction before COMMIT, which PostgreSQL then rolls back: nothing was written,
 *   so any request, createPet included, is safe to send again;
 * - `lost`: the connection died while a COMMIT (or a statement outside a transaction) was in flight: a write
 *   may or may not have been committed.
 */
export type DatabaseOutage = 'not-sent' | 'lost';

/** Socket-level failures to reach the server at all. */
const UNREACHABLE = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);
/** Socket-level failures of an established connection. */
const CONNECTION_LOST = new Set(['ECONNRESET', 'EPIPE', 'ETIMEDOUT']);
/**
 * SQLSTATEs that mean "no connection" rather than "this statement is wrong": 57P03 cannot_connect_now
 * (starting up, shutting down), 53300 too_many_connections, 08001/08004 connection refused by the server.
 */
const REFUSED_SQLSTATES = new Set(['57P03', '53300', '08001', '08004']);
/** 57P01 admin_shutdown, 57P02 crash_shutdown, 08000/08003/08006 connection failures: the session died. */
const LOST_SQLSTATES = new Set(['57P01', '57P02', '08000', '08003', '08006']);
/** Messages of node-postgres for the same situations (it has no code for them). */
const REFUSED_MESSAGES = [
  /timeout exceeded when trying to connect/i,
  /connection terminated due to connection timeout/i,
];
const LOST_MESSAGES = [/connection terminated/i, /not queryable/i, /terminating connection/i];

interface DriverErrorLike {
  code?: unknown;
  message?: unknown;
  errors?: unknown;
}

function failureOf(error: DriverErrorLike): 'refused' | 'lost' | undefined {
  const code = typeof error.code === 'string' ? error.code : '';
  const message = typeof error.message === 'string' ? error.message : '';
  if (UNREACHABLE.has(code) || REFUSED_SQLSTATES.has(code) || REFUSED_MESSAGES.some((m) => m.test(message)))
    return 'refused';
  if (CONNECTION_LOST.has(code) || LOST_SQLSTATES.has(code) || LOST_MESSAGES.some((m) => m.test(message)))
    return 'lost';
  // Node reports a refused connection to a name with several addresses as an AggregateError.
  if (Array.isArray(error.errors) && error.errors.length > 0) {
    const inner = (error.errors as DriverErrorLike[]).map(failureOf);
    if (inner.every((kind) => kind === 'refused')) return 'refused';
  }
  return undefined;
}

/**
 * Classifies an error thrown by TypeORM or node-postgres as a database outage, or undefined when it is anything
 * else (a bug, a constraint violation, a pool closed on purpose at shutdown): those stay 500s.
 */
export function classifyDatabaseOutage(error: unknown): DatabaseOutage | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  // TypeORM releases a query runner when its connection reports an error; the next statement of that request
  // (an INSERT, a COMMIT) then fails here without ever being sent.
  if (error instanceof QueryRunnerAlreadyReleasedError) return 'not-sent';
  if (error instanceof QueryFailedError) {
    const kind = failureOf((error.driverError ?? error) as DriverErrorLike);
    if (!kind) return undefined;
    if (kind === 'refused') return 'not-sent';
    // Every write of this service runs in a transaction (TypeORM's save does): only a COMMIT whose answer was
    // lost leaves the outcome open. A session lost before COMMIT is rolled back by the server.
    const query = typeof error.query === 'string' ? error.query.trim().toUpperCase() : '';
    return query === 'COMMIT' || query === '' ? 'lost' : 'not-sent';
  }
  const kind =
    failureOf(error as DriverErrorLike) ?? failureOf(((error as { cause?: unknown }).cause ?? {}) as DriverErrorLike);
  if (!kind) return undefined;
  // Outside a query (acquiring or opening a connection) nothing was sent yet.
  return kind === 'refused' || !(error as { query?: unknown }).query ? 'not-sent' : 'lost';
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * A database outage is the service being unavailable, not a bug: 503 SERVICE_UNAVAILABLE. `Retry-After` is sent
 * whenever sending the same request again is safe; a write whose outcome is unknown gets the 503 without it,
 * and a message telling the client to look before it sends the pet again.
 */
export const databaseOutageTranslator: ErrorTranslator = (exception, request) => {
  const outage = classifyDatabaseOutage(exception);
  if (!outage) return undefined;
  if (outage === 'lost' && !SAFE_METHODS.has(request.method)) {
    return new ApiError(
      'SERVICE_UNAVAILABLE',
      'The database connection was lost while the change was being committed: it may or may not have been saved. Check (GET /pets) before sending it again.',
    );
  }
  return new ApiError(
    'SERVICE_UNAVAILABLE',
    'The database is unavailable; nothing was changed. Retry after the time given in Retry-After.',
    {
      'Retry-After': String(DATABASE_RETRY_AFTER_SECONDS),
    },
  );
};
