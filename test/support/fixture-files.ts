import { join } from 'node:path';

/**
 * Where the run's fixtures are (test/support/fixtures.ts says what they are). Imports nothing of the project's, so
 * that code loaded outside a test file's sandbox (the test environment's database pool) can use it too.
 */
export type Fixture = 'empty' | 'pets' | 'gateway';
export const FIXTURES: readonly Fixture[] = ['empty', 'pets', 'gateway'];

/** Where the global set-up leaves the dumps and names the templates (inherited by Jest's workers). */
export const FIXTURES_DIR_VARIABLE = 'TEST_FIXTURES_DIR';

export function snapshotFile(dir: string, fixture: Fixture): string {
  return join(dir, `${fixture}.tgz`);
}
