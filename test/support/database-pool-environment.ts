import type { EnvironmentContext, JestEnvironmentConfig } from '@jest/environment';
import { TestEnvironment } from 'jest-environment-node';
import { WorkerDatabasePool } from './worker-database-pool';

/** One per Jest worker: this module is loaded once per worker process, outside the test files' sandboxes. */
const pool = new WorkerDatabasePool();

/** Where a test file finds the pool (test/support/fixtures.ts, `pooledDatabase`). */
export const POOL_GLOBAL = '__workerDatabasePool';

/**
 * Node's test environment, with the worker's database pool (worker-database-pool.ts) in reach of the test file,
 * and everything the file did not hand back reclaimed when it ends.
 */
export default class DatabasePoolEnvironment extends TestEnvironment {
  constructor(config: JestEnvironmentConfig, context: EnvironmentContext) {
    super(config, context);
    if (pool.available()) this.global[POOL_GLOBAL] = pool;
  }

  override async teardown(): Promise<void> {
    await pool.reclaimAll();
    await super.teardown();
  }
}
