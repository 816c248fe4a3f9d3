import { Inject, Injectable } from '@nestjs/common';
import type { Request, Response } from 'express';
import { AppConfig } from '../config/config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { LEAD_CHANNELS } from '../leads/lead-channel.js';
import type { LeadView } from '../leads/lead-reader.service.js';
import type { Decision } from '../leads/lead-screening.service.js';
import { AppError } from '../problem/app-error.js';
import { InboxPages } from './inbox-pages.service.js';
import { abilitiesOf, LeadListPage, LeadPages } from './lead-pages.service.js';
import { LeadsFormat } from './lead-views.js';
import { LEADS_MESSAGES } from './messages/leads.js';
import { REQUESTS_MESSAGES } from './messages/requests.js';
import { QUEUE_STATUSES } from '../data-subject/data-subject-requests.store.js';
import { DataSubjectService } from '../data-subject/data-subject.service.js';

/** The badge of each verdict and delivery state (inbox.css). */
const VERDICT_BADGE = { accepted: 'ok', held: 'held', spam: 'spam' };
const STATE_BADGE = { delivered: 'ok', pending: 'held', failed: 'spam', skipped: 'held' };

/** Notices a redirect after an action carries (a count each), shown once by the page it lands on. */
const NOTICES = { erased: 'leads.erased', released: 'held.released', spammed: 'held.marked_spam', missing: 'held.missing' } as const;

/**
 * The lead pages as HTML: LeadPages' data in the views (src/inbox/views/lead*.eta, leads*.eta, held.eta) through the
 * shell's InboxPages, with the words of messages/leads.ts.
 */
@Injectable()
export class LeadPagesView {
  private readonly timeZone: string;

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    private readonly data: LeadPages,
    private readonly pages: InboxPages,
    private readonly dataSubject: DataSubjectService,
  ) {
    this.timeZone = config.timeZone;
  }

  async leads(query: Record<string, unknown>, req: Request, res: Response): Promise<void> {
    const { filters, notice } = this.split(query, req);
    const list = await this.data.list(filters, req);
    const data = { ...this.common(req, list), notice, filtered: ['since', 'until', 'origem', 'channel', 'screening'].some((name) => list.params[name]) };
    const status = list.errors.length ? 400 : 200;
    // htmx swaps only 2xx answers: the fragment with its errors is still the answer to show.
    if (this.pages.isHtmx(req)) return this.pages.fragment(req, res, 'leads-results', data, { messages: LEADS_MESSAGES, area: 'leads' });
    this.pages.render(req, res, 'leads', data, { title: 'leads.title', messages: LEADS_MESSAGES, area: 'leads', status });
  }

  async held(query: Record<string, unknown>, req: Request, res: Response, formError?: string): Promise<void> {
    const { filters, notice } = this.split(query, req);
    const list = await this.data.queue(filters, req);
    const queue = list.params.screening === 'spam' ? 'spam' : 'held';
    const status = formError ? 422 : list.errors.length ? 400 : 200;
    this.pages.render(
      req,
      res,
      'held',
      { ...this.common(req, list), queue, notice, formError },
      { title: 'held.title', messages: LEADS_MESSAGES, area: 'held', status },
    );
  }

  async decideMany(verdict: Decision, form: URLSearchParams, req: Request, res: Response): Promise<void> {
    const queue = form.get('queue') === 'spam' ? 'spam' : 'held';
    const ids = form.getAll('id');
    if (ids.length === 0) {
      const t = this.pages.translate(req, LEADS_MESSAGES);
      return this.held({ screening: queue }, req, res, t('held.choose'));
    }
    const { decided, missing } = await this.data.decideMany(ids, verdict, req);
    const query = new URLSearchParams();
    if (queue === 'spam') query.set('screening', 'spam');
    query.set(verdict === 'accepted' ? 'released' : 'spammed', String(decided));
    if (missing) query.set('missing', String(missing));
    this.pages.redirect(res, `/inbox/held?${query}`);
  }

  async export(query: Record<string, unknown>, req: Request, res: Response): Promise<void> {
    await this.data.export(query, req, res);
  }

  async lead(id: string, query: Record<string, unknown>, req: Request, res: Response, extra: object = {}, status = 200): Promise<void> {
    const detail = await this.data.lead(id, req);
    if (!detail) throw notFound();
    const t = this.pages.translate(req, LEADS_MESSAGES);
    const done = query.done === 'released' ? t('screening.released') : query.done === 'spam' ? t('screening.marked_spam') : undefined;
    this.pages.render(
      req,
      res,
      'lead',
      { ...this.base(req), ...detail, screeningNotice: done, ...extra },
      { title: 'lead.title', messages: LEADS_MESSAGES, area: 'leads', status },
    );
  }

  /** Release or spam: to htmx the screening section anew, to a form post a 303 back to the lead. */
  async decide(id: string, verdict: Decision, req: Request, res: Response): Promise<void> {
    let lead: LeadView;
    try {
      lead = await this.data.decide(id, verdict, req);
    } catch (error) {
      throw error instanceof AppError && error.code === 'lead_not_found' ? notFound() : error;
    }
    if (!this.pages.isHtmx(req)) return this.pages.redirect(res, `/inbox/leads/${lead.id}?done=${verdict === 'accepted' ? 'released' : 'spam'}`);
    const t = this.pages.translate(req, LEADS_MESSAGES);
    const screeningNotice = t(verdict === 'accepted' ? 'screening.released' : 'screening.marked_spam');
    this.pages.fragment(req, res, 'lead-screening', { ...this.base(req), lead, screeningNotice }, { messages: LEADS_MESSAGES, area: 'leads' });
  }

  /** The person's data: a page of it, or (format=json) the data-subject access answer as a download. */
  async access(id: string, form: URLSearchParams, req: Request, res: Response): Promise<void> {
    const lead = await this.data.find(id);
    if (!lead) throw notFound();
    const cursor = form.get('cursor') ?? undefined;
    const access = await this.data.access(lead, cursor, req);
    if (form.get('format') === 'json') return this.data.downloadAccess(access, res);
    this.pages.render(req, res, 'lead-access', { ...this.base(req), lead, access, cursor }, { title: 'access.title', messages: LEADS_MESSAGES, area: 'leads' });
  }

  /** Erasure after the typed confirmation; a wrong one gives the lead's page again (422), and nothing is erased. */
  async erase(id: string, form: URLSearchParams, req: Request, res: Response): Promise<void> {
    const lead = await this.data.find(id);
    if (!lead) throw notFound();
    let erased: number;
    try {
      erased = (await this.data.erase(lead, form.get('confirmation'), req)).counts.leads;
    } catch (error) {
      if (!(error instanceof AppError && error.code === 'validation_failed')) throw error;
      return this.lead(id, {}, req, res, { eraseRefused: true }, 422);
    }
    this.pages.redirect(res, `/inbox/leads?erased=${erased}`);
  }

  /** The filters apart from the one-time notices a redirect adds. */
  /** The queue of data-subject requests (GET /api/v1/data-subject-requests's): one status or the default, keyset pages. */
  async requests(query: Record<string, unknown>, req: Request, res: Response): Promise<void> {
    const status = QUEUE_STATUSES.find((known) => known === query.status);
    const cursor = typeof query.cursor === 'string' ? query.cursor : undefined;
    let page;
    let invalid = false;
    try {
      page = await this.dataSubject.queue({ status, cursor });
    } catch (error) {
      if (!(error instanceof AppError) || error.code !== 'invalid_query') throw error;
      [page, invalid] = [await this.dataSubject.queue({ status }), true];
    }
    const next = new URLSearchParams({ ...(status ? { status } : {}), ...(page.next_cursor ? { cursor: page.next_cursor } : {}) }).toString();
    const data = { ...this.base(req), queue: page, status, statuses: QUEUE_STATUSES, next, invalid };
    this.pages.render(req, res, 'requests', data, { title: 'requests.title', messages: REQUESTS_MESSAGES, area: 'requests' });
  }

  private split(query: Record<string, unknown>, req: Request): { filters: Record<string, unknown>; notice?: string } {
    const t = this.pages.translate(req, LEADS_MESSAGES);
    const filters: Record<string, unknown> = {};
    const notices: string[] = [];
    for (const [name, value] of Object.entries(query)) {
      if (!(name in NOTICES)) filters[name] = value;
      else if (typeof value === 'string' && /^\d{1,6}$/.test(value)) notices.push(t(NOTICES[name as keyof typeof NOTICES], { count: value }));
    }
    return { filters, notice: notices.length ? notices.join(' ') : undefined };
  }

  private base(req: Request) {
    const t = this.pages.translate(req, LEADS_MESSAGES);
    return { f: new LeadsFormat(t, this.pages.language(req), this.timeZone), may: abilitiesOf(req), badge: VERDICT_BADGE, stateBadge: STATE_BADGE };
  }

  private common(req: Request, list: LeadListPage) {
    const { cursor: _cursor, ...filters } = list.params;
    const { screening: _screening, ...queueFilters } = filters;
    return { ...this.base(req), list, filters, queueFilters, channels: LEAD_CHANNELS };
  }
}

function notFound(): AppError {
  return new AppError('lead_not_found', 'No stored lead has this id.');
}
