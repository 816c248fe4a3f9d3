import { ON_POSTGRES } from './database.js';
import { HAVE_PROMTOOL } from './metrics.js';

/**
 * What a test may need that a run may lack. A block skipped for it carries the need in its name, "[skipped: needs
 * redis]", which test/support/skips.reporter.cjs counts into its one line: what was skipped, and why.
 */
export type Need = 'postgres' | 'sqlite' | 'redis' | 'chromium' | 'posix' | 'promtool';

const HAVE: Record<Exclude<Need, 'chromium'>, boolean> = {
  postgres: ON_POSTGRES,
  sqlite: !ON_POSTGRES,
  redis: Boolean(process.env.TEST_REDIS_URL),
  posix: process.platform !== 'win32',
  promtool: HAVE_PROMTOOL,
};

const tagged = (name: string, needs: Need[]) => `${name} [skipped: needs ${needs.join(', ')}]`;

/** `describe` when this run has every need (or `met`, for chromium), else `describe.skip` under a tagged name. */
export function describeIf(needs: Need[], met = needs.every((need) => need === 'chromium' || HAVE[need])) {
  return (name: string, fn: () => void) => (met ? describe(name, fn) : describe.skip(tagged(name, needs), fn));
}

/** `it` when this run has every need, else `it.skip` under a tagged name. */
export function itIf(...needs: Exclude<Need, 'chromium'>[]) {
  const met = needs.every((need) => HAVE[need]);
  return (name: string, fn: jest.ProvidesCallback, timeout?: number) => (met ? it(name, fn, timeout) : it.skip(tagged(name, needs), fn, timeout));
}
