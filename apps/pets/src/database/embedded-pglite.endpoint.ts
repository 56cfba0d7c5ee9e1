import { mkdir } from 'node:fs/promises';
import { PGlite } from '@electric-sql/pglite';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';
import { Logger } from '@nestjs/common';
import { DatabaseEndpoint } from './database-endpoint';

/**
 * PostgreSQL compiled to WebAssembly, served on a loopback port through its wire protocol. PGlite runs one
 * session, so the pool gets exactly one connection: queries from several connections would interleave inside
 * each other's transactions.
 */
export class EmbeddedPgliteEndpoint extends DatabaseEndpoint {
  readonly maxPoolSize = 1;
  readonly shared = false;

  private constructor(
    readonly url: string,
    private readonly db: PGlite,
    private readonly server: PGLiteSocketServer,
  ) {
    super();
  }

  /** `dataDir` is a folder kept across restarts, or `memory://` for a throwaway database. */
  static async start(dataDir: string): Promise<EmbeddedPgliteEndpoint> {
    if (!dataDir.startsWith('memory://')) await mkdir(dataDir, { recursive: true });
    const db = await PGlite.create(dataDir);
    // One spare connection slot lets the pool replace a dropped connection without waiting for the old one.
    const server = new PGLiteSocketServer({ db, host: '127.0.0.1', port: 0, maxConnections: 2 });
    await server.start();
    const url = `postgres://postgres@${server.getServerConn()}/postgres`;
    new Logger('Database').log(`Embedded PGlite database in ${dataDir}`);
    return new EmbeddedPgliteEndpoint(url, db, server);
  }

  async close(): Promise<void> {
    await this.server.stop();
    await this.db.close();
  }
}
