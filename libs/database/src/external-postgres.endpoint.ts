import { DatabaseEndpoint } from './database-endpoint';

/** A PostgreSQL server named by a URL (DATABASE_URL, GATEWAY_DATABASE_URL). */
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
