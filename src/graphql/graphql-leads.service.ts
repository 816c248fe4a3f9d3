import { Inject, Injectable } from '@nestjs/common';
import type { Request } from 'express';
import { GraphQLError } from 'graphql';
import { callerOf } from '../auth/caller.decorator.js';
import { AppConfig } from '../config/config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { principalOf } from '../auth/principal.js';
import { auditRead } from '../leads/lead-audit.js';
import { leadReadInput, queryErrorsOf, readLeadPage } from '../leads/lead-read-input.js';
import { LeadReader, LeadView } from '../leads/lead-reader.service.js';
import { requestIdOf } from '../request/request-id.js';

/** The scope GraphQL's `leads` and `lead` need. */
const READ_SCOPE = 'leads:read';

export interface LeadsArgs {
  first?: number | null;
  after?: string | null;
  filter?: {
    since?: unknown;
    until?: unknown;
    origem?: string | null;
    email?: string | null;
    screening?: string | null;
    channel?: string | null;
    q?: string | null;
  } | null;
}

export interface LeadConnection {
  edges: { cursor: string; node: LeadView }[];
  pageInfo: { hasNextPage: boolean; hasPreviousPage: false; startCursor: string | null; endCursor: string | null };
  held_count: number;
}

/** GET /api/v1/leads's parameters by the GraphQL argument that carries each. */
const ARGUMENTS: Record<string, string> = {
  limit: 'first',
  cursor: 'after',
  since: 'filter.since',
  until: 'filter.until',
  origem: 'filter.origem',
  email: 'filter.email',
  screening: 'filter.screening',
  channel: 'filter.channel',
  q: 'filter.q',
};

/**
 * GraphQL's `leads` and `lead` over the one LeadReader, with the REST read's rules, errors and audit line
 * (docs/decisions/0026-operator-reads-over-graphql-and-mcp.md).
 */
@Injectable()
export class GraphqlLeadsService {
  constructor(
    private readonly reader: LeadReader,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async connection(args: LeadsArgs, req: Request): Promise<LeadConnection> {
    authorise(req, 'leads');
    const { filter } = args;
    let input;
    try {
      input = await leadReadInput(
        defined({
          limit: args.first,
          cursor: args.after,
          since: filter?.since,
          until: filter?.until,
          origem: filter?.origem,
          email: filter?.email,
          screening: filter?.screening,
          channel: filter?.channel,
          q: filter?.q,
        }),
        this.config.timeZone,
      );
    } catch (error) {
      throw badUserInput(error);
    }
    const page = await readLeadPage(this.reader, input).catch((error: unknown) => {
      throw badUserInput(error);
    });
    auditRead({
      route: 'POST /api/v1/graphql leads',
      clientId: callerOf(req).clientId,
      requestId: requestIdOf(req),
      filter: input.filter,
      rows: page.data.length,
    });
    return {
      edges: page.data.map((node, i) => ({ cursor: page.cursorAfter(i), node })),
      pageInfo: {
        hasNextPage: page.nextCursor !== null,
        hasPreviousPage: false,
        startCursor: page.data.length ? page.cursorAfter(0) : null,
        endCursor: page.data.length ? page.cursorAfter(page.data.length - 1) : null,
      },
      held_count: page.heldCount,
    };
  }

  async lead(id: string, req: Request): Promise<LeadView | null> {
    authorise(req, 'lead');
    const lead = await this.reader.get(id);
    const read = { route: 'POST /api/v1/graphql lead', clientId: callerOf(req).clientId, requestId: requestIdOf(req) };
    auditRead(lead ? { ...read, rows: 1, leadId: lead.id } : { ...read, rows: 0 });
    return lead;
  }
}

/** Without leads:read the field is an error and no data; the rest of the query still runs. */
function authorise(req: Request, field: string): void {
  if (principalOf(req).scopes.includes(READ_SCOPE)) return;
  throw new GraphQLError(`${field} needs an access token with the scope ${READ_SCOPE} (an operator client’s).`, {
    extensions: { code: 'FORBIDDEN', scope: READ_SCOPE },
  });
}

/** The REST query's findings, renamed to the arguments they came from; anything else is not the caller's fault. */
function badUserInput(error: unknown): unknown {
  const errors = queryErrorsOf(error).map(({ parameter, code, detail }) => {
    const argument = ARGUMENTS[parameter] ?? parameter;
    return { argument, code, detail: detail.startsWith(`${parameter} `) ? `${argument}${detail.slice(parameter.length)}` : detail };
  });
  if (!errors.length) return error;
  return new GraphQLError(errors.map((e) => e.detail).join(' '), { extensions: { code: 'BAD_USER_INPUT', argument: errors[0].argument, errors } });
}

/** The members that were given: GraphQL's null is "not given", as for a REST parameter left out. */
function defined(values: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(values).filter(([, value]) => value !== undefined && value !== null));
}
