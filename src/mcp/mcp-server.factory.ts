import { Inject, Injectable, Logger } from '@nestjs/common';
import {
  CallToolResult,
  fromJsonSchema,
  JsonSchemaType,
  type jsonSchemaValidator,
  McpServer,
  ProtocolError,
  ProtocolErrorCode,
  ResourceNotFoundError,
  ResourceTemplate,
  ToolAnnotations,
} from '@modelcontextprotocol/server';
import { AppConfig } from '../config/config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { DocsService } from '../docs/docs.service.js';
import { OpenApiService } from '../docs/openapi.service.js';
import { Caller } from '../auth/caller.decorator.js';
import { auditRead } from '../leads/lead-audit.js';
import { leadReadInput, queryErrorsOf, readLeadPage } from '../leads/lead-read-input.js';
import { LeadReader } from '../leads/lead-reader.service.js';
import { LeadValidationService } from '../leads/lead-validation.service.js';
import { LeadsService } from '../leads/leads.service.js';
import type { LeadEvidence } from '../screening/lead-evidence.js';
import { HealthService } from '../meta/health.service.js';
import { Metrics } from '../telemetry/metrics.js';
import { isDatabaseUnavailable } from '../database/database-errors.js';
import { safeError } from '../logging/safe-error.js';
import { AppError } from '../problem/app-error.js';
import { SiteService } from '../site/site.service.js';

export const MCP_SERVER_NAME = 'leads';

const INSTRUCTIONS =
  'Public lead-capture API of a workplace-services company. Use validate_lead before submit_lead, and submit a lead only ' +
  'with the explicit consent of the person it describes. Health, company information and documentation are read-only. ' +
  'A bearer token is optional: an agent’s (see the agents guide) raises rate limits; an operator client’s with the scope ' +
  'leads:read also gets list_leads and get_lead, which read stored leads (personal data).';

/** The scope of the operator tools that read stored leads. */
const READ_SCOPE = 'leads:read';
/** list_leads's arguments: GET /api/v1/leads's parameters. */
const LIST_ARGUMENTS = new Set(['limit', 'cursor', 'since', 'until', 'origem', 'email', 'screening', 'channel', 'q']);

/** A query or path parameter as the contract states it. */
interface ContractParameter {
  name: string;
  description: string;
  schema: Record<string, unknown>;
}

const READ_ONLY: ToolAnnotations = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };
const EMPTY_INPUT = { type: 'object', properties: {}, additionalProperties: false } as JsonSchemaType;

/** Advertises a JSON Schema but lets every argument through to our own validation, so invalid input gets the same field errors as REST. */
const passThrough: jsonSchemaValidator = { getValidator: () => (input: unknown) => ({ valid: true, data: input as never, errorMessage: undefined }) };
const schema = (json: unknown) => fromJsonSchema(json as JsonSchemaType, passThrough);

/** A contract schema with each `#/components/schemas/…` reference replaced by what it names (the contract has no cycles). */
function inlineRefs(json: unknown, schemas: Record<string, unknown>): unknown {
  if (Array.isArray(json)) return json.map((item) => inlineRefs(item, schemas));
  if (typeof json !== 'object' || json === null) return json;
  const ref = (json as { $ref?: unknown }).$ref;
  if (typeof ref === 'string' && ref.startsWith('#/components/schemas/')) return inlineRefs(schemas[ref.slice('#/components/schemas/'.length)], schemas);
  return Object.fromEntries(Object.entries(json).map(([key, value]) => [key, inlineRefs(value, schemas)]));
}

/** A structured result with its JSON text mirror, for clients that only read text. */
function result(structuredContent: Record<string, unknown>, isError = false): CallToolResult {
  return { structuredContent, content: [{ type: 'text', text: JSON.stringify(structuredContent, null, 2) }], isError };
}

/** Bytes a text takes inside a JSON answer (escaped and quoted). */
const jsonBytes = (text: string) => Buffer.byteLength(JSON.stringify(text));

/** Who calls (as the bearer guard found them, with their token's scopes), and the request's id for audit lines. */
export interface McpCall {
  caller: Caller;
  scopes: readonly string[];
  requestId: string;
  /** What the HTTP request tells screening about a submit_lead (its Captcha-Token, its address). */
  evidence: LeadEvidence;
}

/** A tool: what tools/list shows, and what a call runs for its caller. */
interface ToolDefinition {
  name: string;
  config: { title: string; description: string; inputSchema: ReturnType<typeof schema>; annotations: ToolAnnotations };
  run: (args: unknown, call: McpCall) => Promise<CallToolResult>;
  /** The token scope a caller needs for the tool to exist for it at all (operator tools); none: every caller. */
  scope?: string;
}

/**
 * One MCP server per request (stateless), over the same services as REST: the lead tools use the one validation path
 * and LeadsService, so a lead submitted here is stored exactly like one sent to POST /api/v1/lead.
 */
@Injectable()
export class McpServerFactory {
  private readonly logger = new Logger('MCP');
  /** Built once: a request's server only registers them (allocation there is what a loaded server collects). */
  private readonly tools: ReadonlyMap<string, ToolDefinition>;
  /** The tools every caller has, the list an anonymous caller's server gets without filtering. */
  private readonly openTools: readonly ToolDefinition[];
  /**
   * The size of each resource's text in an answer, measured once: resources are static, so one over MAX_ANSWER_BYTES
   * is refused before anything is built. A page of list_leads is measured as it is built; other answers are bounded by
   * the 32 KiB request or a lead's size (the cap is at least 64 KiB).
   */
  private readonly resourceBytes: ReadonlyMap<string, number>;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly openapi: OpenApiService,
    private readonly validation: LeadValidationService,
    private readonly leads: LeadsService,
    private readonly reader: LeadReader,
    private readonly health: HealthService,
    private readonly site: SiteService,
    private readonly docs: DocsService,
    private readonly metrics: Metrics,
  ) {
    this.tools = this.defineTools();
    this.openTools = [...this.tools.values()].filter((tool) => tool.scope === undefined);
    this.resourceBytes = new Map([
      ['leads://openapi', jsonBytes(this.openapi.json)],
      ['leads://site', jsonBytes(JSON.stringify(this.site.getInfo()))],
      ...this.docs.search().map((page) => [`leads://docs/${page.slug}`, jsonBytes(page.markdown)] as const),
    ]);
  }

  /** Refuses an answer that would carry `bytes` over MAX_ANSWER_BYTES, before it is built; `url` serves the same over HTTP. */
  private refuseOverCap(what: string, bytes: number, url: string): string | undefined {
    const cap = this.config.maxAnswerBytes;
    if (bytes <= cap) return undefined;
    return `The answer to ${what} would be about ${bytes} bytes, over this server's limit of ${cap} (MAX_ANSWER_BYTES); read it at ${url} instead.`;
  }

  /** A resource's text, unless its answer would be over the cap (a JSON-RPC error that says where else to read it). */
  private readable(uri: string, url: string, text: string): string {
    const refusal = this.refuseOverCap(`resources/read ${uri}`, this.resourceBytes.get(uri) ?? 0, url);
    if (refusal) throw new ProtocolError(ProtocolErrorCode.InvalidParams, refusal, { uri, maxAnswerBytes: this.config.maxAnswerBytes });
    return text;
  }

  /**
   * A server for one request, holding the tools the caller's token scopes allow (docs/decisions/0026). A tools/call of
   * one of them gets a server with that tool alone, which answers it exactly as the full one would; everything else
   * (initialize, lists, resources, prompts, and a call of a tool this caller does not have, which the full server
   * answers as unknown) gets the full server.
   */
  create(call: McpCall, toolCalled?: string): McpServer {
    const server = new McpServer({ name: MCP_SERVER_NAME, title: 'Leads API', version: this.config.version }, { instructions: INSTRUCTIONS });
    const wanted = toolCalled === undefined ? undefined : this.tools.get(toolCalled);
    const called = wanted && allowedTo(wanted, call.scopes) ? wanted : undefined;
    // An anonymous caller has no scopes: its list is the prebuilt one, no filtering.
    const tools = called ? [called] : call.scopes.length === 0 ? this.openTools : [...this.tools.values()].filter((tool) => allowedTo(tool, call.scopes));
    for (const tool of tools)
      server.registerTool(tool.name, tool.config, (args: unknown) => tool.run(args, call).catch((error) => this.unexpected(error, call)));
    if (!called) this.registerReadables(server);
    return server;
  }

  /**
   * A failure no tool answers itself (a database error, a bug): logged like REST's, and answered with a code only. The SDK
   * would put the error's own message (a driver's text) in the result, and nothing in the log.
   */
  private unexpected(error: unknown, { requestId }: McpCall): CallToolResult {
    if (isDatabaseUnavailable(error))
      return result({ code: 'service_unavailable', detail: 'The database is unavailable; retry shortly.', request_id: requestId }, true);
    this.logger.error({ requestId, error: safeError(error) }, 'unexpected error in an MCP tool');
    return result({ code: 'internal_error', detail: 'An unexpected error occurred.', request_id: requestId }, true);
  }

  private defineTools(): ReadonlyMap<string, ToolDefinition> {
    // The tool input schema is the contract's own LeadInput, not a copy, with its references written in: a tool's schema
    // stands alone, and a client has no `#/components` to resolve them against.
    const { schemas } = (this.openapi.document as { components: { schemas: Record<string, unknown> } }).components;
    const leadInput = schema(inlineRefs(schemas.LeadInput, schemas));
    const emptyInput = schema(EMPTY_INPUT);
    // `stores`: a refusal is a lead refused (leads_refused_total), as REST's are counted by the problem filter.
    const lead =
      (run: (body: Record<string, unknown>, call: McpCall) => Promise<Record<string, unknown>>, stores = false) =>
      async (args: unknown, call: McpCall) => {
        try {
          return result(await run((args ?? {}) as Record<string, unknown>, call));
        } catch (error) {
          if (stores && error instanceof AppError) this.metrics.leadsRefused.inc({ code: error.code });
          if (error instanceof AppError && error.code === 'validation_failed') {
            return result({ valid: false, detail: error.detail, errors: error.options.errors ?? [] }, true);
          }
          if (error instanceof AppError) return result({ code: error.code, detail: error.detail }, true);
          throw error;
        }
      };
    const tools: ToolDefinition[] = [
      {
        name: 'validate_lead',
        config: {
          title: 'Validate a lead',
          description:
            'Checks a lead exactly as submit_lead would and returns it normalised (trimmed, NFC, e-mail domain lower-cased, ' +
            'telephone also in E.164). Stores nothing. Invalid input returns the fields that are wrong.',
          inputSchema: leadInput,
          annotations: READ_ONLY,
        },
        run: lead(async (body) => ({ valid: true, stored: false, lead: this.validation.validate(body) })),
      },
      {
        name: 'submit_lead',
        config: {
          title: 'Submit a lead',
          description:
            'Stores a marketing lead (a contact request) for the sales team. Before calling it, obtain the explicit consent of ' +
            'the person to be contacted, confirm the details with them, and run validate_lead. Each call stores a new lead.',
          inputSchema: leadInput,
          annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
        },
        run: lead(async (body, { caller, evidence }) => ({ ...(await this.leads.create(body, caller, 'mcp', evidence)) }), true),
      },
      {
        name: 'get_service_health',
        config: {
          title: 'Service health',
          description: 'The service status, version and the state of its database (and Redis, when used).',
          inputSchema: emptyInput,
          annotations: READ_ONLY,
        },
        run: async () => result({ ...(await this.health.report()) }),
      },
      {
        name: 'get_service_info',
        config: {
          title: 'Company information',
          description: 'Brand, company, address, telephone, the 7-day free trial and links to the documentation.',
          inputSchema: emptyInput,
          annotations: READ_ONLY,
        },
        run: async () => result({ ...this.site.getInfo() }),
      },
      {
        name: 'search_docs',
        config: {
          title: 'Search the documentation',
          description: 'Documentation pages whose title, summary or text contains the query (all pages without one).',
          inputSchema: schema({ type: 'object', properties: { query: { type: 'string', maxLength: 200 } }, additionalProperties: false }),
          annotations: READ_ONLY,
        },
        run: async (args) => {
          const query = (args as { query?: unknown } | undefined)?.query;
          if (query !== undefined && typeof query !== 'string')
            return result({ errors: [{ pointer: '/query', code: 'invalid_type', detail: 'query must be a string.' }] }, true);
          return result({ pages: this.docs.search(query).map(({ slug, title, summary, url }) => ({ slug, title, summary, url })) });
        },
      },
      {
        name: 'get_doc',
        config: {
          title: 'Read a documentation page',
          description: 'One documentation page as Markdown, by the slug search_docs returns (e.g. "agents", "errors", "quickstart").',
          inputSchema: schema({ type: 'object', properties: { slug: { type: 'string', maxLength: 100 } }, required: ['slug'], additionalProperties: false }),
          annotations: READ_ONLY,
        },
        run: async (args) => {
          const slug = (args as { slug?: unknown } | undefined)?.slug;
          const page = typeof slug === 'string' ? this.docs.find(slug) : undefined;
          if (!page)
            return result(
              { errors: [{ pointer: '/slug', code: 'invalid_format', detail: 'There is no documentation page with that slug; search_docs lists them.' }] },
              true,
            );
          // The page is in the answer twice: structuredContent and its text mirror.
          const refusal = this.refuseOverCap(`get_doc ${page.slug}`, 2 * (this.resourceBytes.get(`leads://docs/${page.slug}`) ?? 0), page.url);
          if (refusal) return result({ code: 'answer_too_large', detail: refusal }, true);
          return result({ slug: page.slug, title: page.title, url: page.url, markdown: page.markdown });
        },
      },
      // Operator tools: they exist only for a token with the scope (docs/decisions/0026-operator-reads-over-graphql-and-mcp.md).
      {
        name: 'list_leads',
        scope: READ_SCOPE,
        config: {
          title: 'List stored leads',
          description:
            'Stored leads, newest first, one page at a time: the pages of GET /api/v1/leads, as {data, next_cursor}. For the next page ' +
            'pass next_cursor as cursor with the same filters; next_cursor null is the last page. Filters: since (inclusive) and until ' +
            '(exclusive), RFC 3339 date-times with a time zone, or dates such as 2026-11-27 (since from 00:00 of that day, until through ' +
            "its end, in the service's time zone); origem (exact); email (any letter case); screening (accepted, the default, held, spam " +
            'or all); channel (api, form, mcp or cli); q, a search by name, e-mail or empresa (each term starts a word, accents and ' +
            'letter case aside: joao finds João). held_count: the leads awaiting review under the same filters (up to 1000). Leads are personal data: show them only ' +
            'to people entitled to them.',
          inputSchema: schema(this.queryInput(['Limit', 'Cursor', 'Since', 'Until', 'Origem', 'Email', 'ScreeningFilter', 'Channel', 'Q'])),
          annotations: READ_ONLY,
        },
        run: (args, call) => this.listLeads(args, call),
      },
      {
        name: 'get_lead',
        scope: READ_SCOPE,
        config: {
          title: 'Read a stored lead',
          description: 'One stored lead by its id (as submit_lead or list_leads gave it): the lead of GET /api/v1/leads/{id}.',
          inputSchema: schema({ ...this.queryInput(['LeadId']), required: ['id'] }),
          annotations: READ_ONLY,
        },
        run: (args, call) => this.getLead(args, call),
      },
    ];
    return new Map(tools.map((tool) => [tool.name, tool]));
  }

  /** An input schema whose properties are the contract's own parameters of the REST read (schema and description). */
  private queryInput(names: string[]): Record<string, unknown> {
    const parameters = (this.openapi.document as { components: { parameters: Record<string, ContractParameter> } }).components.parameters;
    const properties = Object.fromEntries(
      names.map((name) => [parameters[name].name, { ...parameters[name].schema, description: parameters[name].description }]),
    );
    return { type: 'object', properties, additionalProperties: false };
  }

  /** GET /api/v1/leads through MCP: the same input rules and codes (a pointer for each argument), page and audit line. */
  private async listLeads(args: unknown, { caller, requestId }: McpCall): Promise<CallToolResult> {
    const given = (args ?? {}) as Record<string, unknown>;
    // JSON may carry what a query string cannot: an array (which the query rules read as a repeated parameter) or an object.
    const wrong = Object.entries(given).filter(([name, value]) => LIST_ARGUMENTS.has(name) && typeof value === 'object' && value !== null);
    if (wrong.length) {
      const errors = wrong.map(([name]) => ({
        pointer: `/${name}`,
        code: 'invalid_type',
        detail: `${name} must be ${name === 'limit' ? 'an integer' : 'a string'}.`,
      }));
      return result({ code: 'invalid_query', detail: 'The arguments have the wrong types.', errors }, true);
    }
    try {
      // null is "not given", as for a parameter left out of the REST query.
      const input = await leadReadInput(Object.fromEntries(Object.entries(given).filter(([, value]) => value !== null)), this.config.timeZone);
      const page = await readLeadPage(this.reader, input);
      const structuredContent = { data: page.data, next_cursor: page.nextCursor, held_count: page.heldCount };
      const text = JSON.stringify(structuredContent, null, 2);
      // The page is in the answer twice: structuredContent and its text mirror (the compact one is the shorter).
      const refusal = this.refuseOverCap('list_leads', jsonBytes(text) + Buffer.byteLength(text), `${this.config.publicBaseUrl}/api/v1/leads`);
      if (refusal) return result({ code: 'answer_too_large', detail: `${refusal.slice(0, -1)} or ask for a smaller limit.` }, true);
      auditRead({ route: 'MCP list_leads', clientId: caller.clientId, requestId, filter: input.filter, rows: page.data.length });
      return { structuredContent, content: [{ type: 'text', text }], isError: false };
    } catch (error) {
      const errors = queryErrorsOf(error).map(({ parameter, code, detail }) => ({ pointer: `/${parameter}`, code, detail }));
      if (error instanceof AppError) return result({ code: error.code, detail: error.detail, ...(errors.length ? { errors } : {}) }, true);
      throw error;
    }
  }

  /** GET /api/v1/leads/{id} through MCP. A lead is far below the smallest answer cap (64 KiB), even twice. */
  private async getLead(args: unknown, { caller, requestId }: McpCall): Promise<CallToolResult> {
    const id = (args as { id?: unknown } | undefined)?.id;
    if (typeof id !== 'string') {
      const code = id === undefined || id === null ? 'required' : 'invalid_type';
      return result({ errors: [{ pointer: '/id', code, detail: 'id is required: a lead’s id (a UUID) as a string.' }] }, true);
    }
    const lead = await this.reader.get(id);
    const read = { route: 'MCP get_lead', clientId: caller.clientId, requestId };
    auditRead(lead ? { ...read, rows: 1, leadId: lead.id } : { ...read, rows: 0 });
    if (!lead) return result({ code: 'lead_not_found', detail: 'No stored lead has this id.' }, true);
    return result({ ...lead });
  }

  /** Resources and the prompt: read-only, for the full server. */
  private registerReadables(server: McpServer): void {
    server.registerResource(
      'openapi',
      'leads://openapi',
      { title: 'OpenAPI contract', description: 'The REST API contract (OpenAPI 3.1), as served at /docs/openapi-leads.json.', mimeType: 'application/json' },
      async (uri) => ({
        contents: [
          {
            uri: uri.href,
            mimeType: 'application/json',
            text: this.readable(uri.href, `${this.config.publicBaseUrl}/docs/openapi-leads.json`, this.openapi.json),
          },
        ],
      }),
    );
    server.registerResource(
      'site',
      'leads://site',
      { title: 'Company information', description: 'The content of GET /api/v1/info.', mimeType: 'application/json' },
      async (uri) => ({
        contents: [
          {
            uri: uri.href,
            mimeType: 'application/json',
            text: this.readable(uri.href, `${this.config.publicBaseUrl}/api/v1/info`, JSON.stringify(this.site.getInfo())),
          },
        ],
      }),
    );
    server.registerResource(
      'docs',
      new ResourceTemplate('leads://docs/{slug}', {
        list: async () => ({
          resources: this.docs
            .search()
            .map((page) => ({ uri: `leads://docs/${page.slug}`, name: page.slug, title: page.title, description: page.summary, mimeType: 'text/markdown' })),
        }),
      }),
      { title: 'Documentation page', description: 'A documentation page as Markdown.', mimeType: 'text/markdown' },
      async (uri, variables) => {
        const page = this.docs.find(String(variables.slug));
        // -32602 with data.uri, like any unknown resource (not an internal error).
        // The slug is not echoed: data.uri carries it already, and two copies of a 32 KiB one would outgrow small answer caps.
        if (!page) throw new ResourceNotFoundError(uri.href, 'There is no documentation page with that slug; resources/list names them all.');
        return { contents: [{ uri: uri.href, mimeType: 'text/markdown', text: this.readable(`leads://docs/${page.slug}`, page.url, page.markdown) }] };
      },
    );

    server.registerPrompt(
      'capture_lead',
      {
        title: 'Capture a lead',
        description: 'Walks an assistant through collecting, confirming and submitting a lead with the person’s consent.',
        argsSchema: schema({
          type: 'object',
          properties: { contexto: { type: 'string', description: 'Where the conversation happens, e.g. "site" or "whatsapp".' } },
        }),
      },
      async (args) => {
        const contexto = (args as { contexto?: string } | undefined)?.contexto;
        return {
          messages: [
            {
              role: 'user',
              content: {
                type: 'text',
                text: [
                  `You are helping a person ask ${SITE_NAME(this.site)} to contact them${contexto ? ` (context: ${contexto})` : ''}.`,
                  '1. Ask for their name (nome) and e-mail (email); optionally telephone (telefone), company (empresa), a message (mensagem).',
                  '2. Read the details back and ask for explicit consent to be contacted. Without a clear yes, stop.',
                  '3. Call validate_lead with the details; if it reports errors, ask the person to correct those fields.',
                  '4. Call submit_lead with the validated details and origem set to where the conversation happens.',
                  '5. Tell the person the lead was received and give them its id.',
                ].join('\n'),
              },
            },
          ],
        };
      },
    );
  }
}

const SITE_NAME = (site: SiteService) => site.getInfo().brand;

/** Whether a token with these scopes has the tool at all. */
const allowedTo = (tool: ToolDefinition, scopes: readonly string[]) => tool.scope === undefined || scopes.includes(tool.scope);
