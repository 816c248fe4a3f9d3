import js from '@eslint/js';
import regexp from 'eslint-plugin-regexp';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'coverage/', 'bench/results/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    // One regular expression that backtracked super-linearly froze the event loop for seconds per request
    // (docs/decisions/0014-linear-regular-expressions.md).
    // "potential" also judges patterns whose use the rule cannot see (built once, tested elsewhere). The contract's
    // patterns and the lead rules built from strings get the same analysis in src/leads/linear-patterns.spec.ts.
    files: ['src/**/*.{ts,js}', 'cli/**/*.ts', 'scripts/**/*.{js,mjs,cjs}'],
    plugins: { regexp },
    rules: {
      'regexp/no-super-linear-backtracking': ['error', { report: 'potential' }],
      'regexp/no-super-linear-move': ['error', { report: 'potential', ignorePartial: false }],
    },
  },
  {
    languageOptions: { globals: { process: 'readonly', console: 'readonly', Buffer: 'readonly', URL: 'readonly', fetch: 'readonly', AbortSignal: 'readonly' } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    // Configuration is read once, in src/config; everything else receives it by injection.
    files: ['src/**/*.ts'],
    ignores: ['src/config/config.ts', 'src/**/*.spec.ts'],
    rules: { 'no-restricted-properties': ['error', { object: 'process', property: 'env', message: 'Read configuration through AppConfig (src/config).' }] },
  },
  {
    files: ['test/**/*.ts', 'src/**/*.spec.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    // The form script runs in customers' browsers, as a classic script.
    files: ['src/forms/leads-form.js'],
    languageOptions: {
      sourceType: 'script',
      globals: {
        window: 'readonly',
        document: 'readonly',
        location: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        fetch: 'readonly',
        URL: 'readonly',
      },
    },
    // ES5 has no optional catch binding.
    rules: { '@typescript-eslint/no-unused-vars': ['error', { caughtErrors: 'none' }] },
  },
  {
    // The inbox's script runs in its people's browsers, as a classic script beside htmx.
    files: ['src/inbox/assets/*.js'],
    languageOptions: { sourceType: 'script', globals: { document: 'readonly' } },
  },
  {
    files: ['**/*.cjs'],
    languageOptions: { sourceType: 'commonjs', globals: { module: 'writable', require: 'readonly' } },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
);
