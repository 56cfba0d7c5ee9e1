import { mkdir } from 'node:fs/promises';
import { PGlite } from '@electric-sql/pglite';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';
import { Logger } from '@nestjs/common';
import { DatabaseEndpoint } from './database-endpoint';

/** A wire-protocol server in front of a PGlite, listening on a loopback port. */
export interface PgliteListener {
  /** host:port the server listens on. */
  readonly address: string;
  close(): Promise<void>;
}

export interface EmbeddedPgliteOptions {
  /** A folder kept across restarts, or `memory://` for a throwaway database. */
  dataDir: string;
  /** How many pooled connections the wire server makes safe on PGlite's single session. */
  maxPoolSize: number;
  /** Puts the database on the wire (defaults to PGlite's own socket server, see servePgliteSocket). */
  serve?: (db: PGlite) => Promise<PgliteListener>;
  /** The start-up log line: its context and message. */
  logContext: string;
  logMessage: string;
}

/**
 * PGlite's own socket server. PGlite runs one session, so a pool on it gets exactly one connection: queries
 * from several connections would interleave inside each other's transactions.
 */
export async function servePgliteSocket(db: PGlite): Promise<PgliteListener> {
  // One spare connection slot lets the pool replace a dropped connection without waiting for the old one.
  const server = new PGLiteSocketServer({ db, host: '127.0.0.1', port: 0, maxConnections: 2 });
  await server.start();
  return { address: server.getServerConn(), close: () => server.stop() };
}

/**
 * Dumped data directories (PGlite's `dumpDataDir`) that an in-memory database opened as `memory://<name>` starts
 * from, in place of initdb. Only the test helpers register any (test/support/fixtures.ts): a test file's database
 * then starts migrated in under a second, where an initdb in WebAssembly and the migrations take several.
 */
const memorySeeds = new Map<string, Blob>();

/** From now on (in this process), `memory://<name>` databases start as a copy of `dump`. */
export function seedMemoryDataDir(dataDir: string, dump: Blob): void {
  if (!dataDir.startsWith('memory://'))
    throw new Error(`seedMemoryDataDir: ${dataDir} is not a memory:// data directory`);
  memorySeeds.set(dataDir, dump);
}

/** PostgreSQL compiled to WebAssembly, served on a loopback port through its wire protocol. */
export class EmbeddedPgliteEndpoint extends DatabaseEndpoint {
  readonly shared = false;

  private constructor(
    readonly url: string,
    readonly maxPoolSize: number,
    private readonly db: PGlite,
    private readonly server: PgliteListener,
  ) {
    super();
  }

  static async start(options: EmbeddedPgliteOptions): Promise<EmbeddedPgliteEndpoint> {
    const { dataDir, maxPoolSize, serve = servePgliteSocket } = options;
    if (!dataDir.startsWith('memory://')) await mkdir(dataDir, { recursive: true });
    const seed = memorySeeds.get(dataDir);
    const db = seed ? await PGlite.create({ dataDir: 'memory://', loadDataDir: seed }) : await PGlite.create(dataDir);
    const server = await serve(db);
    new Logger(options.logContext).log(options.logMessage);
    return new EmbeddedPgliteEndpoint(`postgres://postgres@${server.address}/postgres`, maxPoolSize, db, server);
  }

  async close(): Promise<void> {
    await this.server.close();
    await this.db.close();
  }
}
