import { loadConfig } from '../config/config.js';
import { MAX_MEMORY_WINDOWS, RateLimitStore } from './rate-limit.store.js';

describe('RateLimitStore in memory', () => {
  let store: RateLimitStore;
  beforeEach(() => {
    store = new RateLimitStore(loadConfig({ LOG_LEVEL: 'silent' }));
  });
  afterEach(() => store.onModuleDestroy());

  it('counts hits per key within a window, and starts a new window when it has passed', async () => {
    expect((await store.increment('a', 60_000)).totalHits).toBe(1);
    expect((await store.increment('a', 60_000)).totalHits).toBe(2);
    expect((await store.increment('b', 60_000)).totalHits).toBe(1);
    expect((await store.increment('c', 1)).totalHits).toBe(1);
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect((await store.increment('c', 1)).totalHits).toBe(1);
  });

  it('keeps at most MAX_MEMORY_WINDOWS counters, the oldest going first, however many distinct keys come', async () => {
    const windows = (store as unknown as { windows: Map<string, unknown> }).windows;
    await store.increment('first', 600_000);
    await store.increment('first', 600_000);
    for (let i = 0; i < MAX_MEMORY_WINDOWS + 5_000; i++) await store.increment(`key-${i}`, 600_000);
    expect(windows.size).toBeLessThanOrEqual(MAX_MEMORY_WINDOWS);
    expect(windows.has('first')).toBe(false);
    expect(windows.has(`key-${MAX_MEMORY_WINDOWS + 4_999}`)).toBe(true);
    expect((await store.increment(`key-${MAX_MEMORY_WINDOWS + 4_999}`, 600_000)).totalHits).toBe(2);
  });
});
