/**
 * Where the pets service's PostgreSQL is: a server named by DATABASE_URL, or the embedded PGlite.
 * Both speak PostgreSQL's wire protocol, so the same `pg` driver, entity and migrations serve both.
 */
export abstract class DatabaseEndpoint {
  /** A postgres:// URL to connect to. */
  abstract readonly url: string;
  /** How many pooled connections the endpoint can take. */
  abstract readonly maxPoolSize: number;
  /** Whether other processes may run migrations at the same time (then an advisory lock is taken). */
  abstract readonly shared: boolean;
  abstract close(): Promise<void>;
}
