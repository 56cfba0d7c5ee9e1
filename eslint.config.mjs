import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import houseRules from './eslint-rules/file-role.mjs';

/** The folder tree is the architecture: apps never import each other, libs never import apps. */
const appBoundary = (other, ...more) => ({
  'no-restricted-imports': [
    'error',
    {
      patterns: [
        { group: [`**/apps/${other}/**`, `**/${other}/src/**`], message: `Apps never import each other (${other}).` },
        ...more,
      ],
    },
  ],
});

/**
 * A framework's internal paths (`@nestjs/<package>/dist/...`, `/constants`, `/internal`, `/helpers/...`) are
 * imported in one adapter only (apps/gateway/src/nest-internals.ts): an upgrade that moves one breaks one file.
 */
const FRAMEWORK_INTERNALS = {
  group: ['@nestjs/*/*', '@nestjs/*/*/**'],
  message:
    "A framework's internal path is imported in apps/gateway/src/nest-internals.ts only: import the package's public API, or add it there.",
};

export default tseslint.config(
  {
    ignores: [
      'dist/**',
      'libs/client/dist/**',
      'libs/client/src/generated/**',
      'libs/web/src/generated/**',
      'node_modules/**',
      'coverage/**',
      '.data/**',
      'artifacts/**',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  { files: ['apps/pets/**/*.ts'], rules: appBoundary('gateway', FRAMEWORK_INTERNALS) },
  {
    // Names and file roles agree (eslint-rules/file-role.mjs).
    files: ['apps/*/src/**/*.ts'],
    ignores: ['**/*.spec.ts'],
    plugins: { house: houseRules },
    rules: { 'house/file-role': 'error' },
  },
  {
    // Clock everywhere (issue #35 point 6): the gateway reads the time through the injected Clock (clock.ts).
    files: ['apps/gateway/src/**/*.ts'],
    ignores: ['apps/gateway/src/clock.ts', '**/*.spec.ts'],
    rules: {
      'no-restricted-properties': [
        'error',
        { object: 'Date', property: 'now', message: 'Read the time through the injected Clock (clock.ts).' },
      ],
      'no-restricted-syntax': [
        'error',
        {
          selector: "NewExpression[callee.name='Date'][arguments.length=0]",
          message: 'Read the time through the injected Clock (clock.ts).',
        },
      ],
    },
  },
  {
    files: ['apps/portal/**/*.ts', 'apps/console/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [FRAMEWORK_INTERNALS] }] },
  },
  {
    files: ['apps/gateway/**/*.ts'],
    ignores: ['apps/gateway/src/nest-internals.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: ['**/apps/pets/**', '**/pets/src/**'], message: 'Apps never import each other (pets).' },
            FRAMEWORK_INTERNALS,
          ],
        },
      ],
    },
  },
  {
    files: ['libs/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [{ group: ['**/apps/**'], message: 'Libs never import apps.' }, FRAMEWORK_INTERNALS] },
      ],
    },
  },
  {
    files: ['scripts/**/*.js', 'test/**/*.js', 'bench/**/*.js', 'docker/**/*.js', '.ci/**/*.js', '*.js'],
    languageOptions: {
      sourceType: 'commonjs',
      globals: {
        require: 'readonly',
        module: 'writable',
        process: 'readonly',
        __dirname: 'readonly',
        __filename: 'readonly',
        fetch: 'readonly',
        URL: 'readonly',
        console: 'readonly',
        setTimeout: 'readonly',
        Buffer: 'readonly',
        AbortSignal: 'readonly',
        Request: 'readonly',
      },
    },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
);
