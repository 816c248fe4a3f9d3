import { PeriodicJob } from './periodic-job.js';

describe('PeriodicJob', () => {
  afterEach(() => jest.useRealTimers());

  it('ticks at start and every interval, logs a failed tick, and stops ticking on stop', async () => {
    jest.useFakeTimers();
    const errors: unknown[] = [];
    const job = new PeriodicJob<number>(1000, (error) => errors.push(error));
    const tick = jest.fn().mockResolvedValueOnce(1).mockRejectedValueOnce(new Error('database down')).mockResolvedValue(2);
    job.start(tick);
    expect(tick).toHaveBeenCalledTimes(1);
    jest.advanceTimersByTime(3000);
    expect(tick).toHaveBeenCalledTimes(4);
    await Promise.resolve();
    expect(errors).toEqual([new Error('database down')]);
    await job.stop();
    expect(job.stopping).toBe(true);
    jest.advanceTimersByTime(3000);
    expect(tick).toHaveBeenCalledTimes(4);
  });

  it('runs one piece of work at a time: a call during a run gets that run, the next call a new one', async () => {
    const job = new PeriodicJob<number>(1000, () => undefined);
    let finish!: (value: number) => void;
    const work = jest.fn(() => new Promise<number>((resolve) => (finish = resolve)));
    const first = job.once(work);
    const second = job.once(work);
    expect(work).toHaveBeenCalledTimes(1);
    finish(7);
    expect(await Promise.all([first, second])).toEqual([7, 7]);
    const third = job.once(work);
    expect(work).toHaveBeenCalledTimes(2);
    finish(8);
    expect(await third).toBe(8);
  });

  it('stop waits for the run under way, even a failing one', async () => {
    const job = new PeriodicJob<number>(1000, () => undefined);
    let fail!: (error: Error) => void;
    const run = job.once(() => new Promise<number>((_, reject) => (fail = reject)));
    run.catch(() => undefined);
    let stopped = false;
    const stopping = job.stop().then(() => (stopped = true));
    await Promise.resolve();
    expect(stopped).toBe(false);
    fail(new Error('gone'));
    await stopping;
    expect(stopped).toBe(true);
  });
});
