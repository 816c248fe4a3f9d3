import { HeaderMap } from '@apollo/server';
import { ApolloDriver } from '@nestjs/apollo';
import { Inject, Injectable } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { GraphQLModule } from '@nestjs/graphql';
import type { Request, Response } from 'express';
import { AppConfig } from '../config/config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { AppError, validationFailed } from '../problem/app-error.js';
import { FieldError } from '../problem/error-catalog.js';

/** A query text above this size is refused before parsing (GraphQL error QUERY_TOO_LARGE). */
export const MAX_QUERY_LENGTH = 8 * 1024;

const RESPONSE_MEDIA = 'application/graphql-response+json';

/**
 * POST /api/v1/graphql. The transport (JSON body, media type, size, token, rate limit) was checked like any REST
 * request; here the envelope is checked, the limits that precede parsing applied, and Apollo executes.
 * GraphQL errors follow GraphQL-over-HTTP: 200 with `errors` for application/json; for a client that asks for
 * application/graphql-response+json, Apollo's 4xx for requests that cannot run.
 */
@Injectable()
export class GraphqlService {
  constructor(
    private readonly moduleRef: ModuleRef,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** Apollo as the GraphQL module started it (the module is not a provider, so it is looked up). */
  private get apollo() {
    return this.moduleRef.get<GraphQLModule<ApolloDriver>>(GraphQLModule, { strict: false }).graphQlAdapter.instance;
  }

  async execute(body: unknown, req: Request, res: Response): Promise<string> {
    if (Array.isArray(body)) return this.refuse(req, res, 'BATCHING_NOT_SUPPORTED', 'Batched requests are not supported; send one operation per request.');
    if (typeof body !== 'object' || body === null) throw new AppError('body_not_object', 'The GraphQL request must be a JSON object with a "query".');
    // Before the envelope: an APQ client's first request has a hash and no query, and it must learn to send the text.
    const extensions = (body as Record<string, unknown>).extensions;
    if (typeof extensions === 'object' && extensions !== null && (extensions as { persistedQuery?: unknown }).persistedQuery !== undefined) {
      return this.refuse(req, res, 'PERSISTED_QUERY_NOT_SUPPORTED', 'Persisted queries are not supported; send the query text.');
    }
    const request = envelope(body as Record<string, unknown>);
    if (request.query.length > MAX_QUERY_LENGTH) {
      return this.refuse(req, res, 'QUERY_TOO_LARGE', `The query is longer than ${MAX_QUERY_LENGTH} characters.`);
    }
    const headers = new HeaderMap();
    for (const [name, value] of Object.entries(req.headers)) if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(', ') : value);
    const answer = await this.apollo.executeHTTPGraphQLRequest({
      httpGraphQLRequest: { method: 'POST', headers, search: '', body: request },
      context: async () => ({ req, res }),
    });
    for (const [name, value] of answer.headers) res.setHeader(name, value);
    const plainJson = !String(answer.headers.get('content-type')).startsWith(RESPONSE_MEDIA);
    res.status(plainJson ? 200 : (answer.status ?? 200));
    let text = answer.body.kind === 'complete' ? answer.body.string : '';
    if (answer.body.kind === 'chunked') {
      for await (const chunk of answer.body.asyncIterator) {
        text += chunk;
        if (this.overCap(text)) break;
      }
    }
    // The backstop of the estimate made before execution (which leaves introspection out): nothing over the cap is sent.
    if (this.overCap(text)) {
      const bytes = Buffer.byteLength(text);
      return this.refuse(
        req,
        res,
        'ANSWER_TOO_LARGE',
        `The answer is ${bytes} bytes, over the limit of ${this.config.maxAnswerBytes} (MAX_ANSWER_BYTES); ask for less.`,
      );
    }
    return text;
  }

  private overCap(text: string): boolean {
    // A UTF-16 unit is at most 3 bytes in UTF-8, so most answers are cleared without measuring.
    return text.length * 3 > this.config.maxAnswerBytes && Buffer.byteLength(text) > this.config.maxAnswerBytes;
  }

  /** A request-level GraphQL error, shaped, typed and given the status Apollo gives its own. */
  private refuse(req: Request, res: Response, code: string, message: string): string {
    // Apollo's negotiation (application/json first on a tie): a client that asked for graphql-response+json gets it,
    // with the 400 GraphQL-over-HTTP asks for a request that could not run, as for Apollo's own request errors.
    if (req.accepts(['application/json', RESPONSE_MEDIA]) === RESPONSE_MEDIA) res.status(400).type(`${RESPONSE_MEDIA}; charset=utf-8`);
    else res.status(200).type('application/json; charset=utf-8');
    return JSON.stringify({ errors: [{ message, extensions: { code } }] });
  }
}

interface GraphqlRequest {
  query: string;
  operationName?: string;
  variables?: Record<string, unknown>;
  extensions?: Record<string, unknown>;
}

/** The GraphQL-over-HTTP request object; a wrong member is a transport problem (422) with a pointer. */
function envelope(body: Record<string, unknown>): GraphqlRequest {
  const errors: FieldError[] = [];
  const isObject = (v: unknown) => typeof v === 'object' && v !== null && !Array.isArray(v);
  if (body.query === undefined) errors.push({ pointer: '/query', code: 'required', detail: 'query is required: the GraphQL document as a string.' });
  else if (typeof body.query !== 'string') errors.push({ pointer: '/query', code: 'invalid_type', detail: 'query must be a string.' });
  if (body.operationName != null && typeof body.operationName !== 'string') {
    errors.push({ pointer: '/operationName', code: 'invalid_type', detail: 'operationName must be a string or null.' });
  }
  for (const key of ['variables', 'extensions'] as const) {
    if (body[key] != null && !isObject(body[key])) errors.push({ pointer: `/${key}`, code: 'invalid_type', detail: `${key} must be an object or null.` });
  }
  if (errors.length) throw validationFailed(errors);
  // Only the members that were sent and not null: Apollo refuses a member that is present but undefined.
  const request: GraphqlRequest = { query: body.query as string };
  if (body.operationName != null) request.operationName = body.operationName as string;
  if (body.variables != null) request.variables = body.variables as Record<string, unknown>;
  if (body.extensions != null) request.extensions = body.extensions as Record<string, unknown>;
  return request;
}
