import { LEAD_CHANNELS } from '../leads/lead-channel.js';
import { SCREENING_VERDICTS } from '../screening/screening.js';
import { LEAD_CHANNEL_LABELS, methodLabel, Metrics, VERDICT_LABELS } from './metrics.js';

describe('Metrics', () => {
  it('knows every lead channel and verdict (telemetry is below the features, so it keeps its own lists)', () => {
    expect([...LEAD_CHANNEL_LABELS]).toEqual([...LEAD_CHANNELS]);
    expect([...VERDICT_LABELS]).toEqual([...SCREENING_VERDICTS]);
  });

  it('starts every lead counter at 0, so that rate() sees the first lead of each kind', async () => {
    const text = await new Metrics(false).exposition();
    expect(text.match(/^leads_received_total\{/gm)).toHaveLength(LEAD_CHANNELS.length * SCREENING_VERDICTS.length);
    expect(text).toContain('leads_received_total{lead_channel="form",verdict="held"} 0');
  });

  it("collects Node's own only when asked, without the gauges named like counters", async () => {
    expect(await new Metrics(false).exposition()).not.toContain('nodejs_');
    const text = await new Metrics(true).exposition();
    expect(text).toContain('nodejs_eventloop_lag_p99_seconds');
    expect(text).not.toMatch(/^nodejs_active_\w+_total/m);
  });

  it('gives a made-up method one label value', () => {
    expect([methodLabel('GET'), methodLabel('PROPFIND'), methodLabel(undefined)]).toEqual(['GET', '_OTHER', '_OTHER']);
  });

  it('drops what a failed database read would leave stale, and says so once a minute at most', async () => {
    const metrics = new Metrics(false);
    metrics.outboxPending.set({ channel: 'webhook' }, 4);
    metrics.onScrape(
      'outbox_pending',
      () => Promise.reject(new Error('database down')),
      () => metrics.outboxPending.reset(),
    );
    expect(await metrics.exposition()).not.toMatch(/^outbox_pending\{/m);
  });

  it('answers a scrape even when a read hangs', async () => {
    const metrics = new Metrics(false);
    metrics.onScrape(
      'hangs',
      () => new Promise(() => undefined),
      () => undefined,
    );
    await expect(metrics.exposition(50)).resolves.toContain('leads_received_total');
  });
});
