// What `npm run build` is doing, on stderr: a first build on a loaded machine takes over a minute, and was silent.
// One line a step, "build 2/5: the contract (openapi/ → dist/openapi-leads.json)… done in 1.4 s", and the total.
import { performance } from 'node:perf_hooks';

const seconds = (milliseconds) => `${(milliseconds / 1000).toFixed(1)} s`;

/**
 * A reporter for `total` steps. `step(label, work)` names the step, runs `work` (sync or async) and says how long it
 * took, or that it failed; what `work` returns (a command's warnings) is written after the step's line, never inside
 * it. `done()` gives the whole build's time.
 */
export function buildProgress(total, out = process.stderr, now = () => performance.now()) {
  const started = now();
  let count = 0;
  return {
    async step(label, work) {
      count += 1;
      out.write(`build ${count}/${total}: ${label}… `);
      const start = now();
      let output;
      try {
        output = await work();
      } catch (error) {
        out.write('failed\n');
        throw error;
      }
      out.write(`done in ${seconds(now() - start)}\n${output || ''}`);
    },
    done() {
      out.write(`build complete in ${seconds(now() - started)}\n`);
    },
  };
}
