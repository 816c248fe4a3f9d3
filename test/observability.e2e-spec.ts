/** @database observability (issue 37): the metrics listener, what moves each metric, label cardinality, health's degraded state */
import { once } from 'node:events';
import { createServer, request as httpRequest, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { freePort } from '../scripts/free-port.mjs';
import { Lead } from '../src/leads/lead.entity.js';
import { MetricsServer } from '../src/telemetry/metrics.server.js';
import { expectContract } from './support/contract.js';
import { eventually } from './support/eventually.js';
import { promtoolCheck, scrape, type Sample, valueOf } from './support/metrics.js';
import { operatorToken } from './support/operator-token.js';
import { itIf } from './support/skips.js';
import { storedLead } from './support/stored-leads.js';
import { startTestApp, type TestApp } from './support/test-app.js';

const LEAD = { nome: 'Maria da Silva', email: 'maria@empresa.com.br', mensagem: 'Quero um orçamento.' };
const DAY_S = 86_400;

describe('observability: metrics and health', () => {
  let t: TestApp;
  let metricsUrl: string;
  /** A webhook endpoint's port, closed until the outbox test opens it. */
  let hookPort: number;

  beforeAll(async () => {
    hookPort = await freePort();
    t = await startTestApp({
      METRICS_PORT: '0',
      WEBHOOKS_ALLOW_PRIVATE: 'true',
      WEBHOOK_POLL_INTERVAL: '20ms',
      WEBHOOK_RETRY_SCHEDULE: Array(20).fill('1s').join(','),
      OUTBOX_DEGRADED_AFTER: '2s',
      RATE_LIMIT_REGISTRATION: '2/3600s',
    });
    const address = t.app.get(MetricsServer).address()!;
    metricsUrl = `http://127.0.0.1:${address.port}/metrics`;
  });
  afterAll(() => t.close());

  const samples = async (): Promise<Sample[]> => (await scrape(metricsUrl)).samples;
  /** How much each named series moved while `act` ran. */
  async function moved(act: () => Promise<unknown>, ...series: [string, Record<string, string>?][]): Promise<number[]> {
    const before = await samples();
    await act();
    const after = await samples();
    return series.map(([name, labels]) => valueOf(after, name, labels) - valueOf(before, name, labels));
  }
  let sent = 0;
  /** Each lead its own message: byte-identical ones from one address would be held by the burst rule. */
  const postLead = (headers: Record<string, string> = {}, body: object = { ...LEAD, mensagem: `${LEAD.mensagem} (${++sent})` }) =>
    t.http.post('/api/v1/lead').set(headers).send(body).then(expectContract);

  describe('the listener', () => {
    it('answers on loopback, on its own port, in the text format 0.0.4; the public port has no /metrics', async () => {
      const listener = t.app.get(MetricsServer).address()!;
      expect(listener.host).toBe('127.0.0.1');
      const { contentType, text } = await scrape(metricsUrl);
      expect(contentType).toBe('text/plain; version=0.0.4; charset=utf-8');
      expect(text).toContain('# TYPE http_server_request_duration_seconds histogram');
      expect((await t.http.get('/metrics')).status).toBe(404);
      expect((await fetch(metricsUrl.replace('/metrics', '/'))).status).toBe(404);
      const post = await fetch(metricsUrl, { method: 'POST' });
      expect([post.status, post.headers.get('allow')]).toEqual([405, 'GET, HEAD']);
    });

    itIf('promtool')('passes promtool check metrics on a real scrape after traffic', async () => {
      await postLead();
      await postLead({}, {});
      await t.http.get('/api/v1/health');
      const { text } = await scrape(metricsUrl);
      expect(promtoolCheck(text)).toBe('');
    });

    it("carries Node's own: event-loop delay, heap, GC", async () => {
      global.gc?.();
      const now = await samples();
      for (const name of ['nodejs_eventloop_lag_p99_seconds', 'nodejs_heap_size_used_bytes', 'process_cpu_seconds_total'])
        expect(now.some((sample) => sample.name === name)).toBe(true);
      expect((await scrape(metricsUrl)).text).toContain('# TYPE nodejs_gc_duration_seconds histogram');
    });
  });

  describe('what moves each metric', () => {
    it('leads_received_total by channel and verdict; requests by method, route template and status', async () => {
      const [api, form, cli, held, spam, created] = await moved(
        async () => {
          expect((await postLead()).status).toBe(201);
          expect((await postLead({ Origin: 'https://www.example.com.br' })).status).toBe(201);
          expect((await postLead({ 'User-Agent': 'leads-cli/1.0.0 (node v20)' })).status).toBe(201);
          expect((await postLead({}, { ...LEAD, email: 'maria@mailinator.com', mensagem: 'Descartável.' })).status).toBe(201);
          expect((await postLead({ 'Form-Trap': 'http://spam.example' })).status).toBe(201);
        },
        ['leads_received_total', { lead_channel: 'api', verdict: 'accepted' }],
        ['leads_received_total', { lead_channel: 'form', verdict: 'accepted' }],
        ['leads_received_total', { lead_channel: 'cli', verdict: 'accepted' }],
        ['leads_received_total', { verdict: 'held' }],
        ['leads_received_total', { verdict: 'spam' }],
        ['http_server_request_duration_seconds_count', { http_request_method: 'POST', http_route: '/api/v1/lead', http_response_status_code: '201' }],
      );
      expect([api, form, cli, held, spam, created]).toEqual([1, 1, 1, 1, 1, 5]);
    });

    it('leads_received_total{lead_channel="mcp"} and an MCP refusal in leads_refused_total', async () => {
      const call = (args: object) =>
        t.http
          .post('/mcp')
          .set({ Accept: 'application/json, text/event-stream', 'Content-Type': 'application/json' })
          .send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'submit_lead', arguments: args } }));
      const [stored, refused] = await moved(
        async () => {
          expect((await call({ ...LEAD, mensagem: 'Pelo MCP.' })).status).toBe(200);
          expect((await call({ nome: 'x' })).status).toBe(200);
        },
        ['leads_received_total', { lead_channel: 'mcp' }],
        ['leads_refused_total', { code: 'validation_failed' }],
      );
      expect([stored, refused]).toEqual([1, 1]);
    });

    it('leads_refused_total by problem code, never for another route', async () => {
      const [invalid, malformed, all] = await moved(
        async () => {
          expect((await postLead({}, { nome: '' })).status).toBe(422);
          expect((await t.http.post('/api/v1/lead').set('Content-Type', 'application/json').send('{"nome":')).status).toBe(400);
          expect((await t.http.post('/api/v1/sandbox').send({})).status).toBe(422);
        },
        ['leads_refused_total', { code: 'validation_failed' }],
        ['leads_refused_total', { code: 'malformed_json' }],
        ['leads_refused_total'],
      );
      expect([invalid, malformed, all]).toEqual([1, 1, 2]);
    });

    it('rate_limit_refusals_total by tier; auth_failures_total by kind', async () => {
      const [registration, token, client] = await moved(
        async () => {
          const statuses = [];
          for (let i = 0; i < 3; i++) statuses.push((await t.http.post('/api/v1/agent/identity').send({ type: 'anonymous' })).status);
          expect(statuses).toEqual([200, 200, 429]);
          expect((await t.http.get('/api/v1/leads').set('Authorization', 'Bearer not-a-token')).status).toBe(401);
          const refused = await t.http
            .post('/oauth2/token')
            .type('form')
            .send({ grant_type: 'client_credentials', client_id: 'op_nobody', client_secret: 'wrong' });
          expect(refused.status).toBe(401);
        },
        ['rate_limit_refusals_total', { tier: 'registration' }],
        ['auth_failures_total', { kind: 'invalid_token' }],
        ['auth_failures_total', { kind: 'invalid_client' }],
      );
      expect([registration, token, client]).toEqual([1, 1, 1]);
    });

    it('auth_failures_total{kind="verification_code"}: a wrong code counts once, from the API (a problem) and from a page (its form again)', async () => {
      const started = await t.http.post('/api/v1/privacy/requests').send({ type: 'access', email: 'codigo@pessoa.example.com.br' }).then(expectContract);
      expect(started.status).toBe(202);
      const id = started.body.id as string;
      // The code is six random digits: one in a million is 000000, and then this test says so rather than passing.
      const [api] = await moved(
        async () => expect((await t.http.post(`/api/v1/privacy/requests/${id}/verify`).send({ code: '000000' }).then(expectContract)).status).toBe(400),
        ['auth_failures_total', { kind: 'verification_code' }],
      );
      const [fromPage] = await moved(async () => {
        const res = await t.http.post(`/privacy/requests/${id}/verify`).type('form').send('code=000000').then(expectContract);
        expect(res.status).toBe(400);
        expect(res.text).toContain('tentativa');
      }, ['auth_failures_total', { kind: 'verification_code' }]);
      expect([api, fromPage]).toEqual([1, 1]);
    });

    it('exports_running while an export streams, and back to 0 when it ends', async () => {
      // 15 MB of CSV: more than the loopback socket buffers hold, so the export waits for a client that does not read.
      const leads = Array.from({ length: 3000 }, (_, i) => storedLead(i, { mensagem: 'm'.repeat(5000) }));
      for (let start = 0; start < leads.length; start += 200) await t.dataSource.getRepository(Lead).insert(leads.slice(start, start + 200));
      const reader = await operatorToken(t, 'leads:export');
      const port = await publicPort();
      const res = await new Promise<IncomingMessage>((resolve, reject) =>
        httpRequest({ host: '127.0.0.1', port, path: '/api/v1/leads/export?format=csv', headers: { Authorization: `Bearer ${reader}` } }, resolve)
          .on('error', reject)
          .end(),
      );
      expect(res.statusCode).toBe(200);
      expect(valueOf(await samples(), 'exports_running')).toBe(1);
      res.resume();
      await once(res, 'end');
      await eventually(async () => (valueOf(await samples(), 'exports_running') === 0 ? true : undefined));
    });

    it("data_subject_requests_open, the oldest one's age and the next due date", async () => {
      const res = await t.http.post('/api/v1/privacy/requests').send({ type: 'access', email: 'titular@pessoa.example.com.br' }).then(expectContract);
      expect(res.status).toBe(202);
      expect(valueOf(await samples(), 'data_subject_requests_open')).toBe(0);
      // Verified and not completed: what a failure between the two steps leaves, and what the alert is for.
      const verifiedAt = Date.now() - 14 * DAY_S * 1000;
      await t.dataSource.query(`UPDATE data_subject_requests SET status = 'verified', verified_at = ${param(1)}, due_at = ${param(2)} WHERE id = ${param(3)}`, [
        verifiedAt,
        verifiedAt + 15 * DAY_S * 1000,
        res.body.id,
      ]);
      const now = await samples();
      expect(valueOf(now, 'data_subject_requests_open')).toBe(1);
      expect(valueOf(now, 'data_subject_requests_oldest_open_age_seconds')).toBeGreaterThanOrEqual(14 * DAY_S);
      const due = valueOf(now, 'data_subject_requests_next_due_seconds');
      expect(due).toBeGreaterThan(DAY_S - 60);
      expect(due).toBeLessThanOrEqual(DAY_S);
      await t.dataSource.query(`UPDATE data_subject_requests SET status = 'completed', completed_at = ${param(1)} WHERE id = ${param(2)}`, [
        Date.now(),
        res.body.id,
      ]);
      expect(valueOf(await samples(), 'data_subject_requests_open')).toBe(0);
    });
  });

  it('keeps the series count flat whatever paths, ids and methods clients send', async () => {
    // Node's own series come and go with what the process does (a GC kind, a kind of handle), not with what clients send.
    const series = async () =>
      (await samples()).filter(({ name }) => !/^(nodejs|process)_/.test(name)).map(({ name, labels }) => `${name}${JSON.stringify(labels)}`);
    const send = async (from: number, to: number) => {
      const port = await publicPort();
      const paths = (i: number) => [
        `/nothing/${i}/${'x'.repeat(i % 7)}`,
        `/api/v1/leads/0190${String(i).padStart(4, '0')}-0000-7000-8000-000000000000`,
        `/api/v1/leads?q=${i}`,
      ];
      let next = from;
      const worker = async () => {
        while (next < to) {
          const i = next++;
          const path = paths(i)[i % 3];
          await fetch(`http://127.0.0.1:${port}${path}`, { method: i % 11 === 0 ? 'PROPFIND' : 'GET' }).then((res) => res.arrayBuffer());
        }
      };
      await Promise.all(Array.from({ length: 16 }, worker));
    };
    await send(0, 300);
    const before = await series();
    await send(300, 10_000);
    expect(await series()).toEqual(before);
  }, 120_000);

  it('the outbox: pending, oldest age, outcomes and delivery time; health degraded, then ok again', async () => {
    const manager = await operatorToken(t, 'webhooks:manage');
    const endpoint = await t.http
      .post('/api/v1/webhooks')
      .set('Authorization', `Bearer ${manager}`)
      .send({ url: `http://127.0.0.1:${hookPort}/hook` });
    expect(endpoint.status).toBe(201);
    const before = await samples();
    expect((await postLead()).status).toBe(201);
    // The receiver's port is closed: the attempt fails and is retried.
    await eventually(async () =>
      valueOf(await samples(), 'outbox_deliveries_total', { channel: 'webhook', outcome: 'retry' }) >
      valueOf(before, 'outbox_deliveries_total', { channel: 'webhook', outcome: 'retry' })
        ? true
        : undefined,
    );
    const health = await eventually(async () => {
      const res = await t.http.get('/api/v1/health').then(expectContract);
      return res.body.status === 'degraded' ? res : undefined;
    });
    expect(health.status).toBe(200);
    expect(health.body.reasons).toEqual(['outbox_backlog']);
    expect(health.body.outbox.webhook).toEqual({ pending: 1, oldest_pending_age_seconds: expect.any(Number) });
    expect(health.body.outbox.webhook.oldest_pending_age_seconds).toBeGreaterThanOrEqual(2);
    expect(health.body.outbox.email).toEqual({ pending: 0, oldest_pending_age_seconds: null });
    const backlog = await samples();
    expect(valueOf(backlog, 'outbox_pending', { channel: 'webhook' })).toBe(1);
    expect(valueOf(backlog, 'outbox_oldest_pending_age_seconds', { channel: 'webhook' })).toBeGreaterThanOrEqual(2);
    expect(valueOf(backlog, 'outbox_pending', { channel: 'email' })).toBe(0);

    // The receiver comes up: the next retry succeeds, and health is ok again.
    const receiver: Server = createServer((req, res) => req.resume().on('end', () => res.writeHead(204).end()));
    receiver.listen(hookPort, '127.0.0.1');
    await once(receiver, 'listening');
    try {
      const ok = await eventually(async () => {
        const res = await t.http.get('/api/v1/health').then(expectContract);
        return res.body.status === 'ok' ? res : undefined;
      }, 15_000);
      expect(ok.body.reasons).toBeUndefined();
      expect(ok.body.outbox.webhook).toEqual({ pending: 0, oldest_pending_age_seconds: null });
      const after = await samples();
      const delta = (name: string, labels: Record<string, string>) => valueOf(after, name, labels) - valueOf(before, name, labels);
      expect(delta('outbox_deliveries_total', { channel: 'webhook', outcome: 'success' })).toBe(1);
      expect(delta('outbox_delivery_duration_seconds_count', { channel: 'webhook' })).toBe(1);
      expect(delta('outbox_delivery_duration_seconds_sum', { channel: 'webhook' })).toBeGreaterThanOrEqual(2);
      expect(valueOf(after, 'outbox_pending', { channel: 'webhook' })).toBe(0);
      expect(valueOf(after, 'outbox_oldest_pending_age_seconds', { channel: 'webhook' })).toBe(0);
    } finally {
      receiver.closeAllConnections();
      receiver.close();
    }
  }, 30_000);

  /** The app's own port: what raw clients (an export that is not read, fetch) connect to. */
  async function publicPort(): Promise<number> {
    const server = t.app.getHttpServer() as Server;
    if (!server.listening) await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return (server.address() as AddressInfo).port;
  }

  /** `$n` on PostgreSQL, `?` on SQLite. */
  function param(n: number): string {
    return t.config.databaseUrl ? `$${n}` : '?';
  }
});
