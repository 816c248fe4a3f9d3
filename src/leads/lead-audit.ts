import { Logger } from '@nestjs/common';
import type { LeadFilter } from './lead-reader.service.js';

const logger = new Logger('LeadAudit');

/** One read of stored leads, by any surface (REST list and get, export, GraphQL, MCP). */
export interface LeadRead {
  /** What was read through, e.g. `GET /api/v1/leads`, `GET /api/v1/leads/{id}`, `GET /api/v1/leads/export`. */
  route: string;
  /** The operator client whose token was used, or `person:<user id>` for a person of the inbox (actorOf); else null. */
  clientId: string | null;
  requestId: string;
  filter?: LeadFilter;
  /** How many leads the caller was given. */
  rows: number;
  /** The lead asked for by id, when one was found. */
  leadId?: string;
  /** Anything else the surface wants on record, never personal data (e.g. an export's format). */
  extra?: Record<string, string | number | boolean | null>;
}

/** A person's screening decision on a lead. */
export interface LeadScreeningDecision {
  clientId: string;
  requestId: string;
  leadId: string;
  from: string;
  to: string;
  /** Whether this decision wrote the lead's `lead.received` (its first acceptance). */
  announced: boolean;
}

/** The audit line of a screening decision, at info: who, which lead, the verdict before and after. No personal data. */
export function auditScreening(decision: LeadScreeningDecision): void {
  logger.log(
    {
      audit: 'lead_screening',
      route: 'POST /api/v1/leads/{id}/screening',
      client_id: decision.clientId,
      request_id: decision.requestId,
      lead_id: decision.leadId,
      verdict_before: decision.from,
      verdict: decision.to,
      announced: decision.announced,
    },
    'lead screening decided',
  );
}

/**
 * The audit line of a read of stored leads, at info: who, through what, which filters and how many rows. It carries no
 * personal data: of the e-mail filter and the search only whether there was one (origem is a campaign label, dates are
 * not personal).
 */
export function auditRead(read: LeadRead): void {
  const filter = read.filter ?? {};
  logger.log(
    {
      ...read.extra,
      audit: 'lead_read',
      route: read.route,
      client_id: read.clientId,
      request_id: read.requestId,
      filters: {
        since: filter.since?.toISOString() ?? null,
        until: filter.until?.toISOString() ?? null,
        origem: filter.origem ?? null,
        email_filter: filter.email !== undefined,
        // Which verdicts a list read: held and spam leads are read only when asked for; a search's words are personal data.
        ...(read.filter ? { screening: filter.screening ?? 'all', channel: filter.channel ?? null, search: filter.q !== undefined } : {}),
      },
      rows: read.rows,
      ...(read.leadId === undefined ? {} : { lead_id: read.leadId }),
    },
    'leads read',
  );
}
