import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadPortalConfig } from '../../../apps/portal/src/config/portal.config';
import { openPortalDatabase, PortalDatabase } from '../../../apps/portal/src/database/portal-database';
import { createGatewayTestDatabase, GatewayTestDatabase } from '../../support/gateway';

/** What the portal's tables must be after its migrations: the throttle table has no entity (raw SQL upserts). */
const PORTAL_TABLES = ['account_identities', 'account_tokens', 'accounts', 'migrations', 'throttle'];

async function tablesOf(portal: PortalDatabase): Promise<string[]> {
  const rows: Array<{ table_name: string }> = await portal.dataSource.query(
    `SELECT table_name FROM information_schema.tables WHERE table_schema = 'portal' ORDER BY table_name`,
  );
  return rows.map((row) => row.table_name);
}

async function pendingSchemaChanges(portal: PortalDatabase): Promise<string[]> {
  const pending = await portal.dataSource.driver.createSchemaBuilder().log();
  return pending.upQueries.map((query) => query.query);
}

/** The portal's migrations are its schema: exactly what its entities describe, on a server and on its own PGlite. */
describe('portal migrations', () => {
  it('apply in the portal schema of a server database and leave nothing for the entities to change (no drift)', async () => {
    const database: GatewayTestDatabase = await createGatewayTestDatabase('empty');
    let portal: PortalDatabase | undefined;
    try {
      portal = await openPortalDatabase(
        loadPortalConfig({
          NODE_ENV: 'test',
          PORTAL_ADMIN_TOKEN: 'adm_unused-by-the-database',
          PORTAL_DATABASE_URL: database.url,
        }),
      );
      expect(await tablesOf(portal)).toEqual(PORTAL_TABLES);
      expect(await pendingSchemaChanges(portal)).toEqual([]);
    } finally {
      await portal?.close();
      await database.drop();
    }
  });

  it('run on an embedded PGlite of its own (no PORTAL_DATABASE_URL), once, and keep accounts across a restart', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'portal-pglite-'));
    const config = loadPortalConfig({
      NODE_ENV: 'test',
      PORTAL_ADMIN_TOKEN: 'adm_unused-by-the-database',
      PORTAL_PGLITE_DATA_DIR: dataDir,
    });
    try {
      const first = await openPortalDatabase(config);
      try {
        expect(await tablesOf(first)).toEqual(PORTAL_TABLES);
        expect(await pendingSchemaChanges(first)).toEqual([]);
        await first.dataSource.query(
          `INSERT INTO "portal"."accounts" ("id", "email", "password_hash") VALUES (gen_random_uuid(), 'kept@example.com', 'x')`,
        );
      } finally {
        await first.close();
      }
      const second = await openPortalDatabase(config);
      try {
        const applied: Array<{ name: string }> = await second.dataSource.query(
          `SELECT name FROM "portal"."migrations"`,
        );
        expect(applied.map((row) => row.name)).toEqual([
          'CreateAccounts1795532000000',
          'AccountIdentities1796900000000',
        ]);
        const kept: Array<{ email: string }> = await second.dataSource.query(`SELECT email FROM "portal"."accounts"`);
        expect(kept.map((row) => row.email)).toEqual(['kept@example.com']);
      } finally {
        await second.close();
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
