/**
 * Tiers, one Jest project each (docs/testing.md): `unit` beside the code (*.spec.ts, no I/O); `component` under
 * test/component/<part>/, one part of an app in a Nest testing module (its real collaborators where they are the
 * point, fakes elsewhere); `e2e` under test/e2e/<feature>/, HTTP against the services started in the test process;
 * `system` under test/system/, what spawns or kills processes (built apps, redis-server, PostgreSQL, nginx, Prism,
 * compose, npm start, the CLI), takes a store away, or can only be shown in wall time.
 * `npm test` runs unit, component and e2e, `npm run test:system` runs system, `npx jest <file>` runs any one file.
 */
// Type-checking is `npm run typecheck`'s job: tests only transpile, which keeps them fast on two cores.
const typescript = ['ts-jest', { tsconfig: '<rootDir>/tsconfig.json' }];
const esmToCommonJs = '<rootDir>/test/support/esm-to-commonjs.transformer.js';

/**
 * For the tiers that start services: once per run (not per project: Jest runs one path once), the migrated databases
 * every file copies (test/support/fixtures.ts) and the check that no test changed the checkout's .data/
 * (test/support/data-folder.ts); the apps' log lines to artifacts/test-logs/ (test/support/quiet-logs.ts).
 */
const services = {
  globalSetup: '<rootDir>/test/support/global-setup.ts',
  globalTeardown: '<rootDir>/test/support/global-teardown.ts',
  // Nest's default logger too: a file that runs migrations or a data source without an app would print them.
  setupFilesAfterEnv: ['<rootDir>/test/support/quiet-logs.ts', '<rootDir>/test/support/quiet-nest-logger.ts'],
  // On the embedded engine, each worker keeps its PGlite databases and lends them file after file, reset between
  // (test/support/worker-database-pool.ts): a database no longer costs a WebAssembly start-up per file.
  testEnvironment: '<rootDir>/test/support/database-pool-environment.ts',
};

const common = {
  // Nest 12 ships ES modules only; Jest 29's CommonJS runtime evaluates every module itself, never through Node's
  // require, so Node 24's require(esm) does not reach it (without this transform, on Node 24.22, 43 of the 78 unit
  // files failed: "Cannot use import statement outside a module"): those packages are compiled to CommonJS as they load.
  transform: { '^.+\\.ts$': typescript, '^.+\\.[mc]?js$': esmToCommonJs },
  transformIgnorePatterns: ['/node_modules/(?!(@nestjs|@electric-sql|jose|oidc-provider|openid-client|oauth4webapi)/)'],
  moduleFileExtensions: ['ts', 'js', 'json'],
  moduleNameMapper: {
    '^@app/(contract|database|errors|mail|outbound|platform|web)(/.*)?$': '<rootDir>/libs/$1/src$2',
    '^@petstore/animals-client$': '<rootDir>/libs/client/src',
  },
  testEnvironment: 'node',
};

module.exports = {
  // No test may hang CI: a stuck request or hook fails after a minute.
  testTimeout: 60_000,
  // Jest's default is one worker per core but one; the files mostly wait on sockets, timers and child processes (a
  // run keeps 1.4-1.5 of two cores busy with two workers), so a two-core machine runs three: npm test in 131 s against
  // 151 s with two, test:system in 103 s against 122 s, all green; four gained nothing (2026-11-29, idle).
  maxWorkers: Math.max(3, require('node:os').availableParallelism() - 1),
  // A worker whose heap passed this after a file is replaced (its pooled databases with it): a worker's size at the
  // end of the run is what the kernel tears down before it has exited, and Jest waits 500 ms for that
  // (test/support/worker-database-pool.ts, KEPT_PER_FIXTURE).
  workerIdleMemoryLimit: '512MB',
  projects: [
    {
      ...common,
      displayName: 'unit',
      rootDir: __dirname,
      testMatch: ['<rootDir>/{apps,libs}/**/*.spec.ts'],
      setupFilesAfterEnv: ['<rootDir>/test/support/quiet-nest-logger.ts'],
    },
    {
      ...common,
      ...services,
      displayName: 'component',
      rootDir: __dirname,
      testMatch: ['<rootDir>/test/component/**/*.component-spec.ts'],
    },
    {
      ...common,
      ...services,
      displayName: 'e2e',
      rootDir: __dirname,
      testMatch: ['<rootDir>/test/e2e/**/*.e2e-spec.ts'],
      slowTestThreshold: 30,
    },
    {
      ...common,
      ...services,
      displayName: 'system',
      rootDir: __dirname,
      testMatch: ['<rootDir>/test/system/**/*.e2e-spec.ts'],
      slowTestThreshold: 60,
    },
  ],
};
