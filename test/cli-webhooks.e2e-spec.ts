/** @system the built service and the CLI as processes */
import { spawn, execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Webhook } from 'standardwebhooks';
import { GENEROUS_LIMITS, ServerProcess, freePort, startServer } from './support/server-process.js';
import { TestDatabase, freshDatabase } from './support/test-app.js';
import { type ChildOutput, type CliOptions, runCli } from './support/child-output.js';

// `leads webhooks …` (docs/decisions/0027-webhooks-outbox.md), run as its own process against the built service, with
// an operator client made by `npm run clients:create` and a receiver on 127.0.0.1 (WEBHOOKS_ALLOW_PRIVATE=true).

interface Client {
  client_id: string;
  client_secret: string;
  scope: string;
}

interface Endpoint {
  id: string;
  url: string;
  events: string[];
  description: string | null;
  status: 'enabled' | 'disabled';
  disabled_reason: string | null;
  created_at: string;
  updated_at: string;
}

interface Attempt {
  message_id: string;
  event_type: string;
  attempt: number;
  attempted_at: string;
  outcome: 'succeeded' | 'failed' | 'skipped';
  status_code: number | null;
  error: string | null;
  latency_ms: number | null;
  response_body: string | null;
  next_attempt_at: string | null;
}

/** One request the receiver got: what a real receiver would verify. */
interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

const RFC3339 = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/;

let work: string;
let configDir: string;
let leads: string;
let database: TestDatabase;
let server: ServerProcess;
let manager: Client;
let reader: Client;
const secretsKey = randomBytes(32).toString('base64');

let receiver: Server;
let receiverUrl: string;
const received: Received[] = [];
/** How the receiver answers: a status code, or 'hang' (held until released). */
let answer: number | 'hang' = 200;
const held: ServerResponse[] = [];
/** Every signing secret the CLI printed: none may be stored or logged. */
const secrets: string[] = [];

const run = (args: string[], options?: CliOptions) => runCli({ leads, home: work, configDir }, args, options);

/** Runs the CLI on a pseudo-terminal (util-linux `script`) of `columns` columns; stdout and stderr arrive together. */
function runOnTerminal(args: string[], columns = 200): Promise<ChildOutput> {
  const command = `stty cols ${columns}; exec ${[leads, ...args].map((arg) => `'${arg.replace(/'/g, `'\\''`)}'`).join(' ')}`;
  return new Promise((resolve, reject) => {
    const child = spawn('script', ['-q', '-e', '-c', command, '/dev/null'], {
      env: { PATH: process.env.PATH, HOME: work, LEADS_CONFIG_DIR: configDir, TERM: 'dumb' },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout: stdout.replace(/\r\n/g, '\n'), stderr: '' }));
    child.stdin.end();
  });
}

/** `npm run clients:create`, as the service's operator runs it (the same database settings as the service). */
function createClient(name: string, scope: string): Client {
  const output = execFileSync(process.execPath, ['dist/src/oauth/operator-clients.command.js', 'create', '--name', name, '--scope', scope], {
    env: { PATH: process.env.PATH, LOG_LEVEL: 'warn', PUBLIC_BASE_URL: server.baseUrl, SECRETS_KEY: secretsKey, ...database.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return JSON.parse(output.toString().trim().split('\n').pop()!) as Client;
}

async function until<T>(what: string, check: () => T | undefined | Promise<T | undefined>, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Verifies a request as a receiver does, with the reference library; returns the parsed payload. */
const verify = (secret: string, request: Received) =>
  new Webhook(secret).verify(request.body, request.headers as Record<string, string>) as Record<string, unknown>;

function signedWith(secret: string, request: Received): boolean {
  try {
    verify(secret, request);
    return true;
  } catch {
    return false;
  }
}

/** What the receiver got of one message (its webhook-id), for the endpoint whose secret is given when several got it. */
const deliveriesOf = (messageId: string, secret?: string) =>
  received.filter((request) => request.headers['webhook-id'] === messageId && (secret === undefined || signedWith(secret, request)));

async function add(args: string[] = []): Promise<Endpoint & { secret: string }> {
  const result = await run(['webhooks', 'add', `${receiverUrl}/hooks`, ...args]);
  expect(result).toMatchObject({ code: 0, stderr: expect.stringContaining('shown only once') });
  const created = JSON.parse(result.stdout) as Endpoint & { secret: string };
  secrets.push(created.secret);
  return created;
}

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'leads-cli-webhooks-'));
  configDir = join(work, 'config');
  leads = join(work, 'leads');
  receiver = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      received.push({ path: req.url ?? '', headers: req.headers, body });
      if (answer === 'hang') held.push(res);
      else res.writeHead(answer, { 'Content-Type': 'text/plain' }).end(answer < 300 ? 'ok' : 'nope');
    });
  });
  const receiverPort = await freePort();
  await new Promise<void>((resolve) => receiver.listen(receiverPort, '127.0.0.1', resolve));
  receiverUrl = `http://127.0.0.1:${receiverPort}`;
  database = await freshDatabase();
  const port = await freePort();
  server = await startServer(
    {
      ...GENEROUS_LIMITS,
      LOG_LEVEL: 'info',
      PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
      WEBHOOKS_ALLOW_PRIVATE: 'true',
      SECRETS_KEY: secretsKey,
      ...database.env,
    },
    port,
  );
  execFileSync('sh', ['-c', `curl -fsSL ${server.baseUrl}/cli/leads -o "${leads}" && chmod +x "${leads}"`]);
  manager = createClient('CLI webhooks e2e', 'webhooks:manage');
  reader = createClient('CLI webhooks reader e2e', 'leads:read');
  const login = await run(['login', '--client-id', manager.client_id], { input: `${manager.client_secret}\n` });
  expect(login).toMatchObject({ code: 0, stdout: expect.stringContaining(`logged in as ${manager.client_id} (scopes: webhooks:manage)`) });
});

afterAll(async () => {
  for (const res of held.splice(0)) res.destroy();
  await server?.stop();
  await database?.drop();
  await new Promise((resolve) => receiver?.close(resolve));
  rmSync(work, { recursive: true, force: true });
});

describe('help', () => {
  it('leads --help and leads webhooks --help list the commands', async () => {
    const global = await run(['--help']);
    expect(global.stdout).toContain('  webhooks <command>');
    const own = await run(['webhooks', '--help']);
    expect(own.code).toBe(0);
    expect(own.stdout).toContain('Usage: leads webhooks <command>');
    for (const command of ['add <url>', 'list', 'test <id>', 'deliveries <id>', 'rotate <id>', 'disable <id>', 'enable <id>', 'replay <id>', 'remove <id>']) {
      expect(own.stdout).toContain(`  ${command}`);
    }
    expect(await run(['webhooks'])).toMatchObject({ code: 1, stderr: expect.stringContaining('webhooks needs a command') });
    expect(await run(['webhooks', 'frob'])).toMatchObject({ code: 1, stderr: expect.stringContaining('unknown webhooks command "frob"') });
    expect(await run(['webhooks', 'list', '--event', 'x'])).toMatchObject({ code: 1, stderr: expect.stringContaining('webhooks list does not take --event') });
    expect(await run(['webhooks', 'test'])).toMatchObject({ code: 1, stderr: expect.stringContaining('webhooks test needs an endpoint id') });
    expect(await run(['webhooks', 'test', 'x', '--wait', 'soon'])).toMatchObject({ code: 1, stderr: expect.stringContaining('--wait must be') });
    expect(await run(['webhooks', 'replay', 'x'])).toMatchObject({ code: 1, stderr: expect.stringContaining('needs --since') });
  });
});

describe('add and list', () => {
  it('add prints the endpoint and its secret (JSON off a terminal, a note on stderr); list never shows a secret', async () => {
    const result = await run(['webhooks', 'add', `${receiverUrl}/hooks`, '--event', 'lead.received', '--description', 'CRM e2e', '--verbose']);
    expect(result.code).toBe(0);
    const created = JSON.parse(result.stdout) as Endpoint & { secret: string };
    secrets.push(created.secret);
    expect(created).toEqual({
      id: expect.any(String),
      url: `${receiverUrl}/hooks`,
      events: ['lead.received'],
      description: 'CRM e2e',
      status: 'enabled',
      disabled_reason: null,
      created_at: expect.stringMatching(RFC3339),
      updated_at: expect.stringMatching(RFC3339),
      secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/=]+$/),
    });
    expect(result.stderr).toContain('POST /api/v1/webhooks -> 201');
    expect(result.stderr).toContain('the secret in this answer is shown only once');
    expect(result.stderr).not.toContain(created.secret);

    const list = await run(['webhooks', 'list']);
    expect(list.code).toBe(0);
    const body = JSON.parse(list.stdout) as { data: Endpoint[] };
    const { secret, ...shown } = created;
    expect(body.data).toContainEqual(shown);
    expect(body.data.every((endpoint) => !('secret' in endpoint))).toBe(true);
    expect(list.stdout).not.toContain(secret.slice('whsec_'.length));
  });

  it('on a terminal: a readable block with the secret, once, and a table', async () => {
    const result = await runOnTerminal(['webhooks', 'add', `${receiverUrl}/terminal`, '--description', 'on a terminal']);
    expect(result.code).toBe(0);
    const secret = /^ {2}(whsec_\S+)$/m.exec(result.stdout)?.[1];
    expect(secret).toBeDefined();
    secrets.push(secret!);
    expect(result.stdout.split(secret!).length).toBe(2);
    expect(result.stdout).toMatch(/^created webhook endpoint \S+\n {2}url: +http:\/\/127\.0\.0\.1:\d+\/terminal\n/);
    expect(result.stdout).toContain('signing secret (shown only once: keep it now, it cannot be shown again):');

    const table = await runOnTerminal(['webhooks', 'list']);
    expect(table.code).toBe(0);
    const lines = table.stdout.split('\n').filter((line) => line.trim() !== '');
    expect(lines[0]).toMatch(/^id +status +url +events +disabled_reason$/);
    expect(lines.some((line) => line.includes('/terminal') && line.includes('enabled'))).toBe(true);
    expect(table.stdout).not.toContain('whsec_');
  });
});

describe('test, deliveries, rotate', () => {
  let endpoint: Endpoint & { secret: string };

  beforeAll(async () => {
    endpoint = await add(['--description', 'tested']);
  });

  it('test sends a signed webhook.test and reports its first attempt (exit 0)', async () => {
    const result = await run(['webhooks', 'test', endpoint.id]);
    expect(result.code).toBe(0);
    const outcome = JSON.parse(result.stdout) as { message_id: string; event_type: string; attempt: Attempt };
    expect(outcome).toMatchObject({
      message_id: expect.stringMatching(/^msg_[0-9a-f]{32}$/),
      event_type: 'webhook.test',
      attempt: { attempt: 1, outcome: 'succeeded', status_code: 200, error: null, latency_ms: expect.any(Number), next_attempt_at: null },
    });
    const [request] = deliveriesOf(outcome.message_id);
    expect(request.path).toBe('/hooks');
    expect(request.headers['content-type']).toBe('application/json');
    expect(request.headers['user-agent']).toMatch(/^leads-service\/\S+ \(webhooks\)$/);
    expect(verify(endpoint.secret, request)).toMatchObject({ type: 'webhook.test' });
    expect(() => verify(`whsec_${randomBytes(24).toString('base64')}`, request)).toThrow();

    const onTerminal = await runOnTerminal(['webhooks', 'test', endpoint.id]);
    expect(onTerminal.code).toBe(0);
    expect(onTerminal.stdout).toMatch(/^delivered webhook\.test msg_[0-9a-f]{32}: HTTP 200 in \d+ ms$/m);
  });

  it('a failing receiver is exit 6, no attempt in time exit 7; --wait 0 does not wait', async () => {
    answer = 500;
    try {
      const failed = await run(['webhooks', 'test', endpoint.id]);
      expect(failed.code).toBe(6);
      expect(JSON.parse(failed.stdout)).toMatchObject({ attempt: { attempt: 1, outcome: 'failed', status_code: 500 } });
      expect(failed.stderr).toMatch(/^error: the first attempt to deliver msg_[0-9a-f]{32} failed: HTTP 500 in \d+ ms; next attempt at \S+\n$/);
    } finally {
      answer = 200;
    }

    answer = 'hang';
    try {
      const late = await run(['webhooks', 'test', endpoint.id, '--wait', '1']);
      expect(late.code).toBe(7);
      const body = JSON.parse(late.stdout) as { message_id: string; attempt: null };
      expect(body.attempt).toBeNull();
      expect(late.stderr).toContain(`no attempt to deliver ${body.message_id} within 1 s`);
    } finally {
      answer = 200;
      for (const res of held.splice(0)) res.writeHead(200).end('late');
    }

    const queued = await run(['webhooks', 'test', endpoint.id, '--wait', '0']);
    expect(queued.code).toBe(0);
    const body = JSON.parse(queued.stdout) as { message_id: string; event_type: string };
    expect(body).toEqual({ message_id: expect.stringMatching(/^msg_/), event_type: 'webhook.test' });
    await until('the queued test', () => deliveriesOf(body.message_id)[0]);
  });

  it('deliveries: the log, newest first, one message with --message, every page with --all', async () => {
    const result = await run(['webhooks', 'deliveries', endpoint.id]);
    expect(result.code).toBe(0);
    const page = JSON.parse(result.stdout) as { data: Attempt[]; next_cursor: string | null };
    expect(page.data.length).toBeGreaterThanOrEqual(3);
    const times = page.data.map((attempt) => attempt.attempted_at);
    expect([...times].sort().reverse()).toEqual(times);
    expect(page.data.find((attempt) => attempt.status_code === 500)).toMatchObject({ event_type: 'webhook.test', outcome: 'failed', attempt: 1 });

    const messageId = page.data[0].message_id;
    const one = JSON.parse((await run(['webhooks', 'deliveries', endpoint.id, '--message', messageId])).stdout) as { data: Attempt[] };
    expect(one.data.length).toBeGreaterThanOrEqual(1);
    expect(one.data.every((attempt) => attempt.message_id === messageId)).toBe(true);

    // Retries may add attempts meanwhile: --all has at least the first page's, each once, newest first.
    const all = await run(['webhooks', 'deliveries', endpoint.id, '--limit', '1', '--all']);
    expect(all.code).toBe(0);
    const document = JSON.parse(all.stdout) as { data: Attempt[]; next_cursor: null };
    expect(document.next_cursor).toBeNull();
    expect(document.data).toEqual(expect.arrayContaining(page.data));
    expect(new Set(document.data.map((attempt) => `${attempt.message_id} ${attempt.attempt}`)).size).toBe(document.data.length);
    const allTimes = document.data.map((attempt) => attempt.attempted_at);
    expect([...allTimes].sort().reverse()).toEqual(allTimes);

    const table = await runOnTerminal(['webhooks', 'deliveries', endpoint.id, '--limit', '2']);
    expect(table.code).toBe(0);
    const lines = table.stdout.split('\n').filter((line) => line.trim() !== '');
    expect(lines[0]).toMatch(/^attempted_at +message_id +event_type +attempt +outcome +status\/error +latency_ms +next_attempt_at$/);
    expect(lines[2]).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ +msg_[0-9a-f]{32} +webhook\.test +\d+ +(succeeded|failed) /);
    expect(lines[4]).toMatch(new RegExp(`^more: leads webhooks deliveries ${endpoint.id} --cursor \\S+ --limit 2$`));
  });

  it('rotate prints the new secret once; both secrets sign until the previous one expires', async () => {
    const result = await run(['webhooks', 'rotate', endpoint.id]);
    expect(result.code).toBe(0);
    const rotated = JSON.parse(result.stdout) as { id: string; secret: string; previous_secret_expires_at: string };
    secrets.push(rotated.secret);
    expect(rotated).toEqual({ id: endpoint.id, secret: expect.stringMatching(/^whsec_/), previous_secret_expires_at: expect.stringMatching(RFC3339) });
    expect(rotated.secret).not.toBe(endpoint.secret);
    expect(Date.parse(rotated.previous_secret_expires_at) - Date.now()).toBeGreaterThan(23 * 3600 * 1000);
    expect(result.stderr).toContain('shown only once');

    const test = JSON.parse((await run(['webhooks', 'test', endpoint.id])).stdout) as { message_id: string };
    const [request] = deliveriesOf(test.message_id);
    expect(String(request.headers['webhook-signature']).split(' ')).toHaveLength(2);
    expect(verify(rotated.secret, request)).toMatchObject({ type: 'webhook.test' });
    expect(verify(endpoint.secret, request)).toMatchObject({ type: 'webhook.test' });

    const onTerminal = await runOnTerminal(['webhooks', 'rotate', endpoint.id]);
    expect(onTerminal.code).toBe(0);
    const secret = /^ {2}(whsec_\S+)$/m.exec(onTerminal.stdout)?.[1];
    expect(secret).toBeDefined();
    secrets.push(secret!);
    expect(onTerminal.stdout).toContain(`new signing secret for ${endpoint.id} (shown only once`);
    expect(onTerminal.stdout).toMatch(/the previous secret keeps signing too \(a second signature\) until \S+/);
  });
});

describe('disable, enable, replay, remove', () => {
  let endpoint: Endpoint & { secret: string };

  beforeAll(async () => {
    endpoint = await add(['--event', 'lead.received']);
  });

  it('disable skips what it would receive (a test is exit 6); enable sends again', async () => {
    const disabled = await run(['webhooks', 'disable', endpoint.id]);
    expect(disabled.code).toBe(0);
    expect(JSON.parse(disabled.stdout)).toMatchObject({ id: endpoint.id, status: 'disabled' });
    const skipped = await run(['webhooks', 'test', endpoint.id]);
    expect(skipped.code).toBe(6);
    expect(JSON.parse(skipped.stdout)).toMatchObject({ attempt: { outcome: 'skipped', error: 'endpoint_disabled' } });
    expect(skipped.stderr).toMatch(/^error: the first attempt to deliver msg_\w+ was skipped: endpoint_disabled/);

    const enabled = await runOnTerminal(['webhooks', 'enable', endpoint.id]);
    expect(enabled.code).toBe(0);
    expect(enabled.stdout).toContain(`enabled ${endpoint.id} (${receiverUrl}/hooks)`);
    expect((await run(['webhooks', 'test', endpoint.id])).code).toBe(0);
  });

  it('replay sends the messages of a period again', async () => {
    const since = new Date(Date.now() - 1000).toISOString();
    const res = await fetch(`${server.baseUrl}/api/v1/lead`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ nome: 'Ana Webhook', email: 'ana.webhook@example.com' }),
    });
    expect(res.status).toBe(201);
    const lead = (await res.json()) as { id: string };
    // Every endpoint that takes lead.received gets the message; this one's are those its secret signs.
    const first = await until('the lead.received', () => received.find((request) => request.body.includes(lead.id) && signedWith(endpoint.secret, request)));
    expect(verify(endpoint.secret, first)).toMatchObject({ type: 'lead.received', data: { id: lead.id } });
    const messageId = String(first.headers['webhook-id']);
    const replayed = await run(['webhooks', 'replay', endpoint.id, '--since', since]);
    expect(replayed.code).toBe(0);
    expect((JSON.parse(replayed.stdout) as { replayed: number }).replayed).toBeGreaterThanOrEqual(1);
    await until('the replayed lead.received', () => (deliveriesOf(messageId, endpoint.secret).length >= 2 ? true : undefined));
    const again = deliveriesOf(messageId, endpoint.secret).at(-1)!;
    expect(verify(endpoint.secret, again)).toMatchObject({ type: 'lead.received', data: { id: lead.id } });
  });

  it('remove deletes the endpoint and its log', async () => {
    const removed = await run(['webhooks', 'remove', endpoint.id]);
    expect(removed.code).toBe(0);
    expect(JSON.parse(removed.stdout)).toEqual({ id: endpoint.id, removed: true });
    const list = JSON.parse((await run(['webhooks', 'list'])).stdout) as { data: Endpoint[] };
    expect(list.data.map((entry) => entry.id)).not.toContain(endpoint.id);
    const gone = await run(['webhooks', 'deliveries', endpoint.id]);
    expect(gone.code).not.toBe(0);
    expect(gone.stderr).toMatch(/^error: \w+ \(HTTP 404\): /);

    const other = await add();
    const onTerminal = await runOnTerminal(['webhooks', 'remove', other.id]);
    expect(onTerminal).toMatchObject({ code: 0, stdout: `removed webhook endpoint ${other.id}, with its deliveries and their log\n` });
  });
});

describe('scope and secrets', () => {
  it('a login without webhooks:manage is exit 3 with what to do', async () => {
    const result = await run(['webhooks', 'list'], { env: { LEADS_CLIENT_ID: reader.client_id, LEADS_CLIENT_SECRET: reader.client_secret } });
    expect(result.code).toBe(3);
    expect(result.stderr).toMatch(/^error: insufficient_scope \(HTTP 403\): /);
    expect(result.stderr).toContain(`the operator login ${reader.client_id} cannot manage webhooks: log in with a client that has the webhooks:manage scope`);
    const json = await run(['webhooks', 'add', `${receiverUrl}/x`, '--json'], {
      env: { LEADS_CLIENT_ID: reader.client_id, LEADS_CLIENT_SECRET: reader.client_secret },
    });
    expect(json.code).toBe(3);
    expect(JSON.parse(json.stdout)).toMatchObject({ status: 403, code: 'insufficient_scope' });
    const nobody = await run(['webhooks', 'list'], { env: { LEADS_CONFIG_DIR: join(work, 'nobody') } });
    expect(nobody).toMatchObject({ code: 3, stderr: expect.stringContaining('run `leads login --client-id <id>` first') });
  });

  it('no secret is stored in the credentials file or written to the service log', () => {
    expect(secrets.length).toBeGreaterThanOrEqual(5);
    const credentials = join(configDir, 'credentials.json');
    expect(statSync(credentials).mode & 0o777).toBe(0o600);
    const stored = readFileSync(credentials, 'utf8');
    const log = server.output();
    for (const secret of secrets) {
      const key = secret.slice('whsec_'.length);
      expect(stored).not.toContain(key);
      expect(log).not.toContain(key);
    }
  });
});
