// One line after every run: the tests that did not run here, and why (README, "Tests"). A test skipped for a need
// (test/support/skips.ts) carries it in its name; one that ran in another project (a PostgreSQL-only test skipped on
// SQLite and run on PostgreSQL) did run. A whole run also names the tiers it left out.
const { suites } = require('./tiers.cjs');

const TAG = / \[skipped: needs ([\w, ]+)\]/;

const WHY = {
  postgres: (env) => ['PostgreSQL', env.TEST_DATABASE_URL ? 'npm test runs SQLite only; npm run test:all runs them' : 'TEST_DATABASE_URL unset'],
  sqlite: () => ['SQLite', 'run on SQLite only'],
  redis: () => ['Redis', 'TEST_REDIS_URL unset'],
  chromium: () => ['browser', '/usr/bin/chromium not found'],
  posix: () => ['file-mode', 'no POSIX file modes here'],
};

const plural = (n, word) => `${n} ${word}${n === 1 ? '' : 's'}`;

class SkipsReporter {
  constructor(globalConfig) {
    this.globalConfig = globalConfig;
  }

  onRunComplete(contexts, results) {
    const ran = new Set();
    const skipped = new Map();
    for (const file of results.testResults) {
      for (const test of file.testResults) {
        const name = [...test.ancestorTitles, test.title].join(' › ');
        const need = TAG.exec(name)?.[1].split(', ')[0] ?? 'unknown';
        const key = `${file.testFilePath}\0${name.replace(TAG, '')}`;
        if (test.status === 'pending' || test.status === 'skipped' || test.status === 'todo') {
          if (!skipped.has(key)) skipped.set(key, need);
        } else ran.add(key);
      }
    }
    const { testPathPatterns, testNamePattern, onlyChanged, findRelatedTests } = this.globalConfig;
    const partial = testPathPatterns?.isSet?.() || onlyChanged || findRelatedTests;
    const counts = new Map();
    let elsewhere = 0;
    for (const [key, need] of skipped) {
      if (ran.has(key)) elsewhere += 1;
      else counts.set(need, (counts.get(need) ?? 0) + 1);
    }
    const parts = [...counts].map(([need, n]) => {
      if (need === 'unknown') return testNamePattern ? `${plural(n, 'test')} (not matching -t)` : `${plural(n, 'test')} (it.skip, no need named)`;
      const [what, why] = WHY[need](process.env);
      return `${n} ${what} ${n === 1 ? 'test' : 'tests'} (${why})`;
    });
    const notRun = [];
    if (!partial) {
      const projects = new Set([...contexts].map((context) => context.config.displayName?.name));
      if (!projects.has('system')) notRun.push(`${plural(suites().filter((suite) => suite.system).length, 'system suite')} (npm run test:all runs them)`);
      if (!projects.has('e2e-postgres'))
        notRun.push(
          `the ${suites().filter((suite) => suite.database).length} @database suites on PostgreSQL (${process.env.TEST_DATABASE_URL ? 'npm run test:all runs them' : 'TEST_DATABASE_URL unset'})`,
        );
    }
    const segments = [`skipped: ${parts.length ? parts.join(', ') : 'nothing'}`];
    if (elsewhere) segments.push(`${plural(elsewhere, 'test')} of one database ran on the other`);
    if (notRun.length) segments.push(`not run: ${notRun.join(', ')}`);
    const line = segments.join('; ');
    process.stderr.write(`${line}\n`);
  }
}

module.exports = SkipsReporter;
