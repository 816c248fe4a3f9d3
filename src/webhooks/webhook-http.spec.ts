import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import { once } from 'node:events';
import type { ResolvedAddress, Resolver } from './webhook-address.js';
import { parseRetryAfter, socketConnector, WebhookHttpClient, type Connector, type WebhookRequest } from './webhook-http.js';

// Every connection these tests make goes to 127.0.0.1: a "public" address is only ever handed to a connector that
// records it and connects to a local server instead.

const USER_AGENT = 'leads-service/1.0.0 (webhooks)';
const PUBLIC = '93.184.215.14';
const PUBLIC_2 = '93.184.215.15';

// A self-signed certificate for hooks.test (P-256, valid until 2126), made for these tests only.
const TEST_KEY = `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgOnUbFHSlIVuBbpaj
jxvOjq1R5X/hCqcM47NO8hm0laehRANCAASLysPBrLiYU2AlNPSFugfEIbTLebRa
T2Q9a1eCZM776/zky8AnqnKQHGnQ+NRaz2+DInUvhH2Z/hco0FCWQGdQ
-----END PRIVATE KEY-----
`;
const TEST_CERT = `-----BEGIN CERTIFICATE-----
MIIBmTCCAT6gAwIBAgIUI3gSU0zaWrzfnnZKxf5KcyE46ywwCgYIKoZIzj0EAwIw
FTETMBEGA1UEAwwKaG9va3MudGVzdDAgFw0yNjExMjcwMTExMDJaGA8yMTI2MTEw
MzAxMTEwMlowFTETMBEGA1UEAwwKaG9va3MudGVzdDBZMBMGByqGSM49AgEGCCqG
SM49AwEHA0IABIvKw8GsuJhTYCU09IW6B8QhtMt5tFpPZD1rV4Jkzvvr/OTLwCeq
cpAcadD41FrPb4MidS+EfZn+FyjQUJZAZ1CjajBoMB0GA1UdDgQWBBRILPMpkYpy
Ktqv7aczUf8ok6+HQDAfBgNVHSMEGDAWgBRILPMpkYpyKtqv7aczUf8ok6+HQDAP
BgNVHRMBAf8EBTADAQH/MBUGA1UdEQQOMAyCCmhvb2tzLnRlc3QwCgYIKoZIzj0E
AwIDSQAwRgIhAMJZxioCOINDcNus4lpiprkCI88G8thTyAMzh8KklM43AiEAz1sT
hy41KWdaiaGHRq1GZrTJPJI+nTTtZqC6OLUwank=
-----END CERTIFICATE-----
`;

interface Received {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

interface Server {
  port: number;
  received: Received[];
  connections: number;
  closed: Promise<void>[];
}

const servers: net.Server[] = [];

afterEach(async () => {
  for (const server of servers.splice(0)) {
    if (server instanceof http.Server) server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

async function listen<T extends net.Server>(server: T): Promise<number> {
  servers.push(server);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return (server.address() as net.AddressInfo).port;
}

/** An HTTP server on 127.0.0.1 that answers with `handler` once the request body has come. */
async function serve(handler: (request: http.IncomingMessage, response: http.ServerResponse) => void, secure = false): Promise<Server> {
  const state: Server = { port: 0, received: [], connections: 0, closed: [] };
  const onRequest = (request: http.IncomingMessage, response: http.ServerResponse) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      state.received.push({ method: request.method!, url: request.url!, headers: request.headers, body: Buffer.concat(chunks).toString('utf8') });
      handler(request, response);
    });
  };
  const server = secure ? https.createServer({ key: TEST_KEY, cert: TEST_CERT }, onRequest) : http.createServer(onRequest);
  server.on(secure ? 'secureConnection' : 'connection', (socket: net.Socket) => {
    state.connections++;
    // Not events.once: that rejects on the 'error' a reset connection emits first.
    state.closed.push(new Promise((resolve) => socket.on('close', () => resolve())));
  });
  state.port = await listen(server);
  return state;
}

/** A port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  const port = await listen(server);
  servers.splice(servers.indexOf(server), 1);
  await new Promise((resolve) => server.close(resolve));
  return port;
}

const answers = (table: Record<string, string[]>, calls: string[] = []): Resolver => {
  return async (hostname) => {
    calls.push(hostname);
    const addresses = table[hostname];
    if (!addresses) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    return addresses.map((address): ResolvedAddress => ({ address, family: net.isIP(address) === 6 ? 6 : 4 }));
  };
};

const noLookups: Resolver = async (hostname) => {
  throw new Error(`unexpected lookup of ${hostname}`);
};

type Target = Parameters<Connector>[0];

/** Records each target and connects to the local port `route` gives for its address instead. */
function redirectingConnector(route: (target: Target) => number) {
  const targets: Target[] = [];
  const sockets: net.Socket[] = [];
  const connect: Connector = (target) => {
    targets.push(target);
    const socket = net.connect({ host: '127.0.0.1', port: route(target) });
    sockets.push(socket);
    return socket;
  };
  return { connect, targets, sockets };
}

const post = (url: string, fields: Partial<WebhookRequest> = {}): WebhookRequest => ({
  url,
  headers: { 'content-type': 'application/json', 'webhook-id': 'msg_1' },
  body: '{"type":"lead.received","name":"Zoë"}',
  timeoutMs: 5000,
  ...fields,
});

const local = (options: { resolver?: Resolver; connect?: Connector } = {}) =>
  new WebhookHttpClient({ allowPrivate: true, userAgent: USER_AGENT, resolver: noLookups, ...options });

describe('WebhookHttpClient', () => {
  it('POSTs the body with its headers, content-length and user-agent, and reads a 2xx answer', async () => {
    const server = await serve((_request, response) => response.writeHead(201, { 'content-type': 'text/plain' }).end('thanks'));
    const answer = await local().send(post(`http://127.0.0.1:${server.port}/hooks/leads?x=1`));

    expect(answer).toEqual({ status: 201, error: null, retryAfterSeconds: null, body: 'thanks', latencyMs: expect.any(Number), address: '127.0.0.1' });
    expect(server.received).toEqual([
      {
        method: 'POST',
        url: '/hooks/leads?x=1',
        headers: expect.objectContaining({
          host: `127.0.0.1:${server.port}`,
          'content-type': 'application/json',
          'content-length': String(Buffer.byteLength('{"type":"lead.received","name":"Zoë"}')),
          'user-agent': USER_AGENT,
          'webhook-id': 'msg_1',
        }),
        body: '{"type":"lead.received","name":"Zoë"}',
      },
    ]);
  });

  it('sets content-length, user-agent and host itself, whatever the headers given say', async () => {
    const server = await serve((_request, response) => response.end());
    await local().send(post(`http://127.0.0.1:${server.port}/`, { headers: { 'Content-Length': '1', 'User-Agent': 'other', Host: 'elsewhere' } }));
    expect(server.received[0].headers).toMatchObject({ 'content-length': '38', 'user-agent': USER_AGENT, host: `127.0.0.1:${server.port}` });
  });

  it('does not follow a redirect: a 3xx is just its status', async () => {
    const server = await serve((_request, response) => response.writeHead(302, { location: '/elsewhere' }).end('moved'));
    const answer = await local().send(post(`http://127.0.0.1:${server.port}/hooks`));
    expect(answer).toMatchObject({ status: 302, error: null, body: 'moved' });
    expect(server.received.map((request) => request.url)).toEqual(['/hooks']);
  });

  it('keeps the first 4 KiB of the answer', async () => {
    const server = await serve((_request, response) => response.writeHead(500).end('x'.repeat(10_000)));
    const answer = await local().send(post(`http://127.0.0.1:${server.port}/`));
    expect(answer).toMatchObject({ status: 500, error: null, body: 'x'.repeat(4096) });
  });

  it('leaves out a character the 4 KiB limit cuts through', async () => {
    // 1 + 2 × 2047 = 4095 bytes, then the first byte of the next 'é' falls at byte 4096.
    const server = await serve((_request, response) => response.end('a' + 'é'.repeat(5000)));
    const answer = await local().send(post(`http://127.0.0.1:${server.port}/`));
    expect(answer.body).toBe('a' + 'é'.repeat(2047));
  });

  it('stops reading an endless answer and drops the connection, instead of waiting or holding it', async () => {
    let written = 0;
    const server = await serve((_request, response) => {
      const chunk = Buffer.alloc(16_384, 'y');
      const pump = () => {
        let more = true;
        while (more && !response.destroyed) {
          more = response.write(chunk);
          written += chunk.length;
        }
        if (!response.destroyed) response.once('drain', pump);
      };
      pump();
    });
    const { connect, sockets } = redirectingConnector(() => server.port);
    const answer = await local({ connect }).send(post(`http://127.0.0.1:${server.port}/`, { timeoutMs: 10_000 }));

    expect(answer).toMatchObject({ status: 200, error: null, body: 'y'.repeat(4096) });
    expect(answer.latencyMs).toBeLessThan(5000);
    expect(sockets[0].destroyed).toBe(true);
    // Read: 64 KiB and whatever the last read from the kernel brought with it.
    expect(sockets[0].bytesRead).toBeLessThan(256 * 1024);
    await Promise.all(server.closed);
    expect(written).toBeGreaterThan(64 * 1024);
  });

  it('gives up at the timeout when the server never answers, and closes the connection', async () => {
    const server = await serve(() => {});
    const answer = await local().send(post(`http://127.0.0.1:${server.port}/`, { timeoutMs: 300 }));
    expect(answer).toEqual({ status: null, error: 'timeout', retryAfterSeconds: null, body: '', latencyMs: expect.any(Number), address: '127.0.0.1' });
    expect(answer.latencyMs).toBeGreaterThanOrEqual(290);
    expect(answer.latencyMs).toBeLessThan(2000);
    await Promise.all(server.closed);
  });

  it('answers with the status and the body so far when the rest of the body does not come in time', async () => {
    const server = await serve((_request, response) => response.writeHead(200).write('partial'));
    const answer = await local().send(post(`http://127.0.0.1:${server.port}/`, { timeoutMs: 300 }));
    expect(answer).toMatchObject({ status: 200, error: null, body: 'partial' });
  });

  it('counts the name lookup and the connection in the timeout', async () => {
    const slowLookup = local({ resolver: () => new Promise(() => {}) });
    expect(await slowLookup.send(post('http://hooks.test/', { timeoutMs: 200 }))).toMatchObject({ status: null, error: 'timeout', address: null });

    const neverConnects = local({ resolver: answers({ 'hooks.test': ['127.0.0.1'] }), connect: () => new net.Socket() });
    expect(await neverConnects.send(post('http://hooks.test/', { timeoutMs: 200 }))).toMatchObject({ status: null, error: 'timeout', address: '127.0.0.1' });
  });

  it('reports a refused connection', async () => {
    const port = await closedPort();
    expect(await local().send(post(`http://127.0.0.1:${port}/`))).toMatchObject({ status: null, error: 'connection_refused', address: '127.0.0.1' });
  });

  it('reports a connection closed without an answer, and an answer that is not HTTP', async () => {
    const hangUp = net.createServer((socket) => socket.once('data', () => socket.destroy()));
    const garbage = net.createServer((socket) => socket.once('data', () => socket.end('garbage\r\n\r\n')));
    const [hangUpPort, garbagePort] = [await listen(hangUp), await listen(garbage)];
    expect(await local().send(post(`http://127.0.0.1:${hangUpPort}/`))).toMatchObject({ status: null, error: 'connection_reset' });
    expect(await local().send(post(`http://127.0.0.1:${garbagePort}/`))).toMatchObject({ status: null, error: 'invalid_response' });
  });

  it('reads Retry-After as seconds or as an HTTP date', async () => {
    const inNinetySeconds = new Date(Date.now() + 90_000).toUTCString();
    const retryAfter = ['120', inNinetySeconds, 'soon'];
    const server = await serve((_request, response) => response.writeHead(503, { 'retry-after': retryAfter.shift()! }).end());
    const client = local();
    const url = `http://127.0.0.1:${server.port}/`;

    expect(await client.send(post(url))).toMatchObject({ status: 503, retryAfterSeconds: 120 });
    const dated = await client.send(post(url));
    expect(dated.retryAfterSeconds).toBeGreaterThanOrEqual(88);
    expect(dated.retryAfterSeconds).toBeLessThanOrEqual(90);
    expect(await client.send(post(url))).toMatchObject({ status: 503, retryAfterSeconds: null });
  });

  it('reports a name that does not resolve, or resolves to nothing', async () => {
    const client = local({ resolver: answers({ 'empty.test': [] }) });
    expect(await client.send(post('https://nowhere.test/'))).toMatchObject({ status: null, error: 'dns_failure', address: null });
    expect(await client.send(post('https://empty.test/'))).toMatchObject({ status: null, error: 'dns_failure', address: null });
  });

  it('returns a header value it cannot send as an error, and closes the connection it opened', async () => {
    const server = await serve((_request, response) => response.end());
    const answer = await local().send(post(`http://127.0.0.1:${server.port}/`, { headers: { 'x-bad': 'a\r\nb' } }));
    expect(answer).toMatchObject({ status: null, error: 'network_error: ERR_INVALID_CHAR' });
    await Promise.all(server.closed);
    expect(server.received).toHaveLength(0);
  });

  it('refuses a metadata address even with private targets allowed', async () => {
    const client = local({ resolver: answers({ 'metadata.test': ['169.254.169.254'] }), connect: () => new net.Socket() });
    expect(await client.send(post('http://metadata.test/latest/meta-data/'))).toMatchObject({ status: null, error: 'address_not_allowed: metadata' });
  });

  it('refuses a URL it cannot parse or whose scheme is not allowed', async () => {
    expect(await local().send(post('not a url'))).toMatchObject({ status: null, error: 'invalid_url' });
    expect(await local().send(post('ftp://127.0.0.1/'))).toMatchObject({ status: null, error: 'scheme_not_allowed' });
  });

  describe('with private targets refused', () => {
    const client = (options: { resolver?: Resolver; connect?: Connector }) =>
      new WebhookHttpClient({ allowPrivate: false, userAgent: USER_AGENT, resolver: noLookups, ...options });

    it('refuses loopback, whether named literally or by a name, without connecting', async () => {
      const server = await serve((_request, response) => response.end());
      const refusing = client({ resolver: answers({ localhost: ['127.0.0.1'], 'mapped.test': ['::ffff:127.0.0.1'] }) });
      for (const url of [`https://127.0.0.1:${server.port}/`, `https://localhost:${server.port}/`]) {
        expect(await refusing.send(post(url))).toMatchObject({ status: null, error: 'address_not_allowed: loopback', address: null });
      }
      expect(await refusing.send(post(`https://mapped.test:${server.port}/`))).toMatchObject({ error: 'address_not_allowed: ipv4-mapped loopback' });
      expect(await refusing.send(post(`http://127.0.0.1:${server.port}/`))).toMatchObject({ error: 'scheme_not_allowed' });
      expect(server.connections).toBe(0);
    });

    it('connects to the public address it checked, with the URL host as the TLS server name and Host', async () => {
      const server = await serve((_request, response) => response.writeHead(204).end());
      const { connect, targets } = redirectingConnector(() => server.port);
      const answer = await client({ resolver: answers({ 'hooks.example.com': [PUBLIC] }), connect }).send(post('https://hooks.example.com/leads'));

      expect(answer).toMatchObject({ status: 204, error: null, address: PUBLIC });
      expect(targets).toEqual([{ address: PUBLIC, family: 4, port: 443, servername: 'hooks.example.com' }]);
      expect(server.received[0]).toMatchObject({ url: '/leads', headers: expect.objectContaining({ host: 'hooks.example.com' }) });
    });

    it('skips the refused addresses a name resolves to and connects only to an allowed one', async () => {
      const server = await serve((_request, response) => response.end('ok'));
      const { connect, targets } = redirectingConnector(() => server.port);
      const resolver = answers({ 'mixed.example.com': ['10.0.0.7', '::1', PUBLIC, '169.254.169.254'] });
      const answer = await client({ resolver, connect }).send(post('https://mixed.example.com:8443/'));

      expect(answer).toMatchObject({ status: 200, address: PUBLIC });
      expect(targets).toEqual([{ address: PUBLIC, family: 4, port: 8443, servername: 'mixed.example.com' }]);
    });

    it('tries the allowed addresses in order until one connects', async () => {
      const [server, refusedPort] = [await serve((_request, response) => response.end('ok')), await closedPort()];
      const { connect, targets } = redirectingConnector((target) => (target.address === PUBLIC ? refusedPort : server.port));
      const answer = await client({ resolver: answers({ 'two.example.com': [PUBLIC, PUBLIC_2] }), connect }).send(post('https://two.example.com/'));

      expect(answer).toMatchObject({ status: 200, address: PUBLIC_2 });
      expect(targets.map((target) => target.address)).toEqual([PUBLIC, PUBLIC_2]);
      expect(server.received).toHaveLength(1);
    });

    it('checks, at each attempt, the very address it connects to (DNS rebinding finds nothing to rebind)', async () => {
      const server = await serve((_request, response) => response.end('ok'));
      const { connect, targets } = redirectingConnector(() => server.port);
      const lookups: string[] = [];
      const rebinding: Resolver = async (hostname) => {
        lookups.push(hostname);
        return [{ address: lookups.length === 1 ? PUBLIC : '127.0.0.1', family: 4 }];
      };
      const sender = client({ resolver: rebinding, connect });

      expect(await sender.send(post('https://rebind.example.com/'))).toMatchObject({ status: 200, address: PUBLIC });
      expect(await sender.send(post('https://rebind.example.com/'))).toMatchObject({ status: null, error: 'address_not_allowed: loopback', address: null });
      expect(lookups).toEqual(['rebind.example.com', 'rebind.example.com']);
      expect(targets.map((target) => target.address)).toEqual([PUBLIC]);
      expect(server.connections).toBe(1);
    });
  });

  describe('over TLS', () => {
    it('verifies the certificate for the URL host', async () => {
      const server = await serve((_request, response) => response.end('secure'), true);
      const client = local({ resolver: answers({ 'hooks.test': ['127.0.0.1'], 'other.test': ['127.0.0.1'] }), connect: socketConnector({ ca: TEST_CERT }) });

      expect(await client.send(post(`https://hooks.test:${server.port}/`))).toMatchObject({ status: 200, error: null, body: 'secure' });
      expect(await client.send(post(`https://other.test:${server.port}/`))).toMatchObject({ status: null, error: 'tls_error: ERR_TLS_CERT_ALTNAME_INVALID' });
      expect(await client.send(post(`https://127.0.0.1:${server.port}/`))).toMatchObject({ status: null, error: 'tls_error: ERR_TLS_CERT_ALTNAME_INVALID' });
      expect(server.received).toHaveLength(1);
    });

    it('trusts only the system authorities by default', async () => {
      const server = await serve((_request, response) => response.end(), true);
      const client = local({ resolver: answers({ 'hooks.test': ['127.0.0.1'] }) });
      expect(await client.send(post(`https://hooks.test:${server.port}/`))).toMatchObject({ status: null, error: 'tls_error: DEPTH_ZERO_SELF_SIGNED_CERT' });
      expect(server.received).toHaveLength(0);
    });

    it('reports a server that does not speak TLS as a TLS error', async () => {
      const server = await serve((_request, response) => response.end());
      const answer = await local().send(post(`https://127.0.0.1:${server.port}/`));
      expect(answer).toMatchObject({ status: null, address: '127.0.0.1' });
      expect(answer.error).toMatch(/^tls_error: /);
    });
  });
});

describe('parseRetryAfter', () => {
  const now = Date.parse('2026-11-27T12:00:00Z');

  it('reads delay seconds', () => {
    expect(parseRetryAfter('0', now)).toBe(0);
    expect(parseRetryAfter('120', now)).toBe(120);
    expect(parseRetryAfter(' 30 ', now)).toBe(30);
  });

  it('reads an IMF-fixdate as the seconds until then, 0 when past', () => {
    expect(parseRetryAfter('Fri, 27 Nov 2026 12:01:30 GMT', now)).toBe(90);
    expect(parseRetryAfter('Fri, 27 Nov 2026 11:00:00 GMT', now)).toBe(0);
  });

  it('ignores what is absent or not valid', () => {
    for (const value of [
      undefined,
      '',
      'soon',
      '-5',
      '1.5',
      '1e3',
      '0x10',
      'Friday, 27-Nov-26 12:01:30 GMT',
      '2026-11-27T12:01:30Z',
      'Fri, 27 Nov 2026 12:01:30 UTC',
    ]) {
      expect(parseRetryAfter(value, now)).toBeNull();
    }
  });
});
