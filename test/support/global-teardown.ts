import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { maintenanceQuery } from '../../scripts/throwaway-database';
import { checkDataFolder } from './data-folder';

/** Drops what global-setup.ts made, then fails the run if any test changed the checkout's `.data/`. */
export default async function globalTeardown(): Promise<void> {
  // FIXTURES_DIR_VARIABLE of ./fixtures, not imported: it needs the aliases global-setup.ts installs.
  const dir = process.env.TEST_FIXTURES_DIR;
  if (dir) {
    const templates = readdirSync(dir).filter((name) => name.endsWith('.template'));
    for (const file of templates) {
      const name = readFileSync(join(dir, file), 'utf8').trim();
      await maintenanceQuery(process.env.DATABASE_URL!, `DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    }
    rmSync(dir, { recursive: true, force: true });
  }
  checkDataFolder();
}
