import { Inject, Injectable } from '@nestjs/common';
import type { Request, Response } from 'express';
import { callerOf } from '../auth/caller.decorator.js';
import { AppConfig } from '../config/config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { AppError, invalidQuery } from '../problem/app-error.js';
import { requestIdOf } from '../request/request-id.js';
import { auditRead } from './lead-audit.js';
import { leadFilterOf, LeadListQuery } from './lead-list-query.dto.js';
import { InvalidCursor, LeadFilter, LeadPage, LeadReader, LeadView } from './lead-reader.service.js';

export const DEFAULT_PAGE_SIZE = 50;

export interface LeadList {
  data: LeadView[];
  next_cursor: string | null;
  held_count: number;
}

/**
 * GET /api/v1/leads and /api/v1/leads/{id} over LeadReader: the query as a filter, the page as its body and a Link to
 * the next one (RFC 8288), an audit line per read. Answers are personal data: no cache may keep them.
 */
@Injectable()
export class LeadsReadService {
  private readonly listUrl: string;
  private readonly timeZone: string;

  constructor(
    private readonly reader: LeadReader,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.listUrl = `${config.publicBaseUrl}/api/v1/leads`;
    this.timeZone = config.timeZone;
  }

  async list(query: LeadListQuery, req: Request, res: Response): Promise<LeadList> {
    const filter = leadFilterOf(query, this.timeZone);
    const limit = query.limit ?? DEFAULT_PAGE_SIZE;
    const page = await this.page(filter, limit, query.cursor);
    res.setHeader('Cache-Control', 'no-store');
    if (page.nextCursor !== null) res.append('Link', `<${this.nextUrl(filter, limit, page.nextCursor)}>; rel="next"`);
    auditRead({ route: 'GET /api/v1/leads', clientId: callerOf(req).clientId, requestId: requestIdOf(req), filter, rows: page.data.length });
    return { data: page.data, next_cursor: page.nextCursor, held_count: page.heldCount };
  }

  async get(id: string, req: Request, res: Response): Promise<LeadView> {
    const lead = await this.reader.get(id);
    const read = { route: 'GET /api/v1/leads/{id}', clientId: callerOf(req).clientId, requestId: requestIdOf(req) };
    auditRead(lead ? { ...read, rows: 1, leadId: lead.id } : { ...read, rows: 0 });
    if (!lead) throw new AppError('lead_not_found', 'No stored lead has this id.');
    res.setHeader('Cache-Control', 'no-store');
    return lead;
  }

  private async page(filter: LeadFilter, limit: number, cursor: string | undefined): Promise<LeadPage> {
    try {
      return await this.reader.list(filter, limit, cursor);
    } catch (error) {
      if (!(error instanceof InvalidCursor)) throw error;
      throw invalidQuery([
        {
          parameter: 'cursor',
          code: 'invalid_cursor',
          detail:
            'The cursor was altered, or was given by a page with other filters; pass the next_cursor of a page with the same filters, or start again without one.',
        },
      ]);
    }
  }

  /** The same filters and limit, and the cursor; dates as the instants they were read as. */
  private nextUrl(filter: LeadFilter, limit: number, cursor: string): string {
    const query = new URLSearchParams();
    if (filter.since) query.set('since', filter.since.toISOString());
    if (filter.until) query.set('until', filter.until.toISOString());
    if (filter.origem !== undefined) query.set('origem', filter.origem);
    if (filter.email !== undefined) query.set('email', filter.email);
    // The default (accepted) is left out, as a client would write it.
    if (filter.screening !== 'accepted') query.set('screening', filter.screening ?? 'all');
    if (filter.channel !== undefined) query.set('channel', filter.channel);
    if (filter.q !== undefined) query.set('q', filter.q);
    query.set('limit', String(limit));
    query.set('cursor', cursor);
    return `${this.listUrl}?${query}`;
  }
}
