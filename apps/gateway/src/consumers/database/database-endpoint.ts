/**
 * Where the gateway's consumers and keys live: a server named by GATEWAY_DATABASE_URL, or an embedded PGlite.
 * Both speak PostgreSQL's wire protocol, so the same `pg` driver, entities and migrations serve both.
 * (The same shape as the pets service's endpoint; apps never import each other.)
 */
export abstract class DatabaseEndpoint {
  abstract readonly url: string;
  /** How many pooled connections the endpoint can take. */
  abstract readonly maxPoolSize: number;
  /** Whether other processes use the database too: migrations take an advisory lock, changes go through NOTIFY. */
  abstract readonly shared: boolean;
  abstract close(): Promise<void>;
}

/** A PostgreSQL server (GATEWAY_DATABASE_URL). */
export class ExternalPostgresEndpoint extends DatabaseEndpoint {
  readonly shared = true;

  constructor(
    readonly url: string,
    readonly maxPoolSize: number,
  ) {
    super();
  }

  async close(): Promise<void> {}
}
