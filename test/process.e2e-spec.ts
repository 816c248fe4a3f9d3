/** @system @database the built service as a process; its database settings in the logs, a table lost under it */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { PACKAGE_ROOT } from '../src/config/package-root.js';
import { LEADS_FORM_JS } from '../src/forms/forms.script.js';
import { freshDatabase } from './support/test-app.js';
import { SERVER_ENTRY, startServer } from './support/server-process.js';

const FULL_GC = fileURLToPath(new URL('./support/full-gc.cjs', import.meta.url));
const REDIS_URL = process.env.TEST_REDIS_URL;

/** These tests run the built server (`npm test` builds first) as a real process: crashes, signals and logs. */
describe('the service as a process', () => {
  let database: Awaited<ReturnType<typeof freshDatabase>>;
  beforeAll(async () => {
    database = await freshDatabase();
  });
  afterAll(() => database.drop());

  const lead = (i: number) => ({
    nome: `Pessoa ${i}`,
    email: `pessoa${i}@exemplo.com.br`,
    telefone: `+55 11 9${String(i).padStart(4, '0')}-0000`,
    mensagem: 'Quero saber mais.',
  });
  const postLead = (baseUrl: string, i: number, headers: Record<string, string> = {}) =>
    fetch(`${baseUrl}/api/v1/lead`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'Idempotency-Key': `crash-${i}`, ...headers },
      body: JSON.stringify(lead(i)),
    });

  it('keeps every acknowledged lead across kill -9 and finds each again by its Idempotency-Key', async () => {
    const first = await startServer(database.env);
    const acknowledged = new Map<number, string>();
    // Concurrent writers; the process is killed the moment the last answer arrives.
    const results = await Promise.all(
      Array.from({ length: 40 }, async (_, i) => {
        const res = await postLead(first.baseUrl, i);
        if (res.status === 201) acknowledged.set(i, ((await res.json()) as { id: string }).id);
        return res.status;
      }),
    );
    first.child.kill('SIGKILL');
    await first.exit;
    expect(results.every((status) => status === 201)).toBe(true);

    const second = await startServer(database.env);
    try {
      for (const [i, id] of acknowledged) {
        const replay = await postLead(second.baseUrl, i);
        expect(replay.status).toBe(201);
        expect(((await replay.json()) as { id: string }).id).toBe(id);
      }
      const stats = await fetch(`${second.baseUrl}/api/v1/health`).then((r) => r.json());
      expect(stats).toMatchObject({ status: 'ok', checks: { database: 'up' } });
    } finally {
      second.child.kill('SIGKILL');
      await second.exit;
    }
  });

  it("labels a lead from curl and from Node.js fetch channel api, and one with a browser page's headers form (issue 33)", async () => {
    const server = await startServer(database.env);
    try {
      const url = `${server.baseUrl}/api/v1/lead`;
      const body = (nome: string) => JSON.stringify({ nome, email: 'canal@exemplo.com.br' });
      // Real curl, with its own User-Agent and headers.
      const curl = spawnSync('curl', ['-sS', '-X', 'POST', url, '-H', 'Content-Type: application/json', '--data', body('Curl')], { encoding: 'utf8' });
      expect(curl.status).toBe(0);
      const viaFetch = await fetch(url, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: body('Fetch') });
      const viaPage = await fetch(url, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Origin: 'https://cliente.example', 'Sec-Fetch-Site': 'cross-site' },
        body: body('Page'),
      });
      const ids = [JSON.parse(curl.stdout).id, ((await viaFetch.json()) as { id: string }).id, ((await viaPage.json()) as { id: string }).id];
      const rows = await database.query<{ id: string; channel: string }>(`SELECT id, channel FROM leads WHERE id IN ('${ids.join("', '")}')`);
      expect(ids.map((id) => rows.find((row) => row.id === id)?.channel)).toEqual(['api', 'api', 'form']);
    } finally {
      server.child.kill('SIGKILL');
      await server.exit;
    }
  });

  it('finishes a request in flight on SIGTERM, then exits cleanly', async () => {
    const server = await startServer(database.env);
    const { port } = new URL(server.baseUrl);
    const body = JSON.stringify(lead(1000));
    const socket = connect(Number(port), '127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    let response = '';
    socket.on('data', (chunk) => (response += chunk));
    const closed = new Promise((resolve) => socket.once('close', resolve));
    // Send the headers and half of the body, signal, then the rest.
    socket.write(
      `POST /api/v1/lead HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body.slice(0, 20)}`,
    );
    await new Promise((resolve) => setTimeout(resolve, 200));
    server.child.kill('SIGTERM');
    await new Promise((resolve) => setTimeout(resolve, 200));
    socket.write(body.slice(20));
    await closed;
    expect(response).toMatch(/^HTTP\/1\.1 201 Created/);
    expect(await server.exit).toEqual([0, null]);
  });

  it.each(['SIGTERM', 'SIGINT'] as const)(
    'says in one line where it answers, on which database and whether with Redis, and in one line that %s stopped it; no credentials',
    async (signal) => {
      const env: Record<string, string> = { ...database.env };
      // A password in each URL (the test servers trust loopback, so an invented one still connects).
      const withPassword = (raw: string, invented: string) => {
        const url = new URL(raw);
        url.password ||= invented;
        return { url: url.toString(), password: decodeURIComponent(url.password) };
      };
      const secrets: string[] = [];
      if (env.DATABASE_URL) {
        const { url, password } = withPassword(env.DATABASE_URL, 'Db-Pass-6621');
        env.DATABASE_URL = url;
        secrets.push(password);
      }
      if (REDIS_URL) {
        const { url, password } = withPassword(REDIS_URL, 'Redis-Pass-6622');
        Object.assign(env, { REDIS_URL: url, REDIS_KEY_PREFIX: 'process-suite:' });
        secrets.push(password);
      }
      const server = await startServer(env);
      expect(await server.stop(signal)).toEqual([0, null]);
      const lines = server
        .output()
        .trim()
        .split('\n')
        // ioredis warns on stderr, in its own words, that this Redis takes no password.
        .filter((line) => !line.startsWith('[WARN] '))
        .map((line) => JSON.parse(line) as { level: number; context?: string; msg: string; req?: unknown });
      // Besides the request lines and Redis' own state line, exactly two: none of Nest's 60-odd start-up lines.
      const lifecycle = lines.filter((line) => line.req === undefined && line.context !== 'RateLimit');
      expect(lifecycle).toHaveLength(2);
      const [start, stop] = lifecycle;
      expect(start).toMatchObject({ level: 30, context: 'Server' });
      expect(start.msg).toContain(`(Node.js ${process.version}) listening on http://localhost:${new URL(server.baseUrl).port};`);
      const { hostname, port, pathname } = new URL(env.DATABASE_URL ?? 'postgres://unused');
      expect(start.msg).toContain(env.DATABASE_URL ? `database: PostgreSQL ${hostname}:${port}${pathname};` : `database: SQLite ${env.DATA_DIR}/leads.sqlite;`);
      expect(start.msg).toContain(REDIS_URL ? `Redis: ${new URL(REDIS_URL).host}` : 'Redis: not used');
      if (REDIS_URL) expect(start.msg).toContain('keys under "process-suite:"');
      // No SMTP_URL: the folder a new user finds the e-mail in.
      expect(start.msg).toContain(`; mail: .eml files in ${join(resolve(env.DATA_DIR ?? 'data'), 'mail')} (SMTP_URL not set)`);
      expect(stop).toMatchObject({ level: 30, context: 'Server', msg: expect.stringMatching(new RegExp(`^Stopped on ${signal} in \\d+ ms`)) });
      for (const secret of secrets) expect(server.output()).not.toContain(secret);
    },
  );

  it('announces KEEP_ALIVE_TIMEOUT in Keep-Alive (scenario 5 of the reliability suite times it)', async () => {
    const server = await startServer({ ...database.env, KEEP_ALIVE_TIMEOUT: '65' });
    try {
      const res = await fetch(`${server.baseUrl}/api/v1/health`);
      expect(res.headers.get('keep-alive')).toBe('timeout=65');
    } finally {
      await server.stop('SIGKILL');
    }
  });

  it('never writes e-mails, telephones, bearer, form or captcha tokens to its logs', async () => {
    const server = await startServer({ ...database.env, LOG_LEVEL: 'debug' });
    let formToken: string;
    try {
      const issued = await fetch(`${server.baseUrl}/forms/token`);
      expect(issued.status).toBe(200);
      formToken = ((await issued.json()) as { token: string }).token;
      const screening = { 'Form-Token': formToken, 'Form-Trap': 'trap-value-777', 'Captcha-Token': 'captcha-token-value-888' };
      expect((await postLead(server.baseUrl, 2000, screening)).status).toBe(201);
      expect((await postLead(server.baseUrl, 2001, { Authorization: 'Bearer secret-token-value-123' })).status).toBe(401);
      await fetch(`${server.baseUrl}/api/v1/sandbox?email=pessoa2000@exemplo.com.br`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ ...lead(2000), nome: '' }),
      });
    } finally {
      server.child.kill('SIGTERM');
      await server.exit;
    }
    const logs = server.output();
    expect(logs).toContain('"statusCode":201');
    expect(logs).toContain('"statusCode":422');
    expect(logs).toContain('"statusCode":401');
    expect(logs).toContain('"path":"/forms/token"');
    for (const secret of [
      'pessoa2000@exemplo.com.br',
      'pessoa2001@exemplo.com.br',
      '92000-0000',
      '+55 11',
      'secret-token-value-123',
      formToken,
      'trap-value-777',
      'captcha-token-value-888',
    ])
      expect(logs).not.toContain(secret);
    for (const line of logs.trim().split('\n')) expect(() => JSON.parse(line)).not.toThrow();
  });

  it.each([
    ['PORT', 'abc'],
    ['PUBLIC_BASE_URL', 'https://api.example.com/v1/'],
    ['DATABASE_URL', 'mysql://user:hunter2@db/x'],
    ['RATE_LIMIT_AGENT', '600 per minute'],
    ['API_DEPRECATIONS', '[{"path":"/api/v1","deprecation":"2027-01-01T00:00:00Z","sunset":"2026-01-01T00:00:00Z"}]'],
  ])('refuses to start when %s is invalid, naming the variable', (name, value) => {
    const result = spawnSync(process.execPath, [SERVER_ENTRY], { env: { PATH: process.env.PATH, [name]: value }, encoding: 'utf8', timeout: 15_000 });
    expect(result.status).toBe(1);
    expect(result.stderr).toContain(`Invalid configuration: ${name}`);
    expect(result.stderr).not.toContain('hunter2');
  });

  it('starts from the code cache the build trained (V8 accepts it for this bundle)', () => {
    // A fresh node through the launcher, as `npm start` runs it: jest's own module system is not in the way.
    const result = spawnSync(process.execPath, [SERVER_ENTRY, '--code-cache-rejected'], { encoding: 'utf8' });
    expect(result.stderr).toBe('');
    expect(result.stdout).toBe('false');
  });

  it('logs an unexpected error with a stack trace that names src/…ts lines (the build has source maps)', async () => {
    const broken = await freshDatabase();
    const server = await startServer({ ...broken.env, NODE_OPTIONS: `--require ${FULL_GC}` });
    try {
      // a full collection, and only then the error that needs the source map
      server.child.kill('SIGUSR2');
      for (let waited = 0; !server.output().includes('full-gc: collected') && waited < 10_000; waited += 50)
        await new Promise((resolve) => setTimeout(resolve, 50));
      expect(server.output()).toContain('full-gc: collected');
      // The table is taken away under the running service: its next insert fails in a way no handler expects.
      if (broken.kind === 'postgres') await broken.query('DROP TABLE leads');
      else {
        const db = new Database(join(broken.env.DATA_DIR, 'leads.sqlite'));
        db.exec('DROP TABLE leads');
        db.close();
      }
      const res = await postLead(server.baseUrl, 3000);
      expect(res.status).toBe(500);
      const { request_id } = (await res.json()) as { request_id: string };
      const loggedStack = () =>
        server
          .output()
          .split('\n')
          .flatMap((line) => {
            try {
              return [JSON.parse(line) as { msg?: string; requestId?: string; error?: { stack?: string } }];
            } catch {
              return [];
            }
          })
          .find((line) => line.msg === 'unexpected error' && line.requestId === request_id)?.error?.stack;
      // the line is written before the answer, but may reach this process after it
      for (let waited = 0; !loggedStack() && waited < 5000; waited += 50) await new Promise((resolve) => setTimeout(resolve, 50));
      const stack = loggedStack() ?? '';
      expect(stack).toContain('leads');
      // every frame is mapped: none names the bundle
      expect(stack).not.toContain('server.cjs');
      const frame = /\((\/[^()]+\/(src\/[^():]+\.ts)):(\d+):\d+\)$/m.exec(stack);
      expect(frame).not.toBeNull();
      const [, file, relative, line] = frame!;
      expect(file).toBe(join(PACKAGE_ROOT, relative));
      const lines = readFileSync(file, 'utf8').split('\n');
      expect(Number(line)).toBeLessThanOrEqual(lines.length);
      expect(lines[Number(line) - 1].trim()).not.toBe('');
    } finally {
      await server.stop('SIGKILL');
      await broken.drop();
    }
  });

  it('finds its own files from another working directory: the contract, GraphQL, the form script, Swagger UI, the CLI', async () => {
    const elsewhere = mkdtempSync(join(tmpdir(), 'leads-cwd-'));
    const server = await startServer(database.env, undefined, elsewhere);
    try {
      const get = (path: string) => fetch(`${server.baseUrl}${path}`);
      const contract = await get('/docs/openapi-leads.json');
      expect(contract.status).toBe(200);
      expect(((await contract.json()) as { openapi: string }).openapi).toMatch(/^3\.1\./);
      const schema = await get('/docs/schema.graphql');
      expect(await schema.text()).toBe(readFileSync(join(PACKAGE_ROOT, 'src/graphql/schema.graphql'), 'utf8'));
      const query = await fetch(`${server.baseUrl}/api/v1/graphql`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ query: '{ health { status } }' }),
      });
      expect(await query.json()).toEqual({ data: { health: { status: 'ok' } } });
      const form = await get('/forms/leads.js');
      // The script as the service writes it, with the lead fields in.
      expect(await form.text()).toBe(LEADS_FORM_JS);
      expect((await get('/docs/assets/swagger-ui.css')).status).toBe(200);
      const cli = await get('/cli/leads');
      expect(cli.status).toBe(200);
      expect(await cli.text()).toMatch(/^#!\/usr\/bin\/env node\n/);
      expect(readdirSync(elsewhere)).toEqual([]);
    } finally {
      await server.stop('SIGKILL');
      rmSync(elsewhere, { recursive: true, force: true });
    }
  });
});
