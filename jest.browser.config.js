/** The browser suite (`npm run test:browser`): Swagger UI in Debian's headless Chromium, driven by playwright-core. */
// The e2e project without its global setup and teardown (the fixtures and the .data/ check, not tried on the browser
// tier yet): the browser tests' databases come from initdb and their migrations, as before.
const {
  globalSetup: _globalSetup,
  globalTeardown: _globalTeardown,
  ...base
} = require('./jest.config.js').projects.find((project) => project.displayName === 'e2e');

module.exports = {
  ...base,
  displayName: 'browser',
  testMatch: ['<rootDir>/test/browser/**/*.browser-spec.ts'],
  testTimeout: 120_000,
};
