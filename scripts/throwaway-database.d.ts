/** Types of throwaway-database.js (plain Node, so that bench/support.js can use it too). */

export interface ThrowawayDatabase {
  /** `<prefix>_<pid>_<8 hex digits>`. */
  readonly name: string;
  /** The server URL it was created from, naming this database. */
  readonly url: string;
  /** Drops it WITH (FORCE); safe to call twice. */
  drop(): Promise<void>;
}

/**
 * Creates a uniquely named database on the server of `serverUrl` (any database of it may be named), a copy of
 * `options.template` when given.
 */
export function createThrowawayDatabase(
  serverUrl: string,
  prefix: string,
  options?: { template?: string },
): Promise<ThrowawayDatabase>;

/** Runs one statement on the server's maintenance database (`postgres`; else the one `serverUrl` names). */
export function maintenanceQuery(serverUrl: string, statement: string): Promise<void>;
