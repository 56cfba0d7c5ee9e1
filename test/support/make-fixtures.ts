import { PGlite } from '@electric-sql/pglite';
import { Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { DatabaseEndpoint, ExternalPostgresEndpoint, PgliteWireServer } from '@app/database';
import { dataSourceOptions as gatewayDataSourceOptions } from '../../apps/gateway/src/database/data-source.options';
import { runMigrations as runGatewayMigrations } from '../../apps/gateway/src/database/run-migrations';
import { dataSourceOptions as petsDataSourceOptions } from '../../apps/pets/src/database/data-source.options';
import { runMigrations as runPetsMigrations } from '../../apps/pets/src/database/run-migrations';
import { createThrowawayDatabase } from '../../scripts/throwaway-database';
import { Fixture } from './fixtures';

/** The schema the gateway's tables live in unless GATEWAY_DB_SCHEMA says otherwise (as in every test helper). */
const GATEWAY_SCHEMA = 'gateway';

/** Applies the migrations of `fixture` on `endpoint`, as the app does at start-up. */
async function migrate(fixture: Exclude<Fixture, 'empty'>, endpoint: DatabaseEndpoint): Promise<void> {
  const dataSource = new DataSource(
    fixture === 'pets' ? petsDataSourceOptions(endpoint, 1) : gatewayDataSourceOptions(endpoint, 1, GATEWAY_SCHEMA, []),
  );
  await dataSource.initialize();
  try {
    if (fixture === 'pets') await runPetsMigrations(dataSource, endpoint);
    else await runGatewayMigrations(dataSource, endpoint, GATEWAY_SCHEMA);
  } finally {
    await dataSource.destroy();
  }
}

class PgliteOnTheWire extends DatabaseEndpoint {
  readonly shared = false;
  readonly maxPoolSize = 1;
  constructor(
    readonly url: string,
    private readonly server: PgliteWireServer,
  ) {
    super();
  }
  close(): Promise<void> {
    return this.server.close();
  }
}

/** One initdb, dumped; then each app's migrations on a copy of it, dumped. Resolves to the fixtures made. */
export async function makePgliteSnapshots(save: (fixture: Fixture, dump: Buffer) => void): Promise<Fixture[]> {
  Logger.overrideLogger(false); // the migrations' "Applied …" lines
  const fresh = await PGlite.create('memory://');
  const empty = await fresh.dumpDataDir('gzip');
  await fresh.close();
  save('empty', Buffer.from(await empty.arrayBuffer()));
  // Both at once: on two cores, one migrates while the other waits on its wire server.
  await Promise.all(
    (['pets', 'gateway'] as const).map(async (fixture) => {
      const db = await PGlite.create({ dataDir: 'memory://', loadDataDir: empty });
      const server = new PgliteWireServer(db);
      const address = await server.listen(0, '127.0.0.1');
      const endpoint = new PgliteOnTheWire(`postgres://postgres@${address}/postgres`, server);
      try {
        await migrate(fixture, endpoint);
      } finally {
        await endpoint.close();
      }
      save(fixture, Buffer.from(await (await db.dumpDataDir('gzip')).arrayBuffer()));
      await db.close();
    }),
  );
  return ['empty', 'pets', 'gateway'];
}

/**
 * On DATABASE_URL's server: a database per migrated fixture, to be copied per test file with `CREATE DATABASE …
 * TEMPLATE` (nobody stays connected to it). Resolves to their names; global-teardown.ts drops them.
 */
export async function makeTemplateDatabases(
  serverUrl: string,
  save: (fixture: Fixture, name: string) => void,
): Promise<string[]> {
  Logger.overrideLogger(false);
  const names: string[] = [];
  for (const fixture of ['pets', 'gateway'] as const) {
    const database = await createThrowawayDatabase(serverUrl, `template_${fixture}`);
    names.push(database.name);
    save(fixture, database.name);
    await migrate(fixture, new ExternalPostgresEndpoint(database.url, 1));
  }
  return names;
}
