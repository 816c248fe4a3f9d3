import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { startServer, type ServerProcess } from '../../support/server-process.js';
import { sleep } from './load.js';

const PROBE_SCRIPT = resolve('test/reliability/support/loop-probe.cjs');

/** A tick of the probe's 5 ms timer that came `ms` late, ending at `at` (epoch milliseconds). */
export interface Hold {
  at: number;
  ms: number;
}

/** perf_hooks' event-loop delay histogram (1 ms resolution) between two dumps, in milliseconds. */
export interface LoopDelay {
  count: number;
  p50: number;
  p99: number;
  max: number;
}

/** Epoch milliseconds with sub-millisecond precision, comparable with the probe's clock (same machine). */
export const epochMs = () => performance.timeOrigin + performance.now();

/**
 * The built service with test/reliability/support/loop-probe.cjs loaded through NODE_OPTIONS, so that its event-loop
 * delay is measured inside it; nothing in the service knows. Each start writes to files of its own.
 */
export class ProbedService {
  private readonly dir = mkdtempSync(join(tmpdir(), 'leads-loop-probe-'));
  private starts = 0;
  private dumps = 0;
  server!: ServerProcess;

  constructor(private readonly env: Record<string, string>) {}

  get baseUrl(): string {
    return this.server.baseUrl;
  }

  get pid(): number {
    return this.server.child.pid!;
  }

  private get file(): string {
    return join(this.dir, `probe-${this.starts}.json`);
  }

  async start(): Promise<this> {
    this.starts++;
    this.dumps = 0;
    this.server = await startServer({ ...this.env, NODE_OPTIONS: `--require ${PROBE_SCRIPT}`, LOOP_PROBE_FILE: this.file });
    return this;
  }

  /** A stuck service answers nothing, not even a signal: killed and started afresh (on another port). */
  async restart(): Promise<this> {
    await this.server.stop('SIGKILL');
    return this.start();
  }

  /** The delay histogram since the previous dump (or the start), then reset; undefined if the loop does not get to it in time. */
  async dump(timeoutMs = 5_000): Promise<LoopDelay | undefined> {
    const expected = ++this.dumps;
    this.server.child.kill('SIGWINCH');
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if (existsSync(this.file)) {
        const report = JSON.parse(readFileSync(this.file, 'utf8')) as LoopDelay & { dump: number };
        if (report.dump === expected) return { count: report.count, p50: report.p50, p99: report.p99, max: report.max };
      }
      await sleep(10);
    }
    return undefined;
  }

  /** Every hold the probe saw, over every start. */
  holds(): Hold[] {
    const all: Hold[] = [];
    for (let start = 1; start <= this.starts; start++) {
      const file = join(this.dir, `probe-${start}.json.holds`);
      if (!existsSync(file)) continue;
      for (const line of readFileSync(file, 'utf8').split('\n')) if (line) all.push(JSON.parse(line) as Hold);
    }
    return all;
  }

  /**
   * The service's own resident memory in MB: RssAnon of /proc/<pid>/status (heap, buffers). Not VmRSS, which also counts
   * the pages of SQLite's memory-mapped database file (mmap_size) that a read touched: page cache, shared and dropped
   * under pressure (a CI run saw +70 MB of VmRSS reading 10,000 leads on SQLite, +19 MB on PostgreSQL).
   */
  rssMb(): number {
    const match = /^RssAnon:\s+(\d+) kB/m.exec(readFileSync(`/proc/${this.pid}/status`, 'utf8'));
    return Number(match?.[1] ?? NaN) / 1024;
  }

  async stop(): Promise<void> {
    await this.server?.stop('SIGKILL');
    rmSync(this.dir, { recursive: true, force: true });
  }
}
