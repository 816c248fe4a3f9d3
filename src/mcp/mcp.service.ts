import { Inject, Injectable, OnModuleDestroy } from '@nestjs/common';
import { createMcpHandler, type McpHttpHandler } from '@modelcontextprotocol/server';
import { hostHeaderValidation } from '@modelcontextprotocol/node';
import type { Request, Response } from 'express';
import { AppConfig } from '../config/config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { callerOf } from '../auth/caller.decorator.js';
import { principalOf } from '../auth/principal.js';
import { requestIdOf } from '../request/request-id.js';
import { mcpBody } from './mcp-message.js';
import { serveMcp } from './mcp-transport.js';
import { captchaEvidenceOf } from '../screening/lead-evidence.js';
import { McpCall, McpServerFactory } from './mcp-server.factory.js';
import { buildServerCard } from './server-card.js';

const SERVER_CARD_TYPE = 'application/mcp-server-card+json';
/** Never used: every request passes the bearer guard, which always sets a principal. */
const UNKNOWN_CALL: McpCall = {
  caller: { scope: 'unknown', registrationId: null, clientId: null },
  scopes: [],
  requestId: '',
  evidence: { address: 'unknown', remoteIp: undefined },
};

/**
 * Streamable HTTP at /mcp through the official SDK, stateless: a fresh server per request for the newest protocol
 * revision and, through the SDK's legacy fallback, the 2025 ones. The request has already passed the bearer guard and
 * the rate limiter (work on the REST budget, housekeeping on its own, see mcp-message.ts); here the Host and Origin are
 * checked (DNS rebinding), batches refused and the one message handed over.
 */
@Injectable()
export class McpService implements OnModuleDestroy {
  private readonly handler: McpHttpHandler;
  private readonly validHost: ReturnType<typeof hostHeaderValidation>;
  private readonly origins: ReadonlySet<string>;
  private readonly card: { body: string; etag: string };

  constructor(factory: McpServerFactory, @Inject(APP_CONFIG) config: AppConfig) {
    this.handler = createMcpHandler(({ authInfo }) => {
      const { call, toolCalled } = (authInfo?.extra ?? {}) as { call?: McpCall; toolCalled?: string };
      return factory.create(call ?? UNKNOWN_CALL, toolCalled);
    });
    const publicHost = new URL(config.publicBaseUrl).hostname;
    // Browsers may call from our own origin and from the web-form origins, compared whole (scheme, host and port); a `*`
    // there opens the forms, not MCP. Server-side agents send no Origin at all.
    this.origins = new Set([config.publicBaseUrl, ...(config.corsOrigins === '*' ? [] : config.corsOrigins)]);
    this.validHost = hostHeaderValidation([publicHost, 'localhost', '127.0.0.1', '[::1]']);
    this.card = buildServerCard(config);
  }

  async handle(req: Request, res: Response): Promise<void> {
    if (!this.validHost(req, res) || !this.validOrigin(req, res)) return;
    const { value: body, error } = mcpBody(req);
    if (error) {
      // JSON-RPC clients expect JSON-RPC errors here, not problem documents: a charset other than UTF-8 is the
      // SDK's 415, anything else unreadable a parse error.
      if (error.code === 'unsupported_media_type') rpcError(res, 415, -32000, `Unsupported Media Type: ${error.detail}`);
      else rpcError(res, 400, -32700, `Parse error: ${error.detail}`);
      return;
    }
    // None of the revisions served here has batches (the SDK would still run up to 100 messages for one request).
    if (Array.isArray(body)) return rpcError(res, 400, -32600, 'Invalid Request: JSON-RPC batches are not supported; send one message per request.');
    const caller = callerOf(req);
    // The token's scopes decide which tools this caller's server holds (operator tools need theirs).
    const call: McpCall = { caller, scopes: principalOf(req).scopes, requestId: requestIdOf(req), evidence: captchaEvidenceOf(req) };
    req.auth = { token: '', clientId: caller.registrationId ?? 'anonymous', scopes: [], extra: { call, toolCalled: toolCalled(body) } };
    await serveMcp(this.handler, req, res, body);
  }

  /** A present Origin must be one of ours exactly; refused like the SDK refuses a foreign Host (403, -32000). */
  private validOrigin(req: Request, res: Response): boolean {
    const origin = req.headers.origin;
    if (origin === undefined || origin === '' || this.origins.has(normalisedOrigin(origin))) return true;
    rpcError(res, 403, -32000, 'Invalid Origin: browsers may call this MCP server only from the service’s own origin or a configured web-form origin.');
    return false;
  }

  /** The card, with content negotiation and conditional requests (ETag / 304). */
  serverCard(req: Request, res: Response): string | undefined {
    res.setHeader('ETag', this.card.etag);
    res.vary('Accept');
    // application/json unless Accept names the card type (a bare */* or no Accept gets plain JSON).
    res.type(req.accepts(['application/json', SERVER_CARD_TYPE]) === SERVER_CARD_TYPE ? SERVER_CARD_TYPE : 'application/json');
    // req.fresh: If-None-Match with weak comparison, lists and *, as RFC 9110 §13.1.2 wants.
    if (req.fresh) {
      res.status(304);
      return undefined;
    }
    return this.card.body;
  }

  async onModuleDestroy(): Promise<void> {
    await this.handler.close();
  }
}

function rpcError(res: Response, status: number, code: number, message: string): void {
  res.status(status).json({ jsonrpc: '2.0', error: { code, message }, id: null });
}

/** The serialisation of an Origin as URL does it (lower-case scheme and host, no default port); '' when it is not one. */
function normalisedOrigin(origin: string): string {
  try {
    return new URL(origin).origin;
  } catch {
    return '';
  }
}

/** The tool a tools/call names, so that its server need hold only that tool. */
function toolCalled(body: unknown): string | undefined {
  const message = body as { method?: unknown; params?: { name?: unknown } } | null;
  return message?.method === 'tools/call' && typeof message.params?.name === 'string' ? message.params.name : undefined;
}

declare module 'express' {
  interface Request {
    /** What the MCP SDK's Node adapter hands to the server factory as `authInfo`. */
    auth?: { token: string; clientId: string; scopes: string[]; extra?: Record<string, unknown> };
  }
}
