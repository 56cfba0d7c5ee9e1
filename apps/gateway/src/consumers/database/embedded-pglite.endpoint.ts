import { mkdir } from 'node:fs/promises';
import { PGlite } from '@electric-sql/pglite';
import { Logger } from '@nestjs/common';
import { DatabaseEndpoint } from './database-endpoint';
import { PgliteWireServer } from './pglite-wire-server';

/**
 * PostgreSQL compiled to WebAssembly, served on a loopback port through its wire protocol (PgliteWireServer,
 * which makes several connections safe on PGlite's single session). Its data folder belongs to this process.
 */
export class EmbeddedPgliteEndpoint extends DatabaseEndpoint {
  readonly maxPoolSize = 2;
  readonly shared = false;

  private constructor(
    readonly url: string,
    private readonly db: PGlite,
    private readonly server: PgliteWireServer,
  ) {
    super();
  }

  /** `dataDir` is a folder kept across restarts, or `memory://` for a throwaway database. */
  static async start(dataDir: string, port = 0): Promise<EmbeddedPgliteEndpoint> {
    if (!dataDir.startsWith('memory://')) await mkdir(dataDir, { recursive: true });
    const db = await PGlite.create(dataDir);
    const server = new PgliteWireServer(db);
    const address = await server.listen(port, '127.0.0.1');
    new Logger('Consumers').log(`Embedded PGlite database for consumers and keys in ${dataDir}`);
    return new EmbeddedPgliteEndpoint(`postgres://postgres@${address}/postgres`, db, server);
  }

  async close(): Promise<void> {
    await this.server.close();
    await this.db.close();
  }
}
