import { performance } from 'node:perf_hooks';
import { pipeline, Readable } from 'node:stream';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { Inject, Injectable, Logger } from '@nestjs/common';
import type { Request, Response } from 'express';
import { actorOf } from '../auth/actor.js';
import { AppConfig } from '../config/config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { Metrics } from '../telemetry/metrics.js';
import { safeError } from '../logging/safe-error.js';
import { AppError } from '../problem/app-error.js';
import { requestIdOf } from '../request/request-id.js';
import { auditRead } from './lead-audit.js';
import { ExportWriter } from './lead-export.format.js';
import { ExportRequest, exportRequestOf, LeadExportQuery } from './lead-export.query.js';
import { LeadExportReader, LeadRecord } from './lead-export.reader.js';

/** Seconds a refused export should wait: about what an export of a million leads takes. */
export const EXPORT_BUSY_RETRY_AFTER_SECONDS = 10;

/**
 * Between pages the export gives the event loop back for a turn, and for more while a turn comes back later than
 * BUSY_TURN_MS (other requests ran in it), up to MAX_YIELDS turns: a request that needs several turns (read, store,
 * answer) then waits for about one page rather than one page per turn. An idle turn takes some microseconds.
 */
const BUSY_TURN_MS = 0.25;
const MAX_YIELDS = 4;

/** How an export ended, for its audit line. */
export type ExportOutcome = 'completed' | 'client_gone' | 'failed';

/**
 * Streams every lead that matches the filters as CSV or JSON Lines, in keyset pages of EXPORT_PAGE_SIZE: one short
 * query a page (no transaction, cursor or connection held between pages), the next page read only once the client has
 * taken the last one (back-pressure through stream.pipeline), and a turn of the event loop between pages, so that
 * lead intake keeps its latency. At most EXPORT_MAX_CONCURRENT exports run at once on an instance
 * (docs/decisions/0024-streamed-export.md).
 */
@Injectable()
export class LeadExportService {
  private readonly logger = new Logger('LeadExport');
  private readonly pageSize: number;
  private readonly maxConcurrent: number;
  private readonly timeZone: string;
  private running = 0;

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    private readonly reader: LeadExportReader,
    metrics: Metrics,
  ) {
    this.pageSize = config.exportPageSize;
    this.maxConcurrent = config.exportMaxConcurrent;
    this.timeZone = config.timeZone;
    metrics.onScrape(
      'exports_running',
      async () => void metrics.exportsRunning.set(this.running),
      () => undefined,
    );
  }

  /**
   * Answers the export on `res`. Until the first page is read, a failure (bad query, busy, database down) is thrown
   * and becomes a problem; after the headers are sent, one destroys the connection, so that a client never takes a
   * truncated file for a whole one. `route` names the door in the audit line (the API's, or the inbox's).
   */
  async export(query: LeadExportQuery, req: Request, res: Response, route = 'GET /api/v1/leads/export'): Promise<void> {
    const request = exportRequestOf(query, this.timeZone);
    // HEAD gets GET's headers without an export that nobody would receive.
    if (req.method === 'HEAD') {
      this.writeHead(res, request.writer, Date.now());
      res.end();
      return;
    }
    if (this.running >= this.maxConcurrent) {
      throw new AppError('export_busy', `This instance is streaming as many exports as it runs at once (${this.maxConcurrent}); retry later.`, {
        headers: { 'Retry-After': String(EXPORT_BUSY_RETRY_AFTER_SECONDS) },
      });
    }
    this.running++;
    const started = Date.now();
    const progress = { rows: 0 };
    let first: LeadRecord[];
    try {
      first = await this.reader.page(request.filter, this.pageSize);
    } catch (error) {
      this.running--;
      throw error;
    }
    this.writeHead(res, request.writer, started);
    const body = Readable.from(this.chunks(request, first, progress), { objectMode: false });
    pipeline(body, res, (error) => {
      this.running--;
      const outcome: ExportOutcome = !error ? 'completed' : (error as NodeJS.ErrnoException).code === 'ERR_STREAM_PREMATURE_CLOSE' ? 'client_gone' : 'failed';
      if (outcome === 'failed') this.logger.error({ error: safeError(error) }, 'export failed after its headers were sent; connection closed');
      auditRead({
        route,
        clientId: actorOf(req),
        requestId: requestIdOf(req),
        filter: request.filter,
        rows: progress.rows,
        extra: { format: request.writer.format, delimiter: request.delimiter ?? null, outcome, duration_ms: Date.now() - started },
      });
    });
  }

  /** 200, the media type, a download named after the day (UTC), and no caching: the file is personal data. */
  private writeHead(res: Response, writer: ExportWriter, started: number): void {
    res.status(200);
    res.setHeader('Content-Type', writer.mediaType);
    res.setHeader('Content-Disposition', `attachment; filename="leads-${new Date(started).toISOString().slice(0, 10)}.${writer.extension}"`);
    res.setHeader('Cache-Control', 'no-store');
  }

  /** The file as chunks: the head, then one chunk per page, each page read after the previous one was taken. */
  private async *chunks({ filter, writer }: ExportRequest, first: LeadRecord[], progress: { rows: number }): AsyncGenerator<string> {
    const head = writer.head();
    if (head) yield head;
    let page = first;
    for (;;) {
      if (page.length) yield this.format(writer, page, progress);
      if (page.length < this.pageSize) return;
      // Let waiting requests run between pages, whatever the client's speed.
      await yieldToOthers();
      page = await this.reader.page(filter, this.pageSize, LeadExportReader.positionOf(page[page.length - 1]));
    }
  }

  private format(writer: ExportWriter, page: LeadRecord[], progress: { rows: number }): string {
    progress.rows += page.length;
    return writer.rows(page);
  }
}

async function yieldToOthers(): Promise<void> {
  for (let turn = 0; turn < MAX_YIELDS; turn++) {
    const start = performance.now();
    await nextTurn();
    if (performance.now() - start < BUSY_TURN_MS) return;
  }
}
