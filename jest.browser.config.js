/** The browser suite (`npm run test:browser`): Swagger UI in Debian's headless Chromium, driven by playwright-core. */
const base = require('./jest.config.js').projects.find((project) => project.displayName === 'e2e');

module.exports = {
  ...base,
  displayName: 'browser',
  testMatch: ['<rootDir>/test/browser/**/*.browser-spec.ts'],
  testTimeout: 120_000,
};
