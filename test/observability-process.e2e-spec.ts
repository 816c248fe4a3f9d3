/** @system observability from the built service (issue 37): OTLP traces that continue the caller's, a webhook that carries them on, a real Prometheus scraping the metrics */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freshDatabase, type TestDatabase } from './support/database.js';
import { eventually } from './support/eventually.js';
import { clientsCommand } from './support/operator-clients.js';
import { freePort, startServer, type ServerProcess } from './support/server-process.js';
import { itIf } from './support/skips.js';
import { WebhookReceiver } from './support/webhook-receiver.js';

interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: { key: string; value: Record<string, unknown> }[];
}

/** An OTLP/HTTP collector in the test: it keeps the spans of every JSON export it receives on /v1/traces. */
async function otlpReceiver(): Promise<{ server: Server; url: string; spans: OtlpSpan[]; bodies: string[] }> {
  const spans: OtlpSpan[] = [];
  const bodies: string[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      if (req.url === '/v1/traces' && req.headers['content-type'] === 'application/json') {
        bodies.push(body);
        for (const resource of JSON.parse(body).resourceSpans ?? []) for (const scope of resource.scopeSpans ?? []) spans.push(...(scope.spans ?? []));
      }
      res.writeHead(200, { 'Content-Type': 'application/json' }).end('{}');
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, spans, bodies };
}

const CALLER_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const CALLER_SPAN = '00f067aa0ba902b7';
const EMAIL = `rastreada.${process.pid}@empresa.example.com.br`;

describe('observability of the built service', () => {
  let database: TestDatabase;
  let server: ServerProcess;
  let otlp: Awaited<ReturnType<typeof otlpReceiver>>;
  let receiver: WebhookReceiver;
  let metricsPort: number;

  beforeAll(async () => {
    database = await freshDatabase('sqlite');
    otlp = await otlpReceiver();
    receiver = await WebhookReceiver.start();
    metricsPort = await freePort();
    server = await startServer({
      ...database.env,
      LOG_FORMAT: 'json',
      METRICS_PORT: String(metricsPort),
      OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
      OTEL_BSP_SCHEDULE_DELAY: '100',
      OTEL_SERVICE_NAME: 'leads-e2e',
      WEBHOOKS_ALLOW_PRIVATE: 'true',
      WEBHOOK_POLL_INTERVAL: '50ms',
    });
  }, 60_000);
  afterAll(async () => {
    await server?.stop();
    await receiver?.close();
    otlp?.server.close();
    await database?.drop();
  });

  it("exports spans over OTLP that continue the caller's traceparent, down to the statements and the webhook it sends", async () => {
    const made = await clientsCommand(['create', '--name', 'observability', '--scope', 'webhooks:manage'], database.env);
    expect(made.status).toBe(0);
    const token = await fetch(`${server.baseUrl}/oauth2/token`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'client_credentials', client_id: made.last!.client_id, client_secret: made.last!.client_secret }),
    }).then((res) => res.json() as Promise<{ access_token: string }>);
    const endpoint = await fetch(`${server.baseUrl}/api/v1/webhooks`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${token.access_token}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ url: receiver.url }),
    });
    expect(endpoint.status).toBe(201);

    const res = await fetch(`${server.baseUrl}/api/v1/lead`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', traceparent: `00-${CALLER_TRACE}-${CALLER_SPAN}-01` },
      body: JSON.stringify({ nome: 'Maria Rastreada', email: EMAIL, telefone: '+55 11 98765-4321' }),
    });
    expect(res.status).toBe(201);

    // The request's server span: a child of the caller's, named by its route.
    const request = await eventually(() => otlp.spans.find((span) => span.traceId === CALLER_TRACE && span.kind === 2), 15_000);
    expect(request).toMatchObject({ name: 'POST /api/v1/lead', parentSpanId: CALLER_SPAN });
    expect(request.attributes).toContainEqual({ key: 'http.response.status_code', value: { intValue: 201 } });
    // Its statements, as children in the same trace, with placeholders where the values were.
    const insert = await eventually(() =>
      otlp.spans.find(
        (span) =>
          span.traceId === CALLER_TRACE &&
          span.kind === 3 &&
          span.attributes.some((a) => a.key === 'db.query.text' && /INSERT INTO "leads"/.test(String(a.value.stringValue))),
      ),
    );
    expect(insert.attributes).toContainEqual({ key: 'db.system.name', value: { stringValue: 'sqlite' } });

    // The webhook carries the trace on: the receiver's own spans can join it.
    const [hook] = await receiver.waitFor(1, 15_000);
    expect(hook.headers.traceparent).toMatch(new RegExp(`^00-${CALLER_TRACE}-[0-9a-f]{16}-01$`));
    const delivery = await eventually(() => otlp.spans.find((span) => span.traceId === CALLER_TRACE && span.name === 'outbox deliver webhook'), 15_000);
    expect(delivery.attributes).toContainEqual({ key: 'outbox.outcome', value: { stringValue: 'succeeded' } });
    expect(hook.headers.traceparent).toContain(delivery.spanId);

    // The service's name from OTEL_SERVICE_NAME; the lead's address and telephone in no span.
    expect(otlp.bodies.join('')).toContain('"stringValue":"leads-e2e"');
    expect(otlp.bodies.join('')).not.toContain(EMAIL);
    expect(otlp.bodies.join('')).not.toContain('98765');
    // The request's log line names its trace.
    const line = server
      .output()
      .split('\n')
      .filter((text) => text.startsWith('{'))
      .map((text) => JSON.parse(text) as Record<string, unknown>)
      .find((entry) => entry.msg === 'request completed' && (entry.req as { path?: string }).path === '/api/v1/lead');
    expect(line).toMatchObject({ trace_id: CALLER_TRACE });
  }, 60_000);

  itIf('promtool')(
    'is scraped by a real Prometheus, whose query API returns the lead counter',
    async () => {
      const dir = mkdtempSync(join(tmpdir(), 'prometheus-'));
      const port = await freePort();
      writeFileSync(
        join(dir, 'prometheus.yml'),
        `global:\n  scrape_interval: 1s\nscrape_configs:\n  - job_name: leads\n    static_configs:\n      - targets: ['127.0.0.1:${metricsPort}']\n`,
      );
      let prometheus: ChildProcess | undefined;
      try {
        prometheus = spawn(
          'prometheus',
          [`--config.file=${join(dir, 'prometheus.yml')}`, `--storage.tsdb.path=${join(dir, 'data')}`, `--web.listen-address=127.0.0.1:${port}`],
          { stdio: 'ignore' },
        );
        const query = async (expression: string) => {
          try {
            const res = await fetch(`http://127.0.0.1:${port}/api/v1/query?query=${encodeURIComponent(expression)}`);
            const body = (await res.json()) as { data: { result: { value: [number, string] }[] } };
            return body.data.result.map((sample) => Number(sample.value[1]));
          } catch {
            return [];
          }
        };
        const before = await fetch(`${server.baseUrl}/api/v1/lead`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify({ nome: 'Maria Medida', email: `medida.${process.pid}@empresa.example.com.br` }),
        });
        expect(before.status).toBe(201);
        const [up] = await eventually(async () => ((await query('up{job="leads"}'))[0] === 1 ? [1] : undefined), 30_000);
        expect(up).toBe(1);
        const [leads] = await eventually(async () => {
          const values = await query('sum(leads_received_total{job="leads",lead_channel="api",verdict="accepted"})');
          return values[0] >= 2 ? values : undefined;
        }, 30_000);
        expect(leads).toBeGreaterThanOrEqual(2);
      } finally {
        prometheus?.kill('SIGTERM');
        if (prometheus && prometheus.exitCode === null) await once(prometheus, 'exit');
        rmSync(dir, { recursive: true, force: true });
      }
    },
    60_000,
  );
});
