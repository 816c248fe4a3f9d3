/**
 * A job every instance runs at start and then every `intervalMs` (purges, retention, the digest's look at the clock):
 * one run at a time (a call during a run gets that run's answer), a failed run logged by `onError` and tried again at
 * the next tick, the timer never holding the process open, and shutdown waiting for the run under way.
 */
export class PeriodicJob<T> {
  private timer?: NodeJS.Timeout;
  private running?: Promise<T>;
  private stopped = false;

  constructor(
    private readonly intervalMs: number,
    private readonly onError: (error: unknown) => void,
  ) {}

  /** Whether shutdown began: a run's batch loop stops between batches. */
  get stopping(): boolean {
    return this.stopped;
  }

  /** Calls `tick` now and then every intervalMs. */
  start(tick: () => Promise<unknown>): void {
    const run = () => void tick().catch(this.onError);
    run();
    this.timer = setInterval(run, this.intervalMs).unref();
  }

  /** `work`, unless a run is under way: then that run's answer. */
  once(work: () => Promise<T>): Promise<T> {
    this.running ??= work().finally(() => (this.running = undefined));
    return this.running;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await this.running?.catch(() => undefined);
  }
}
