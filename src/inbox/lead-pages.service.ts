import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { Request, Response } from 'express';
import { DataSource, In } from 'typeorm';
import { actingCallerOf, actorOf } from '../auth/actor.js';
import { principalOf } from '../auth/principal.js';
import { createValidationPipe } from '../body/validation.pipe.js';
import { AppConfig } from '../config/config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { AccessPage, DataSubjectService, ErasureReceipt, writeAccessPage } from '../data-subject/data-subject.service.js';
import { ConsentText } from '../leads/consent-text.entity.js';
import { auditRead } from '../leads/lead-audit.js';
import { LeadExportQuery } from '../leads/lead-export.query.js';
import { LeadExportService } from '../leads/lead-export.service.js';
import { LeadFilterQuery, leadFilterOf } from '../leads/lead-list-query.dto.js';
import { InvalidCursor, LeadFilter, LeadReader, LeadView } from '../leads/lead-reader.service.js';
import { foldEmail, normaliseEmail } from '../leads/lead-rules.js';
import { Decision, LeadScreeningService } from '../leads/lead-screening.service.js';
import { NotificationRecipientsStore } from '../notifications/notification-recipients.store.js';
import { LeadDelivery, OutboxStore } from '../outbox/outbox-store.js';
import { AppError, invalidQuery, validationFailed } from '../problem/app-error.js';
import type { FieldErrorCode, QueryError } from '../problem/error-catalog.js';
import { requestIdOf } from '../request/request-id.js';
import { IsOptional, IsString, MaxLength } from 'class-validator';
import { WebhookEndpoint } from '../webhooks/webhook-endpoint.entity.js';

/** Leads a page of the inbox lists. */
export const INBOX_PAGE_SIZE = 50;
/** Counts are exact up to here, then shown as "10.000+" (one short query that stops at the cap). */
export const COUNT_CAP = 10_000;
/** Ids one bulk decision takes at most: a page of the held queue, with room. */
export const BULK_MAX = 200;

/** The filters the leads page and the held queue take, named as the read API names them, and a cursor. */
export class InboxLeadsQuery extends LeadFilterQuery {
  @IsOptional() @IsString() @MaxLength(200) cursor?: string;
}

/** The export's query: the page's filters and the format; CSV is always the pt-BR profile. */
export class InboxExportQuery extends LeadFilterQuery {
  @IsOptional() @IsString() format?: string;
}

/** A list as a page shows it: the filter as typed (for the form and the links), the leads, counts and the next cursor. */
export interface LeadListPage {
  /** The query as given, empty values dropped: what the form shows and the links carry. */
  params: Record<string, string>;
  /** Refused parameters (the page shows them beside the form); the list is then empty. */
  errors: QueryError[];
  leads: LeadView[];
  nextCursor: string | null;
  /** Leads the filter selects, up to COUNT_CAP. */
  count: number;
  /** Held leads under the same filters but the verdict, up to COUNT_CAP. */
  heldCount: number;
  /** Spam leads likewise, for the held queue's other tab (0 on the leads page, which does not show it). */
  spamCount: number;
}

export interface ConsentWording {
  sha256: string;
  text: string | null;
}

/** A delivery of the lead's messages, with the subscriber named only to whoever may manage it. */
export interface DeliveryRow extends LeadDelivery {
  /** The endpoint's URL or the recipient's address, when the person's scopes cover that channel; else null. */
  subscriberLabel: string | null;
}

export interface LeadDetail {
  lead: LeadView;
  wordings: ConsentWording[];
  deliveries: DeliveryRow[];
}

/** What the person may do on these pages: the same scopes the API's routes demand. */
export interface InboxAbilities {
  screen: boolean;
  export: boolean;
  erase: boolean;
  manageWebhooks: boolean;
  manageNotifications: boolean;
}

export function abilitiesOf(req: Request): InboxAbilities {
  const scopes = principalOf(req).scopes;
  return {
    screen: scopes.includes('leads:screen'),
    export: scopes.includes('leads:export'),
    erase: scopes.includes('leads:erase'),
    manageWebhooks: scopes.includes('webhooks:manage'),
    manageNotifications: scopes.includes('notifications:manage'),
  };
}

const pipe = createValidationPipe();

/**
 * What the inbox's lead pages show and do, through the services the API uses (LeadReader, LeadScreeningService,
 * LeadExportService, DataSubjectService, the outbox's log) with their checks, and an audit line per read naming the
 * person by user id (actorOf). Rendering is the controller's.
 */
@Injectable()
export class LeadPages {
  private readonly timeZone: string;

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly reader: LeadReader,
    private readonly screening: LeadScreeningService,
    private readonly exports: LeadExportService,
    private readonly subjects: DataSubjectService,
    private readonly outbox: OutboxStore,
    private readonly recipients: NotificationRecipientsStore,
  ) {
    this.timeZone = config.timeZone;
  }

  /**
   * The leads page (and the held queue): newest first in keyset pages, the exact count up to COUNT_CAP, and the held
   * count (and spam count, for the queue's other tab) under the same filters but the verdict.
   */
  async list(raw: Record<string, unknown>, req: Request, route = 'GET /inbox/leads', withSpam = false): Promise<LeadListPage> {
    let params: Record<string, string> = {};
    let filter: LeadFilter;
    let page;
    try {
      params = given(raw, ['since', 'until', 'origem', 'channel', 'screening', 'q', 'cursor']);
      const query = (await pipe.transform(params, { type: 'query', metatype: InboxLeadsQuery })) as InboxLeadsQuery;
      filter = leadFilterOf(query, this.timeZone);
      page = await this.reader.page(filter, INBOX_PAGE_SIZE, query.cursor);
    } catch (error) {
      return { params, errors: queryErrorsOf(error), leads: [], nextCursor: null, count: 0, heldCount: 0, spamCount: 0 };
    }
    const countOf = (screening: LeadFilter['screening']) =>
      screening === filter.screening ? undefined : this.reader.countUpTo({ ...filter, screening }, COUNT_CAP);
    const [count, held, spam] = await Promise.all([this.reader.countUpTo(filter, COUNT_CAP), countOf('held'), withSpam ? countOf('spam') : 0]);
    auditRead({ route, clientId: actorOf(req), requestId: requestIdOf(req), filter, rows: page.data.length });
    return { params, errors: [], leads: page.data, nextCursor: page.nextCursor, count, heldCount: held ?? count, spamCount: spam ?? count };
  }

  /** The held queue, or the spam queue with screening=spam. */
  queue(raw: Record<string, unknown>, req: Request): Promise<LeadListPage> {
    return this.list({ ...raw, screening: raw.screening === 'spam' ? 'spam' : 'held' }, req, 'GET /inbox/held', true);
  }

  /** One lead with its consent wordings and deliveries, or null (an id that is no lead's, in any form). */
  async lead(id: string, req: Request): Promise<LeadDetail | null> {
    const lead = await this.reader.get(id);
    const read = { route: 'GET /inbox/leads/{id}', clientId: actorOf(req), requestId: requestIdOf(req) };
    auditRead(lead ? { ...read, rows: 1, leadId: lead.id } : { ...read, rows: 0 });
    if (!lead) return null;
    const [wordings, deliveries] = await Promise.all([this.wordings(lead), this.deliveries(lead.id, abilitiesOf(req))]);
    return { lead, wordings, deliveries };
  }

  /** The lead with this id, or null; for actions, which their own services audit. */
  find(id: string): Promise<LeadView | null> {
    return this.reader.get(id);
  }

  /** A person's verdict on one lead: LeadScreeningService.decide, as POST /api/v1/leads/{id}/screening makes it. */
  decide(id: string, verdict: Decision, req: Request): Promise<LeadView> {
    return this.screening.decide(id, { verdict }, req);
  }

  /** The same verdict on each lead named (at most BULK_MAX), one decision each; ids that are no lead's are counted. */
  async decideMany(raw: unknown, verdict: Decision, req: Request): Promise<{ decided: number; missing: number }> {
    const ids = [...new Set((Array.isArray(raw) ? raw : raw === undefined ? [] : [raw]).filter((id): id is string => typeof id === 'string'))];
    if (ids.length === 0) throw invalidForm('id', 'required', 'Choose at least one lead.');
    if (ids.length > BULK_MAX) throw invalidForm('id', 'too_long', `At most ${BULK_MAX} leads at once.`);
    let decided = 0;
    for (const id of ids) {
      try {
        await this.screening.decide(id, { verdict }, req);
        decided++;
      } catch (error) {
        if (!(error instanceof AppError && error.code === 'lead_not_found')) throw error;
      }
    }
    return { decided, missing: ids.length - decided };
  }

  /** The person's data (the data-subject access answer) for this lead's address: a page of it, audited by the service. */
  async access(lead: LeadView, cursor: unknown, req: Request): Promise<AccessPage> {
    return this.subjects.access({ email: lead.email, ...(typeof cursor === 'string' && cursor !== '' ? { cursor } : {}) }, actingCallerOf(req));
  }

  /** The access answer as a JSON download, written as the API writes it (in parts, turns between). */
  async downloadAccess(page: AccessPage, res: Response): Promise<void> {
    res.status(200);
    res.setHeader('Content-Disposition', `attachment; filename="dados-pessoais-${page.completed_at.slice(0, 10)}.json"`);
    res.setHeader('Cache-Control', 'no-store');
    await writeAccessPage(res, page);
  }

  /**
   * The erasure of every lead of this lead's address, when `confirmation` is that address (any letter case, trimmed):
   * a typed confirmation, checked here, not by the browser. Else 422 `erasure_not_confirmed`, and nothing is erased.
   */
  async erase(lead: LeadView, confirmation: unknown, req: Request): Promise<ErasureReceipt> {
    if (!confirms(lead.email, confirmation)) {
      throw invalidForm('confirmation', 'invalid_value', 'Type the e-mail address exactly as shown to confirm the erasure.');
    }
    return this.subjects.erase({ email: lead.email }, actingCallerOf(req));
  }

  /** The export of the page's filters: pt-BR CSV (`;`, its headers and columns) or JSON Lines, streamed by the export service. */
  async export(raw: Record<string, unknown>, req: Request, res: Response): Promise<void> {
    const params = given(raw, ['since', 'until', 'origem', 'channel', 'screening', 'q', 'format']);
    const format = params.format ?? 'csv';
    const { format: _format, ...filters } = params;
    const query = (await pipe.transform(format === 'jsonl' ? { ...filters, format } : { ...filters, format: 'csv', delimiter: ';' }, {
      type: 'query',
      metatype: LeadExportQuery,
    })) as LeadExportQuery;
    if (format !== 'csv' && format !== 'jsonl') throw invalidQuery([{ parameter: 'format', code: 'invalid_format', detail: 'format must be csv or jsonl.' }]);
    await this.exports.export(query, req, res, 'GET /inbox/export');
  }

  private async wordings(lead: LeadView): Promise<ConsentWording[]> {
    const named = [...new Set(lead.legal_bases.map((basis) => basis.consent_text_sha256).filter((sha): sha is string => sha !== null))];
    if (named.length === 0) return [];
    const rows = await this.dataSource.getRepository(ConsentText).findBy({ sha256: In(named) });
    const text = new Map(rows.map((row) => [row.sha256, row.text]));
    return named.map((sha256) => ({ sha256, text: text.get(sha256) ?? null }));
  }

  private async deliveries(leadId: string, may: InboxAbilities): Promise<DeliveryRow[]> {
    const rows = await this.outbox.leadDeliveries(leadId);
    const ids = (channel: string) => [...new Set(rows.filter((row) => row.channel === channel).map((row) => row.subscriberId))];
    const labels = new Map<string, string>();
    const webhooks = ids('webhook');
    if (may.manageWebhooks && webhooks.length) {
      for (const endpoint of await this.dataSource.getRepository(WebhookEndpoint).findBy({ id: In(webhooks) })) labels.set(endpoint.id, endpoint.url);
    }
    const emails = ids('email');
    if (may.manageNotifications && emails.length) {
      for (const recipient of await this.recipients.load(emails)) labels.set(recipient.id, recipient.email);
    }
    return rows.map((row) => ({ ...row, subscriberLabel: labels.get(row.subscriberId) ?? null }));
  }
}

const INVALID_CURSOR: QueryError = {
  parameter: 'cursor',
  code: 'invalid_cursor',
  detail: 'The cursor was altered, or was given by a page with other filters; start again from the first page.',
};

/**
 * The parameters named, trimmed, empty ones dropped (an empty field of the filter form means "any"). A repeated one is
 * refused, as the API refuses it, rather than read as one of its values.
 */
function given(raw: Record<string, unknown>, names: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of names) {
    const value = raw[name];
    if (Array.isArray(value)) throw invalidQuery([{ parameter: name, code: 'repeated_parameter', detail: `${name} was given more than once.` }]);
    if (typeof value === 'string' && value.trim() !== '') out[name] = value.trim();
  }
  return out;
}

/** The refused parameters of a query (a cursor not of these filters among them); anything else is thrown on. */
function queryErrorsOf(error: unknown): QueryError[] {
  if (error instanceof InvalidCursor) return [INVALID_CURSOR];
  if (error instanceof AppError && error.code === 'invalid_query') return (error.options.errors ?? []) as QueryError[];
  throw error;
}

/** A form field refused: 422 validation_failed naming it, as the API names a body member. */
function invalidForm(field: string, code: FieldErrorCode, detail: string): AppError {
  return validationFailed([{ pointer: `/${field}`, code, detail }]);
}

/** Whether the typed text is the address (folded as leads' addresses are compared). */
export function confirms(email: string, typed: unknown): boolean {
  if (typeof typed !== 'string' || typed.trim() === '') return false;
  try {
    return foldEmail(normaliseEmail(typed)) === foldEmail(email);
  } catch {
    return false;
  }
}
