/**
 * Where an app's PostgreSQL is: a server named by a URL, or an embedded PGlite. Both speak PostgreSQL's wire
 * protocol, so the same `pg` driver, entities and migrations serve both.
 */
export abstract class DatabaseEndpoint {
  /** A postgres:// URL to connect to. */
  abstract readonly url: string;
  /** How many pooled connections the endpoint can take. */
  abstract readonly maxPoolSize: number;
  /** Whether other processes use the database too (then migrations take an advisory lock). */
  abstract readonly shared: boolean;
  abstract close(): Promise<void>;
}
