import { INestApplication } from '@nestjs/common';
import { PetsConfig } from '../../apps/pets/src/config/pets.config';
import { createPetsApp } from '../../apps/pets/src/create-pets-app';
import { createThrowawayDatabase } from '../../scripts/throwaway-database';
import { pgliteDataDir, pooledDatabase, templateDatabase } from './fixtures';

/**
 * A database of its own for one test file: a fresh database on the server named by DATABASE_URL, or an
 * in-memory PGlite when it is not set, a copy of the run's migrated fixture (test/support/fixtures.ts; `empty`
 * for a test of the migrations themselves). The service still runs its migrations at start, as in production:
 * on a fixture there are none left.
 */
export interface TestDatabase {
  config: PetsConfig;
  drop(): Promise<void>;
}

export async function createTestDatabase(fixture: 'pets' | 'empty' = 'pets'): Promise<TestDatabase> {
  const base = process.env.DATABASE_URL;
  const common = {
    port: 0,
    host: '127.0.0.1',
    pgliteDataDir: base ? 'memory://' : pgliteDataDir(fixture),
    migrateOnStart: true,
    poolSize: 5,
    logLevel: 'warn' as const,
    metrics: { port: 0, host: '127.0.0.1' },
    shutdownGraceMs: 5000,
  };
  const pooled = await pooledDatabase(fixture);
  // One connection, as the embedded default keeps to (apps/pets/src/database/database.module.ts).
  if (pooled) return { config: { ...common, databaseUrl: pooled.url, poolSize: 1 }, drop: pooled.release };
  if (!base) return { config: { ...common }, drop: async () => undefined };

  const template = fixture === 'empty' ? undefined : templateDatabase(fixture);
  const database = await createThrowawayDatabase(base, 'pets_test', { template });
  return { config: { ...common, databaseUrl: database.url }, drop: database.drop };
}

export interface RunningPets {
  app: INestApplication;
  url: string;
  database: TestDatabase;
  close(): Promise<void>;
}

/** Starts the real pets service on a free loopback port. */
export async function startPetsService(overrides: Partial<PetsConfig> = {}): Promise<RunningPets> {
  const database = await createTestDatabase();
  const app = await createPetsApp({ ...database.config, ...overrides });
  await app.listen(0, '127.0.0.1');
  const address = app.getHttpServer().address() as { port: number };
  return {
    app,
    database,
    url: `http://127.0.0.1:${address.port}`,
    close: async () => {
      await app.close();
      await database.drop();
    },
  };
}
