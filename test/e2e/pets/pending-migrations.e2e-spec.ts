import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigurationError } from '@app/platform';
import { PetsConfig } from '../../../apps/pets/src/config/pets.config';
import { createPetsApp } from '../../../apps/pets/src/create-pets-app';
import { createTestDatabase, TestDatabase } from '../../support/pets-service';

/** A database without the schema: the service refuses to start, rather than being ready and answering 500. */
describe('pending migrations', () => {
  let database: TestDatabase;
  let config: PetsConfig;
  beforeAll(async () => {
    // Empty: no migrated template (on PostgreSQL the default copies one).
    database = await createTestDatabase('empty');
    // Embedded: a data folder kept between the starts of this test, as `npm start` keeps .data/pglite.
    config = { ...database.config, pgliteDataDir: join(mkdtempSync(join(tmpdir(), 'petstore-pglite-')), 'data') };
  });
  afterAll(() => database?.drop());

  it('refuses to start with one line saying what to do', async () => {
    const started = createPetsApp({ ...config, migrateOnStart: false });
    await expect(started).rejects.toThrow(ConfigurationError);
    await expect(started).rejects.toThrow(
      /^pending migrations \(CreatePets1763769600000\): run npm run migrate, or set DB_MIGRATE_ON_START=true$/,
    );
  });

  it('starts without migrating once the schema is up to date', async () => {
    const migrating = await createPetsApp({ ...config, migrateOnStart: true });
    await migrating.close();
    const app = await createPetsApp({ ...config, migrateOnStart: false });
    await app.listen(0, '127.0.0.1');
    const { port } = app.getHttpServer().address() as { port: number };
    expect((await fetch(`http://127.0.0.1:${port}/health/ready`)).status).toBe(200);
    expect((await fetch(`http://127.0.0.1:${port}/pets`)).status).toBe(200);
    await app.close();
  });
});
