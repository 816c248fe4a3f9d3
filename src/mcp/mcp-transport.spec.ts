import { createMcpHandler, fromJsonSchema, type JsonSchemaType, McpServer } from '@modelcontextprotocol/server';

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
