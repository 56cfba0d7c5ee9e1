import { DataSource } from 'typeorm';
import { dataSourceOptions } from '../../../apps/pets/src/database/data-source.options';
import { DatabaseEndpoint } from '@app/database';
import { openDatabaseEndpoint } from '../../../apps/pets/src/database/database.module';
import { runMigrations } from '../../../apps/pets/src/database/run-migrations';
import { createTestDatabase, TestDatabase } from '../../support/pets-service';
import { runIf } from '../../support/skip';

/** The migrations are the schema: they must build exactly what the entities describe, once, under a lock. */
describe('migrations', () => {
  let database: TestDatabase;
  let endpoint: DatabaseEndpoint;
  let source: DataSource;

  beforeAll(async () => {
    database = await createTestDatabase('empty');
    endpoint = await openDatabaseEndpoint(database.config);
    source = await new DataSource({ ...dataSourceOptions(endpoint, 1), logging: false }).initialize();
  });
  afterAll(async () => {
    if (source?.isInitialized) await source.destroy();
    await endpoint?.close();
    await database?.drop();
  });

  it('apply cleanly and leave nothing for the entities to change (no drift)', async () => {
    expect(await runMigrations(source, endpoint)).toEqual(['CreatePets1763769600000']);
    const pending = await source.driver.createSchemaBuilder().log();
    expect(pending.upQueries.map((query) => query.query)).toEqual([]);
  });

  it('are not applied twice', async () => {
    expect(await runMigrations(source, endpoint)).toEqual([]);
  });

  it('create the (status, id) index that serves the filtered list', async () => {
    const rows: Array<{ indexdef: string }> = await source.query(
      `SELECT indexdef FROM pg_indexes WHERE tablename = 'pets' AND indexname = 'IDX_pets_status_id'`,
    );
    expect(rows[0]?.indexdef).toContain('(status, id)');
  });

  it('cap ids at 2^53-1, so that every id is exact in JSON', async () => {
    const rows: Array<{ max: string }> = await source.query(
      `SELECT seqmax::text AS max FROM pg_sequence WHERE seqrelid = pg_get_serial_sequence('pets', 'id')::regclass`,
    );
    expect(rows[0]?.max).toBe(String(Number.MAX_SAFE_INTEGER));
  });

  // Concurrent start-up only exists with a shared server: PGlite's data belongs to one process.
  const ifDatabase = runIf(process.env.DATABASE_URL, 'DATABASE_URL (a PostgreSQL server)');
  ifDatabase.it('run once when two instances start at the same time', async () => {
    const fresh = await createTestDatabase('empty');
    const shared = await openDatabaseEndpoint(fresh.config);
    const a = new DataSource({ ...dataSourceOptions(shared, 2), logging: false });
    const b = new DataSource({ ...dataSourceOptions(shared, 2), logging: false });
    try {
      await Promise.all([a.initialize(), b.initialize()]);
      const results = await Promise.all([runMigrations(a, shared), runMigrations(b, shared)]);
      expect(results.flat()).toEqual(['CreatePets1763769600000']);
    } finally {
      await a.destroy();
      await b.destroy();
      await fresh.drop();
    }
  });
});
