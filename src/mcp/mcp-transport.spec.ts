import { EventEmitter } from 'node:events';
import { createMcpHandler, fromJsonSchema, type JsonSchemaType, type McpHttpHandler, McpServer } from '@modelcontextprotocol/server';
import type { Request as ExpressRequest, Response as ExpressResponse } from 'express';
import { serveMcp } from './mcp-transport.js';

/**
 * What serveMcp (mcp-transport.ts) assumes of the SDK (docs/decisions/0031-mcp-throughput.md): given `parsedBody`, the
 * handler never reads the request's body, so a body-less Request serves both eras exactly as one with the body would.
 * An SDK upgrade that starts reading the body fails here by name, rather than as parse errors on /mcp.
 */
const passThrough = { getValidator: () => (input: unknown) => ({ valid: true as const, data: input as never, errorMessage: undefined }) };
const ARGS = fromJsonSchema({ type: 'object', properties: { who: { type: 'string' } } } as JsonSchemaType, passThrough);
const MODERN_META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 'spec', version: '1.0.0' },
  'io.modelcontextprotocol/clientCapabilities': {},
};
const ACCEPT_BOTH = 'application/json, text/event-stream';

/** A server per request whose one tool answers with the caller the factory was built for (authInfo.clientId). */
function handler() {
  const built: string[] = [];
  const mcp = createMcpHandler(({ authInfo, era }) => {
    const caller = authInfo?.clientId ?? 'nobody';
    built.push(`${era}:${caller}`);
    const server = new McpServer({ name: 'spec', version: '1.0.0' });
    server.registerTool('whoami', { inputSchema: ARGS }, async (args) => ({
      content: [{ type: 'text', text: caller }],
      structuredContent: { caller, args: args as Record<string, unknown> },
    }));
    return server;
  });
  return { mcp, built };
}

/** A POST with no body at all, as serveMcp sends it: the parsed body goes beside it. */
const bodiless = (headers: Record<string, string>) =>
  new Request('http://127.0.0.1/mcp', { method: 'POST', headers: { 'content-type': 'application/json', accept: ACCEPT_BOTH, ...headers } });
const auth = (clientId: string) => ({ token: '', clientId, scopes: [] });

/** The one JSON-RPC message of an answer, sent as application/json or as one SSE event. */
async function message(res: Response): Promise<Record<string, any>> {
  const text = await res.text();
  return JSON.parse(/^data: (.*)$/m.exec(text)?.[1] ?? text);
}

describe('the SDK handler behind serveMcp (docs/decisions/0031)', () => {
  it('serves a 2025-era tools/call from parsedBody alone', async () => {
    const { mcp, built } = handler();
    const body = { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'whoami', arguments: { who: 'a' } } };
    const res = await mcp.fetch(bodiless({ 'mcp-protocol-version': '2025-11-25' }), { parsedBody: body, authInfo: auth('alice') });
    expect(res.status).toBe(200);
    expect(await message(res)).toEqual({
      jsonrpc: '2.0',
      id: 3,
      result: { content: [{ type: 'text', text: 'alice' }], structuredContent: { caller: 'alice', args: { who: 'a' } } },
    });
    expect(built).toEqual(['legacy:alice']);
    await mcp.close();
  });

  it('serves a 2026-07-28 tools/call from parsedBody alone, with the SDK’s header checks', async () => {
    const { mcp, built } = handler();
    const body = { jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 'whoami', arguments: {}, _meta: MODERN_META } };
    const headers = { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'whoami' };
    const res = await mcp.fetch(bodiless(headers), { parsedBody: body, authInfo: auth('bob') });
    expect(res.status).toBe(200);
    expect(await message(res)).toMatchObject({ jsonrpc: '2.0', id: 4, result: { structuredContent: { caller: 'bob' }, resultType: 'complete' } });
    expect(built).toEqual(['modern:bob']);

    const mismatch = await mcp.fetch(bodiless({ ...headers, 'mcp-name': 'other' }), { parsedBody: body });
    expect(mismatch.status).toBe(400);
    expect((await message(mismatch)).error.code).toBe(-32020);
    await mcp.close();
  });

  it('builds a server for every request, so concurrent callers never share one', async () => {
    const { mcp, built } = handler();
    const call = (id: number) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'whoami', arguments: {} } });
    const answers = await Promise.all(
      ['alice', 'bob', 'alice', 'carol'].map(async (who, id) => {
        const res = await mcp.fetch(bodiless({ 'mcp-protocol-version': '2025-11-25' }), { parsedBody: call(id), authInfo: auth(who) });
        return (await message(res)).result.structuredContent.caller;
      }),
    );
    expect(answers).toEqual(['alice', 'bob', 'alice', 'carol']);
    expect(built).toEqual(['legacy:alice', 'legacy:bob', 'legacy:alice', 'legacy:carol']);
    await mcp.close();
  });
});

/** A Node response to a slow client: every write fills its buffer, and 'drain' comes a tick later. */
class SlowResponse extends EventEmitter {
  chunks: string[] = [];
  ended = false;
  writableFinished = false;
  writeHead() {
    return this;
  }
  write(chunk: Uint8Array): boolean {
    this.chunks.push(Buffer.from(chunk).toString());
    setImmediate(() => this.emit('drain'));
    return false;
  }
  end() {
    this.ended = true;
    this.writableFinished = true;
    return this;
  }
}

/** A handler whose answer is an SSE stream of `events` events, the last one sent only once `release` resolves. */
function streaming(events: number, release: Promise<void> = Promise.resolve()): McpHttpHandler {
  const body = new ReadableStream<Uint8Array>({
    async start(controller) {
      for (let i = 0; i < events - 1; i++) controller.enqueue(new TextEncoder().encode(`data: ${i}\n\n`));
      await release;
      controller.enqueue(new TextEncoder().encode(`data: ${events - 1}\n\n`));
      controller.close();
    },
  });
  const response = new Response(body, { headers: { 'content-type': 'text/event-stream' } });
  return { fetch: async () => response } as unknown as McpHttpHandler;
}

const nodeRequest = { headers: { host: '127.0.0.1' }, originalUrl: '/mcp' } as unknown as ExpressRequest;

describe('serveMcp streaming an SSE answer', () => {
  it('waits for drain after each full write and leaves no listener behind', async () => {
    const res = new SlowResponse();
    // Abort listeners attached and not taken off while the stream ran: one per wait would grow with a long stream.
    const { addEventListener, removeEventListener } = EventTarget.prototype;
    let attached = 0;
    const add = jest.spyOn(EventTarget.prototype, 'addEventListener').mockImplementation(function (this: EventTarget, ...args) {
      if (args[0] === 'abort') attached++;
      addEventListener.apply(this, args);
    });
    const remove = jest.spyOn(EventTarget.prototype, 'removeEventListener').mockImplementation(function (this: EventTarget, ...args) {
      if (args[0] === 'abort') attached--;
      removeEventListener.apply(this, args);
    });
    try {
      await serveMcp(streaming(50), nodeRequest, res as unknown as ExpressResponse, {});
    } finally {
      add.mockRestore();
      remove.mockRestore();
    }
    expect(res.chunks).toEqual(Array.from({ length: 50 }, (_, i) => `data: ${i}\n\n`));
    expect(res.ended).toBe(true);
    expect(res.listenerCount('drain')).toBe(0);
    // The one left is the web Request's own, following the signal for the exchange: not one per write.
    expect(attached).toBeLessThanOrEqual(1);
  });

  it('stops waiting and ends when the client goes away', async () => {
    const res = new SlowResponse();
    res.write = (chunk: Uint8Array) => (res.chunks.push(Buffer.from(chunk).toString()), false); // never drains
    let release!: () => void;
    const served = serveMcp(streaming(3, new Promise((resolve) => (release = resolve))), nodeRequest, res as unknown as ExpressResponse, {});
    await new Promise((resolve) => setImmediate(resolve));
    res.emit('close');
    await served;
    release();
    expect(res.chunks).toEqual(['data: 0\n\n']);
    expect(res.ended).toBe(true);
    expect(res.listenerCount('drain')).toBe(0);
  });
});
