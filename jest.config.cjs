// Nest 12, jose and marked ship ESM only; Jest on Node 20 cannot require() ESM, so swc turns them into CommonJS.
const swcTs = {
  jsc: {
    parser: { syntax: 'typescript', decorators: true },
    transform: { legacyDecorator: true, decoratorMetadata: true },
    target: 'es2022',
  },
  module: { type: 'commonjs' },
};
const swcJs = { jsc: { parser: { syntax: 'ecmascript' }, target: 'es2022' }, module: { type: 'commonjs' } };
const shared = {
  testEnvironment: 'node',
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  transformIgnorePatterns: ['/node_modules/(?!(@nestjs|jose|marked|oauth4webapi|openid-client)/)'],
  transform: { '^.+\\.ts$': ['@swc/jest', swcTs], '^.+\\.m?js$': ['@swc/jest', swcJs] },
};
const e2e = { ...shared, testMatch: ['<rootDir>/test/**/*.e2e-spec.ts'] };
module.exports = {
  // A global option: projects cannot set it. The process suites start real servers.
  testTimeout: 60000,
  // After the run, the documented (operation, status) pairs no e2e test exercised (a report, never a failure).
  reporters: ['default', '<rootDir>/test/support/contract-coverage.reporter.cjs'],
  projects: [
    { ...shared, displayName: 'unit', testMatch: ['<rootDir>/src/**/*.spec.ts', '<rootDir>/scripts/**/*.spec.mjs'] },
    { ...e2e, displayName: 'e2e-sqlite', globals: { CONTRACT_COVERAGE_PROJECT: 'e2e-sqlite' } },
    // The same suites again on PostgreSQL whenever a test server is named (CI always names one).
    ...(process.env.TEST_DATABASE_URL
      ? [
          {
            ...e2e,
            displayName: 'e2e-postgres',
            globals: { CONTRACT_COVERAGE_PROJECT: 'e2e-postgres' },
            setupFiles: ['<rootDir>/test/support/on-postgres.cjs'],
          },
        ]
      : []),
  ],
};
