// The reliability suite (test/reliability): the built service as real processes under load, crashes,
// outages and slow clients. Not part of `npm test`; `npm run test:reliability` runs it, CI with RELIABILITY_MODE=short.
const { projects } = require('./jest.config.cjs');

// The same swc transform as every other suite.
const { displayName: _displayName, testMatch: _testMatch, ...shared } = projects[0];

module.exports = {
  ...shared,
  displayName: 'reliability',
  testMatch: ['<rootDir>/test/reliability/**/*.reliability-spec.ts'],
  // Scenarios measure the machine; two at once would measure each other.
  maxWorkers: 1,
  // Each scenario sets its own bound from its durations; this is only the fallback.
  testTimeout: 120_000,
};
