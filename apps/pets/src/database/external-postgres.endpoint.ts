import { DatabaseEndpoint } from './database-endpoint';

/** A PostgreSQL server named by DATABASE_URL. */
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
