// The tiers of the e2e suites (README, "Tests"), read from a tag in the doc comment that opens each file:
// `@system`: the suite starts processes (the built service, the CLI, npm, Chromium); `npm run test:all` runs it, `npm
// test` does not. `@database`: the suite's behaviour depends on the database; it alone runs again on PostgreSQL.
const { readdirSync, readFileSync } = require('node:fs');
const { join } = require('node:path');

const TEST_DIR = join(module.path, '..');

/** Every e2e suite with its tags, by path relative to the package. */
function suites() {
  return readdirSync(TEST_DIR)
    .filter((name) => name.endsWith('.e2e-spec.ts'))
    .sort()
    .map((name) => {
      const opening = /^\/\*\*([\s\S]*?)\*\//.exec(readFileSync(join(TEST_DIR, name), 'utf8'))?.[1] ?? '';
      return { path: `test/${name}`, system: /@system\b/.test(opening), database: /@database\b/.test(opening) };
    });
}

module.exports = { suites };
