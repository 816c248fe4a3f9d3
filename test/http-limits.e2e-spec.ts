import { once } from 'node:events';
import type { Server } from 'node:http';
import { type AddressInfo, connect, type Socket } from 'node:net';
import { expectContract } from './support/contract.js';
import { expectRawProblem, rawRequest, RawResponse } from './support/raw-http.js';
import { MAX_PIPELINED_REQUESTS } from '../src/server/connection-limits.js';
import { countLeads, startTestApp, TestApp } from './support/test-app.js';

/**
 * The limits Node's HTTP server does not set by itself (docs/decisions/0015-http-server-limits.md): connections,
 * bodies over the limit, header counts, strict request lines and hosts, forwarded addresses, and clients that never
 * read their answers. Most of these are answered before routing, so raw sockets send them.
 */

const LEAD = '/api/v1/lead';
const LEAD_BODY = JSON.stringify({ nome: 'Ana Souza', email: 'ana@exemplo.com.br' });
const LEAKS = /SyntaxError|node_modules|\n\s+at |QueryFailedError|SQLITE_|violates/i;

async function listening(env: Record<string, string> = {}): Promise<{ t: TestApp; server: Server; port: number }> {
  const t = await startTestApp(env);
  await t.app.listen(0, '127.0.0.1');
  const server = t.app.getHttpServer() as Server;
  return { t, server, port: (server.address() as AddressInfo).port };
}

/** A problem answered before routing, and the connection closed after it. */
function expectProblem(res: RawResponse, status: number, code: string): void {
  expectRawProblem(res, status, code, LEAKS);
  expect(res.headers.connection).toBe('close');
}

const leadRequest = (extraHeaders: string, body = LEAD_BODY) =>
  `POST ${LEAD} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n${extraHeaders}Connection: close\r\n\r\n${body}`;

/** One socket kept alive across requests; `get` sends requests (pipelined when several) and resolves with their statuses. */
class KeepAliveClient {
  private buffered = Buffer.alloc(0);
  private readonly waiting: ((status: number) => void)[] = [];

  private constructor(readonly socket: Socket) {
    socket.on('data', (chunk: Buffer) => {
      this.buffered = Buffer.concat([this.buffered, chunk]);
      this.deliver();
    });
  }

  static async open(port: number): Promise<KeepAliveClient> {
    const socket = connect(port, '127.0.0.1');
    await once(socket, 'connect');
    return new KeepAliveClient(socket);
  }

  get(path: string): Promise<number> {
    return this.pipeline([path]).then(([status]) => status);
  }

  pipeline(paths: string[]): Promise<number[]> {
    const answered = paths.map(() => new Promise<number>((resolve) => this.waiting.push(resolve)));
    this.socket.write(paths.map((path) => `GET ${path} HTTP/1.1\r\nHost: localhost\r\n\r\n`).join(''));
    return Promise.all(answered);
  }

  private deliver(): void {
    for (;;) {
      const end = this.buffered.indexOf('\r\n\r\n');
      if (end < 0 || !this.waiting.length) return;
      const head = this.buffered.subarray(0, end).toString('latin1');
      const length = Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? 0);
      if (this.buffered.length < end + 4 + length) return;
      this.buffered = this.buffered.subarray(end + 4 + length);
      this.waiting.shift()!(Number(head.split(' ')[1]));
    }
  }
}

/** Connects and waits until the server closes the socket; resolves with what it received (nothing, when refused). */
async function refusedSocket(port: number): Promise<string> {
  const socket = connect(port, '127.0.0.1');
  let received = '';
  socket.on('data', (chunk) => (received += chunk));
  socket.on('error', () => undefined);
  await once(socket, 'close');
  return received;
}

describe('HTTP limits', () => {
  describe('bodies over the 32 KiB limit are refused at once, and the connection closed', () => {
    let app: Awaited<ReturnType<typeof listening>>;
    beforeAll(async () => {
      app = await listening();
    });
    afterAll(() => app.t.close());

    it('answers 413 for Content-Length: 33000 with no body sent (not 408 once the body timeout passes)', async () => {
      const res = await rawRequest(app.port, `POST ${LEAD} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 33000\r\n\r\n`);
      expect(res.status).toBe(413);
      expect(JSON.parse(res.body)).toMatchObject({ status: 413, code: 'payload_too_large' });
      expect(res.headers.connection).toBe('close');
    });

    it('answers 413 for a declared 100 GB body after its first bytes, without reading the rest', async () => {
      const before = await countLeads(app.t.dataSource);
      const res = await rawRequest(
        app.port,
        `POST ${LEAD} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 100000000000\r\n\r\n${' '.repeat(4096)}`,
      );
      expect(res.status).toBe(413);
      expect(JSON.parse(res.body)).toMatchObject({ code: 'payload_too_large' });
      expect(await countLeads(app.t.dataSource)).toBe(before);
    });

    it('answers 413 for a chunked body as soon as it passes the limit, though its last chunk never comes', async () => {
      const chunk = ' '.repeat(4096);
      const chunks = Array.from({ length: 9 }, () => `${chunk.length.toString(16)}\r\n${chunk}\r\n`).join('');
      const res = await rawRequest(
        app.port,
        `POST ${LEAD} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n${chunks}`,
      );
      expect(res.status).toBe(413);
      expect(JSON.parse(res.body)).toMatchObject({ code: 'payload_too_large' });
      expect(res.headers.connection).toBe('close');
    });

    // CORS answers preflights before any body is read; every other route reads bodies through BodyParserMiddleware (413).
    it('closes the connection of a CORS preflight answered before its 100 GB body is read, instead of reading the body on', async () => {
      const head = `OPTIONS ${LEAD} HTTP/1.1\r\nOrigin: http://elsewhere.test\r\nAccess-Control-Request-Method: POST\r\n`;
      const socket = connect(app.port, '127.0.0.1');
      socket.on('error', () => undefined);
      let answer = '';
      socket.on('data', (chunk) => (answer += chunk));
      // Not events.once: it rejects on the reset this test provokes.
      const closed = new Promise((resolve) => socket.once('close', resolve));
      socket.write(`${head}Host: localhost\r\nContent-Length: 100000000000\r\n\r\n`);
      // Keep sending the body; the server must hang up rather than take it all (it took 1.6 GB before).
      const chunk = Buffer.alloc(64 * 1024, 0x20);
      let sent = 0;
      while (!socket.destroyed && sent < 64 * 1024 * 1024) {
        sent += chunk.length;
        if (!socket.write(chunk)) await Promise.race([new Promise((resolve) => socket.once('drain', resolve)), closed]);
      }
      await closed;
      expect(sent).toBeLessThan(64 * 1024 * 1024);
      expect(Number(answer.split(' ')[1])).toBe(204);
    });

    it('answers 413 for a gzip body declaring more than twice the limit', async () => {
      const res = await rawRequest(
        app.port,
        `POST ${LEAD} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Encoding: gzip\r\nContent-Length: ${2 * 32768 + 1}\r\n\r\n`,
      );
      expect(res.status).toBe(413);
    });
  });

  describe('header fields and request lines', () => {
    let app: Awaited<ReturnType<typeof listening>>;
    beforeAll(async () => {
      app = await listening({ RATE_LIMIT_ANONYMOUS: '1000000/60s' });
    });
    afterAll(() => app.t.close());

    const fillers = (count: number) => 'X: 1\r\n'.repeat(count);

    it('answers 431 for an Authorization after 1,995 filler headers, never serving the request as anonymous', async () => {
      const before = await countLeads(app.t.dataSource);
      expectProblem(await rawRequest(app.port, leadRequest(`${fillers(1995)}Authorization: Bearer garbage\r\n`)), 431, 'request_header_fields_too_large');
      expect(await countLeads(app.t.dataSource)).toBe(before);
    });

    it('answers 431 for a second Idempotency-Key past the limit', async () => {
      const res = await rawRequest(app.port, leadRequest(`Idempotency-Key: first\r\n${fillers(150)}Idempotency-Key: second\r\n`));
      expectProblem(res, 431, 'request_header_fields_too_large');
    });

    it('serves 100 header fields, and answers 431 for 101', async () => {
      // Host, Content-Type, Content-Length and Connection are four of them.
      expect((await rawRequest(app.port, leadRequest(fillers(96)))).status).toBe(201);
      expectProblem(await rawRequest(app.port, leadRequest(fillers(97))), 431, 'request_header_fields_too_large');
    });

    it('answers 400 for two Host fields (RFC 9112 §3.2), in any case', async () => {
      expectProblem(await rawRequest(app.port, leadRequest('host: evil.example\r\n')), 400, 'bad_request');
      expectProblem(await rawRequest(app.port, 'GET /api/v1/health HTTP/1.1\r\nHost: a\r\nHOST: a\r\nConnection: close\r\n\r\n'), 400, 'bad_request');
    });

    it('answers 400 for a request line without an HTTP version (HTTP/0.9)', async () => {
      expectProblem(await rawRequest(app.port, 'GET /api/v1/health\r\n\r\n'), 400, 'bad_request');
    });

    it('still serves HTTP/1.0 without Host', async () => {
      expect((await rawRequest(app.port, 'GET /api/v1/health HTTP/1.0\r\n\r\n')).status).toBe(200);
    });
  });

  describe('forwarded addresses (TRUST_PROXY set)', () => {
    let app: Awaited<ReturnType<typeof listening>>;
    beforeAll(async () => {
      app = await listening({ TRUST_PROXY: '1' });
    });
    afterAll(() => app.t.close());

    const leadFrom = (forwarded: string, key: string) =>
      app.t.http
        .post(LEAD)
        .set('X-Forwarded-For', forwarded)
        .set('Idempotency-Key', key)
        .set('Content-Type', 'application/json')
        .send(LEAD_BODY)
        .then(expectContract);

    it('does not key state by an IPv6 zone id (a 400-character one was a 500 on PostgreSQL): the socket address stands in', async () => {
      const first = await leadFrom(`fe80::1%${'z'.repeat(400)}`, 'zone-id');
      expect(first.status).toBe(201);
      // Another unusable entry falls back to the same socket address, so the key replays the first lead.
      const replay = await leadFrom('not-an-address', 'zone-id');
      expect(replay.status).toBe(201);
      expect(replay.body.id).toBe(first.body.id);
      const rows = await app.t.dataSource.query(`SELECT scope FROM idempotency_keys WHERE "key" = 'zone-id'`);
      expect(rows).toEqual([{ scope: 'ip:127.0.0.1' }]);
    });

    it('keys IPv6 clients by their /64 in RFC 5952 form', async () => {
      await leadFrom('2001:0DB8:0:7:ABCD:0:0:1', 'v6-key');
      const rows = await app.t.dataSource.query(`SELECT scope FROM idempotency_keys WHERE "key" = 'v6-key'`);
      expect(rows).toEqual([{ scope: 'ip:2001:db8:0:7::/64' }]);
    });
  });

  describe('connection caps', () => {
    it('refuses sockets beyond MAX_CONNECTIONS_PER_ADDRESS unread, while the connections already open are served', async () => {
      const app = await listening({ MAX_CONNECTIONS_PER_ADDRESS: '3' });
      const clients = await Promise.all([1, 2, 3].map(() => KeepAliveClient.open(app.port)));
      try {
        expect(await Promise.all(clients.map((client) => client.get('/api/v1/health')))).toEqual([200, 200, 200]);
        expect(await refusedSocket(app.port)).toBe('');
        expect(await clients[0].get('/api/v1/health')).toBe(200);
        // A place freed is a place for a new client.
        clients.pop()!.socket.destroy();
        await waitUntil(
          async () =>
            (await rawRequest(app.port, 'GET /api/v1/health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n').catch(() => ({ status: 0 }))).status === 200,
        );
      } finally {
        for (const client of clients) client.socket.destroy();
        await app.t.close();
      }
    });

    it('refuses sockets beyond MAX_CONNECTIONS, while the connections already open are served', async () => {
      const app = await listening({ MAX_CONNECTIONS: '2', MAX_CONNECTIONS_PER_ADDRESS: '0' });
      const clients = await Promise.all([1, 2].map(() => KeepAliveClient.open(app.port)));
      try {
        expect(await Promise.all(clients.map((client) => client.get('/api/v1/health')))).toEqual([200, 200]);
        expect(await refusedSocket(app.port)).toBe('');
        expect(await clients[1].get('/api/v1/health')).toBe(200);
      } finally {
        for (const client of clients) client.socket.destroy();
        await app.t.close();
      }
    });

    it('has no per-address cap for sockets from a trusted proxy, which carry many clients', async () => {
      const app = await listening({ MAX_CONNECTIONS_PER_ADDRESS: '1', TRUST_PROXY: 'loopback' });
      const clients = await Promise.all([1, 2, 3].map(() => KeepAliveClient.open(app.port)));
      try {
        expect(await Promise.all(clients.map((client) => client.get('/api/v1/health')))).toEqual([200, 200, 200]);
      } finally {
        for (const client of clients) client.socket.destroy();
        await app.t.close();
      }
    });
  });

  describe('a client that never reads its answers', () => {
    /** A socket that never reads, and the server's end of it. */
    async function nonReader(app: { server: Server; port: number }): Promise<{ reader: Socket; serverSide: Socket }> {
      const accepted = once(app.server, 'connection') as Promise<[Socket]>;
      const reader = connect(app.port, '127.0.0.1');
      reader.on('error', () => undefined);
      reader.pause();
      const [serverSide] = await accepted;
      return { reader, serverSide };
    }

    it('is disconnected after WRITE_TIMEOUT, while a reading client is served', async () => {
      const app = await listening({ WRITE_TIMEOUT: '1' });
      try {
        const { reader, serverSide } = await nonReader(app);
        const destroyed = once(serverSide, 'close');
        // One answer in progress and as many waiting as allowed: 17 answers of 130 KB, more than the kernel's buffers
        // of a socket nobody reads, so the server's own buffer fills and stops draining.
        reader.write('GET /docs/openapi-leads.json HTTP/1.1\r\nHost: x\r\n\r\n'.repeat(MAX_PIPELINED_REQUESTS + 1));
        await destroyed;
        expect(serverSide.destroyed).toBe(true);
        const other = await KeepAliveClient.open(app.port);
        expect(await other.get('/docs/openapi-leads.json')).toBe(200);
        other.socket.destroy();
        reader.destroy();
      } finally {
        await app.t.close();
      }
    });

    it(`is disconnected once more than ${MAX_PIPELINED_REQUESTS} pipelined requests wait behind an unread answer, whose answers are never built`, async () => {
      const app = await listening({ WRITE_TIMEOUT: '3600' });
      const parsed = jest.fn();
      app.server.prependListener('request', parsed);
      const served = jest.spyOn(app.t.app.getHttpAdapter().getInstance() as unknown as { handle: () => void }, 'handle');
      try {
        const { reader, serverSide } = await nonReader(app);
        const destroyed = once(serverSide, 'close');
        reader.write('GET /docs/openapi-leads.json HTTP/1.1\r\nHost: x\r\n\r\n'.repeat(200));
        await destroyed;
        // Node parsed the burst; the app was handed only the requests whose answers the kernel could take.
        expect(parsed.mock.calls.length).toBeGreaterThan(MAX_PIPELINED_REQUESTS);
        expect(served.mock.calls.length).toBeLessThan(parsed.mock.calls.length - MAX_PIPELINED_REQUESTS);
        reader.destroy();
      } finally {
        await app.t.close();
      }
    });

    it('serves a pipelined POST whose body arrives after the request before it was answered', async () => {
      const app = await listening();
      try {
        const post = (body: string, close = '') =>
          `POST ${LEAD} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n${close}\r\n`;
        const second = JSON.stringify({ nome: 'Bia Lima', email: 'bia@exemplo.com.br' });
        const socket = connect(app.port, '127.0.0.1');
        let received = '';
        socket.on('data', (chunk) => (received += chunk));
        const closed = new Promise((resolve) => socket.once('close', resolve));
        // The second request's head comes with the first request; its body only once the first is answered.
        socket.write(`${post(LEAD_BODY)}${LEAD_BODY}${post(second, 'Connection: close\r\n')}`);
        await waitUntil(async () => received.includes('HTTP/1.1 201'));
        socket.write(second);
        await closed;
        expect([...received.matchAll(/HTTP\/1\.1 (\d{3})/g)].map((match) => match[1])).toEqual(['201', '201']);
      } finally {
        await app.t.close();
      }
    });

    it('answers pipelined requests of a reading client, in order', async () => {
      const app = await listening();
      try {
        const client = await KeepAliveClient.open(app.port);
        expect(await client.pipeline(['/api/v1/health', '/docs/openapi-leads.json', '/nope', '/api/v1/info', '/api/v1/health'])).toEqual([
          200, 200, 404, 200, 200,
        ]);
        client.socket.destroy();
      } finally {
        await app.t.close();
      }
    });
  });
});

async function waitUntil(condition: () => Promise<boolean>): Promise<void> {
  while (!(await condition())) await new Promise((resolve) => setTimeout(resolve, 50));
}
