import { within } from './within.js';

describe('within', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('answers with the work when it settles in time, and leaves no timer behind', async () => {
    await expect(within(Promise.resolve(7), 1000, 'read')).resolves.toBe(7);
    await expect(within(Promise.reject(new Error('refused')), 1000, 'read')).rejects.toThrow('refused');
    expect(jest.getTimerCount()).toBe(0);
  });

  it('rejects, naming what timed out, when the work has not settled by then; a later failure of the work is ignored', async () => {
    let fail!: (error: Error) => void;
    const answer = within(new Promise((_, reject) => (fail = reject)), 1000, 'backlog read');
    jest.advanceTimersByTime(999);
    const settled = jest.fn();
    answer.then(settled, settled);
    await Promise.resolve();
    expect(settled).not.toHaveBeenCalled();
    jest.advanceTimersByTime(1);
    await expect(answer).rejects.toThrow('backlog read timed out');
    fail(new Error('too late'));
    expect(jest.getTimerCount()).toBe(0);
  });
});
