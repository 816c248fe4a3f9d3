import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

// The tiers are tags a person writes; these keep a suite that starts processes out of `npm test`, and the skips line true.
const load = createRequire(join(process.cwd(), 'package.json'));
const { suites } = load('./test/support/tiers.cjs') as { suites(): { path: string; system: boolean; database: boolean }[] };
const SkipsReporter = load('./test/support/skips.reporter.cjs');

describe('test tiers', () => {
  it('tags @system every e2e suite that starts a process (child_process, the built server, Chromium)', () => {
    const untagged = suites()
      .filter((suite) => !suite.system)
      .filter((suite) => /from 'node:child_process'|\bstartServer\(|from 'playwright-core'/.test(readFileSync(suite.path, 'utf8')))
      .map((suite) => suite.path);
    expect(untagged).toEqual([]);
  });

  it('reads the tags from the comment that opens the file, and nowhere else', () => {
    const byPath = new Map(suites().map((suite) => [suite.path, suite]));
    expect(byPath.get('test/browser.e2e-spec.ts')).toMatchObject({ system: true, database: false });
    expect(byPath.get('test/leads.e2e-spec.ts')).toMatchObject({ system: false, database: true });
    expect(byPath.get('test/meta.e2e-spec.ts')).toMatchObject({ system: false, database: false });
  });
});

describe('the skips line', () => {
  const test = (status: string, title: string, ancestorTitles: string[] = ['suite']) => ({ status, title, ancestorTitles });
  function line(projects: string[], files: Record<string, ReturnType<typeof test>[]>, env: Record<string, string> = {}): string {
    const saved = { ...process.env };
    const write = jest.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      delete process.env.TEST_DATABASE_URL;
      delete process.env.TEST_REDIS_URL;
      Object.assign(process.env, env);
      const contexts = new Set(projects.map((name) => ({ config: { displayName: { name } } })));
      const testResults = Object.entries(files).map(([testFilePath, results]) => ({ testFilePath, testResults: results }));
      new SkipsReporter({ testPathPatterns: { isSet: () => false } }).onRunComplete(contexts, { testResults });
      return String(write.mock.calls[0][0]);
    } finally {
      write.mockRestore();
      process.env = saved;
    }
  }

  it('names each need with its reason, and the tiers npm test leaves out', () => {
    const text = line(['unit', 'e2e'], {
      a: [test('pending', 'x [skipped: needs postgres]'), test('passed', 'y')],
      b: [test('pending', 'r1', ['shared through Redis [skipped: needs redis]']), test('pending', 'r2', ['shared through Redis [skipped: needs redis]'])],
    });
    const systemSuites = suites().filter((suite) => suite.system).length;
    const databaseSuites = suites().filter((suite) => suite.database).length;
    expect(text).toBe(
      `skipped: 1 PostgreSQL test (TEST_DATABASE_URL unset), 2 Redis tests (TEST_REDIS_URL unset); not run: ${systemSuites} system suites (npm run test:all runs them), the ${databaseSuites} @database suites on PostgreSQL (TEST_DATABASE_URL unset)\n`,
    );
  });

  it('does not count as skipped a test of one database that ran on the other', () => {
    const text = line(
      ['unit', 'e2e', 'system', 'e2e-postgres'],
      { a: [test('pending', 'x [skipped: needs sqlite]'), test('passed', 'x')] },
      { TEST_DATABASE_URL: 'postgres://x' },
    );
    expect(text).toBe('skipped: nothing; 1 test of one database ran on the other\n');
  });
});
