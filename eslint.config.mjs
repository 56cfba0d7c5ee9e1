import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/** The folder tree is the architecture: apps never import each other, libs never import apps. */
const appBoundary = (other) => ({
  'no-restricted-imports': [
    'error',
    { patterns: [{ group: [`**/apps/${other}/**`, `**/${other}/src/**`], message: `Apps never import each other (${other}).` }] },
  ],
});

export default tseslint.config(
  { ignores: ['dist/**', 'libs/client/dist/**', 'libs/client/src/generated/**', 'libs/web/src/generated/**', 'node_modules/**', 'coverage/**', '.data/**', 'artifacts/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  { files: ['apps/pets/**/*.ts'], rules: appBoundary('gateway') },
  { files: ['apps/gateway/**/*.ts'], rules: appBoundary('pets') },
  {
    files: ['libs/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ group: ['**/apps/**'], message: 'Libs never import apps.' }] }],
    },
  },
  {
    files: ['scripts/**/*.js', 'test/**/*.js', 'bench/**/*.js', 'docker/**/*.js', '*.js'],
    languageOptions: { sourceType: 'commonjs', globals: { require: 'readonly', module: 'writable', process: 'readonly', __dirname: 'readonly', __filename: 'readonly', fetch: 'readonly', URL: 'readonly', console: 'readonly', setTimeout: 'readonly', Buffer: 'readonly', AbortSignal: 'readonly' } },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
);
