/** Unit tests sit beside the code (*.spec.ts); e2e tests under test/ (*.e2e-spec.ts) run real HTTP servers. */
const swc = [
  '@swc/jest',
  {
    jsc: {
      parser: { syntax: 'typescript', decorators: true },
      transform: { legacyDecorator: true, decoratorMetadata: true, useDefineForClassFields: false },
      target: 'es2022',
      keepClassNames: true,
    },
    module: { type: 'commonjs' },
  },
];

const common = {
  // Nest 12 ships ES modules only; Jest's CommonJS runtime cannot require() them (Node's require(esm) is not
  // available inside Jest before Node 24.9), so SWC compiles those packages to CommonJS along with our code.
  transform: { '^.+\\.(ts|js|mjs)$': swc },
  transformIgnorePatterns: ['/node_modules/(?!@nestjs/)'],
  moduleFileExtensions: ['ts', 'js', 'json'],
  moduleNameMapper: {
    '^@app/(contract|errors|platform)(/.*)?$': '<rootDir>/libs/$1/src$2',
  },
  testEnvironment: 'node',
};

module.exports = {
  projects: [
    { ...common, displayName: 'unit', rootDir: __dirname, testMatch: ['<rootDir>/{apps,libs}/**/*.spec.ts'] },
    {
      ...common,
      displayName: 'e2e',
      rootDir: __dirname,
      testMatch: ['<rootDir>/test/**/*.e2e-spec.ts'],
      testTimeout: 60_000,
      slowTestThreshold: 30,
    },
  ],
};
