/**
 * The browser suite (`npm run test:browser`): the portal, the console and Swagger UI in Debian's headless Chromium,
 * driven by playwright-core. The e2e project's set-up as it is: the fixtures made once per run, each worker's pooled
 * databases, the apps' log lines to artifacts/test-logs/ and the check that .data/ is left unchanged.
 */
const base = require('./jest.config.js').projects.find((project) => project.displayName === 'e2e');

module.exports = {
  ...base,
  displayName: 'browser',
  testMatch: ['<rootDir>/test/browser/**/*.browser-spec.ts'],
  testTimeout: 120_000,
  // Jest's default here would be one worker (cores minus one): a page test mostly waits on Chromium and the apps, so
  // two files at once on two cores.
  maxWorkers: 2,
  // As for the other tiers (jest.config.js): a worker grown past this is replaced, so none is slow to exit.
  workerIdleMemoryLimit: require('./jest.config.js').workerIdleMemoryLimit,
};
