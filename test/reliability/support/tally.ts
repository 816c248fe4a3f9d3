import type { Reply } from './http-client.js';

/** Answers counted by status (failures without an answer by their error code), with every latency. */
export class Tally {
  private readonly counts = new Map<string, number>();
  private readonly samples = new Map<string, string>();
  private readonly latencies: number[] = [];

  record(reply: Reply): void {
    const label = reply.error ?? String(reply.status);
    this.counts.set(label, (this.counts.get(label) ?? 0) + 1);
    if (!this.samples.has(label)) this.samples.set(label, reply.body.slice(0, 300));
    this.latencies.push(reply.ms);
  }

  get total(): number {
    return this.latencies.length;
  }

  count(label: number | string): number {
    return this.counts.get(String(label)) ?? 0;
  }

  /** Everything but `allowed`, with one body of each for the failure message: `{}` when all is well. */
  others(allowed: (number | string)[]): Record<string, string> {
    const known = new Set(allowed.map(String));
    const result: Record<string, string> = {};
    for (const [label, count] of this.counts) if (!known.has(label)) result[label] = `${count}× e.g. ${this.samples.get(label) || '(no body)'}`;
    return result;
  }

  /** Answers with a 5xx status. */
  get serverErrors(): number {
    return [...this.counts].reduce((sum, [label, count]) => sum + (/^5\d\d$/.test(label) ? count : 0), 0);
  }

  get maxMs(): number {
    return this.latencies.reduce((max, ms) => Math.max(max, ms), 0);
  }

  percentileMs(p: number): number {
    if (!this.latencies.length) return 0;
    const sorted = [...this.latencies].sort((a, b) => a - b);
    return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
  }

  /** e.g. "5400 requests (360 req/s): 201×5000, 429×400; latency p50 12 ms, p99 80 ms, max 210 ms". */
  summary(durationMs?: number): string {
    const rate = durationMs ? ` (${Math.round(this.total / (durationMs / 1000))} req/s)` : '';
    const counts = [...this.counts].sort(([a], [b]) => a.localeCompare(b)).map(([label, count]) => `${label}×${count}`);
    const ms = (value: number) => `${Math.round(value)} ms`;
    return `${this.total} requests${rate}: ${counts.join(', ') || 'none'}; latency p50 ${ms(this.percentileMs(50))}, p99 ${ms(this.percentileMs(99))}, max ${ms(this.maxMs)}`;
  }
}
