// Nest 12, jose and marked ship ESM only; Jest on Node 20 cannot require() ESM, so swc turns them into CommonJS.
const { suites } = require('./test/support/tiers.cjs');

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

// `@system` and `@database` tags at the top of each e2e suite (test/support/tiers.cjs, README "Tests").
const paths = (keep) =>
  suites()
    .filter(keep)
    .map((suite) => `<rootDir>/${suite.path}`);

module.exports = {
  // A global option: projects cannot set it. The system suites start real servers.
  testTimeout: 60000,
  // Two workers: the in-process suites take a core each; every suite has its own database, ports and folders.
  maxWorkers: 2,
  reporters: [
    'default',
    // One line: the tests skipped and why (test/support/skips.ts).
    '<rootDir>/test/support/skips.reporter.cjs',
    // The documented (operation, status) pairs no e2e test exercised: one line, the list with CONTRACT_COVERAGE=1.
    '<rootDir>/test/support/contract-coverage.reporter.cjs',
  ],
  projects: [
    { ...shared, displayName: 'unit', testMatch: ['<rootDir>/src/**/*.spec.ts', '<rootDir>/scripts/**/*.spec.mjs', '<rootDir>/test/support/*.spec.ts'] },
    // `npm test`: the unit and the in-process e2e suites, on SQLite.
    { ...shared, displayName: 'e2e', testMatch: paths((suite) => !suite.system), globals: { CONTRACT_COVERAGE_PROJECT: 'e2e-sqlite' } },
    // `npm run test:all` (and `npx jest`) adds the suites that start processes, on SQLite; `npm test` sets TEST_TIER=quick.
    ...(process.env.TEST_TIER === 'quick'
      ? []
      : [{ ...shared, displayName: 'system', testMatch: paths((suite) => suite.system), globals: { CONTRACT_COVERAGE_PROJECT: 'e2e-sqlite' } }]),
    // And the database-dependent suites again on PostgreSQL whenever a test server is named (CI always names one).
    ...(process.env.TEST_DATABASE_URL && process.env.TEST_TIER !== 'quick'
      ? [
          {
            ...shared,
            displayName: 'e2e-postgres',
            testMatch: paths((suite) => suite.database),
            globals: { CONTRACT_COVERAGE_PROJECT: 'e2e-postgres' },
            setupFiles: ['<rootDir>/test/support/on-postgres.cjs'],
          },
        ]
      : []),
  ],
};
