export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * `workers` loops, each awaiting `step` again and again, until `durationMs` has passed or `signal` aborts; a step in
 * flight always finishes. Resolves with the elapsed milliseconds.
 */
export async function runLoad(
  workers: number,
  until: { durationMs?: number; signal?: AbortSignal },
  step: (worker: number) => Promise<unknown>,
): Promise<number> {
  const started = Date.now();
  const end = started + (until.durationMs ?? Infinity);
  await Promise.all(
    Array.from({ length: workers }, async (_, worker) => {
      while (Date.now() < end && !until.signal?.aborted) await step(worker);
    }),
  );
  return Date.now() - started;
}

/** Polls `condition` until it holds; resolves with the milliseconds it took, or fails after `timeoutMs` naming `what`. */
export async function waitFor(what: string, condition: () => Promise<boolean>, timeoutMs: number): Promise<number> {
  const started = Date.now();
  while (!(await condition())) {
    if (Date.now() - started > timeoutMs) throw new Error(`${what}: not within ${timeoutMs / 1000} s`);
    await sleep(100);
  }
  return Date.now() - started;
}

/** What a test started (servers, proxies, schemas), undone last-first after it, even when it failed. */
export class Teardown {
  private steps: (() => unknown)[] = [];

  add<T>(value: T, undo: (value: T) => unknown): T {
    this.steps.push(() => undo(value));
    return value;
  }

  async run(): Promise<void> {
    const steps = this.steps.reverse();
    this.steps = [];
    const errors: unknown[] = [];
    for (const step of steps) {
      try {
        await step();
      } catch (error) {
        errors.push(error);
      }
    }
    if (errors.length) throw new AggregateError(errors, 'teardown failed');
  }
}
