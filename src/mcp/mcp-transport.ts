import { once } from 'node:events';
import type { McpHttpHandler } from '@modelcontextprotocol/server';
import type { Request, Response } from 'express';

/**
 * The SDK's toNodeHandler (@modelcontextprotocol/node) without its two copies of the body, for a body the service has
 * already parsed: the web Request goes to the SDK with no body at all, and `parsedBody` is what the SDK reads (it never
 * reads the body when given one). toNodeHandler serialises `parsedBody` again, encodes it to count its bytes and wraps
 * it in a ReadableStream that nothing reads. The answer is written at once when it is one JSON document, streamed when
 * it is SSE (subscriptions/listen, a 2025-era answer).
 * Measured gain, 2026-11-27 (docs/decisions/0031-mcp-throughput.md): the SDK leg of a tools/call costs 1.14× (2026-07-28)
 * to 1.16× (2025-11-25) less than through toNodeHandler, in-process pairs of 1,500 calls alternated 16 times; about 5% of
 * a whole /mcp request. mcp-transport.spec.ts fails if the SDK starts reading the body beside `parsedBody`.
 */
export async function serveMcp(handler: McpHttpHandler, req: Request, res: Response, parsedBody: unknown): Promise<void> {
  const abort = new AbortController();
  res.on('close', () => {
    if (!res.writableFinished) abort.abort();
  });
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined || name.startsWith(':')) continue;
    if (Array.isArray(value)) for (const item of value) headers.append(name, item);
    else headers.set(name, value);
  }
  // Nothing of the body is left to describe: the SDK is handed the parsed value.
  headers.delete('content-length');
  headers.delete('content-encoding');
  headers.delete('transfer-encoding');
  const request = new globalThis.Request(`http://${req.headers.host ?? 'localhost'}${req.originalUrl}`, { method: 'POST', headers, signal: abort.signal });
  let response: globalThis.Response;
  try {
    response = await handler.fetch(request, { ...(req.auth !== undefined && { authInfo: req.auth }), parsedBody });
  } catch {
    // Only a closed handler throws (shutdown); the SDK answers everything else itself. As toNodeHandler does.
    response = globalThis.Response.json({ jsonrpc: '2.0', error: { code: -32603, message: 'Internal server error' }, id: null }, { status: 500 });
  }
  const head: Record<string, string> = {};
  for (const [name, value] of response.headers) head[name] = value;
  if (response.body === null) {
    res.writeHead(response.status, head).end();
    return;
  }
  if (!response.headers.get('content-type')?.startsWith('text/event-stream')) {
    // One JSON document, complete when the SDK answers: no stream to pump.
    const body = Buffer.from(await response.arrayBuffer());
    res.writeHead(response.status, { ...head, 'content-length': String(body.length) }).end(body);
    return;
  }
  res.writeHead(response.status, head);
  try {
    for await (const chunk of response.body) {
      if (abort.signal.aborted) break;
      // events.once takes both of its listeners off whichever comes first, so a long stream to a slow client adds none.
      if (!res.write(chunk)) await once(res, 'drain', { signal: abort.signal });
    }
  } catch {
    // the client went away (which also aborts a wait for 'drain'), or the stream failed: end what was sent
  }
  res.end();
}
