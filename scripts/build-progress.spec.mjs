import { describe, expect, it } from '@jest/globals';
import { buildProgress } from './build-progress.mjs';

/** A reporter writing into a string, on a clock that the test moves. */
function reporter(total) {
  const clock = { now: 1000 };
  let text = '';
  const progress = buildProgress(total, { write: (chunk) => (text += chunk) }, () => clock.now);
  return { progress, clock, text: () => text };
}

describe('buildProgress (what npm run build says on stderr as it goes)', () => {
  it('names each step as it starts, then its time on the same line, then the total', async () => {
    const { progress, clock, text } = reporter(2);
    await progress.step('TypeScript (tsc → dist/src/)', () => {
      expect(text()).toBe('build 1/2: TypeScript (tsc → dist/src/)… ');
      clock.now += 6140;
    });
    await progress.step('the command-line client', async () => {
      clock.now += 1250;
    });
    progress.done();
    expect(text()).toBe('build 1/2: TypeScript (tsc → dist/src/)… done in 6.1 s\nbuild 2/2: the command-line client… done in 1.3 s\nbuild complete in 7.4 s\n');
  });

  it("writes a step's own output after its line, not inside it", async () => {
    const { progress, text } = reporter(1);
    await progress.step('the contract', () => 'a warning\n');
    expect(text()).toBe('build 1/1: the contract… done in 0.0 s\na warning\n');
  });

  it('says a step failed and passes its error on', async () => {
    const { progress, text } = reporter(3);
    await expect(
      progress.step('TypeScript', () => {
        throw new Error('TS2322');
      }),
    ).rejects.toThrow('TS2322');
    expect(text()).toBe('build 1/3: TypeScript… failed\n');
  });
});
