/** @system `leads register --claim` against the built service: the user code and page shown, the owner confirms, the CLI stores the claimed identity */
import { spawn } from 'node:child_process';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeJwt } from 'jose';
import { outputOf } from './support/child-output.js';
import { eventually } from './support/eventually.js';
import { codeOf } from './support/inbox-session.js';
import { GENEROUS_LIMITS, ServerProcess, freePort, startServer } from './support/server-process.js';
import { SmtpSink } from './support/smtp-sink.js';
import { TestDatabase, freshDatabase } from './support/test-app.js';

let work: string;
let leads: string;
let database: TestDatabase;
let server: ServerProcess;
let sink: SmtpSink;

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'leads-cli-claim-'));
  leads = join(work, 'leads');
  database = await freshDatabase();
  sink = await SmtpSink.start();
  const port = await freePort();
  server = await startServer({ ...GENEROUS_LIMITS, LOG_LEVEL: 'warn', PUBLIC_BASE_URL: `http://127.0.0.1:${port}`, SMTP_URL: sink.url, ...database.env }, port);
  execFileSync('sh', ['-c', `curl -fsSL ${server.baseUrl}/cli/leads -o "${leads}" && chmod +x "${leads}"`]);
});

afterAll(async () => {
  await server?.stop();
  await sink?.close();
  await database?.drop();
  rmSync(work, { recursive: true, force: true });
});

it('register --claim shows the user code and the page, waits for the owner, and keeps the claimed identity', async () => {
  const email = 'dona.cli@empresa.example.com.br';
  const env = { PATH: process.env.PATH, HOME: work, LEADS_CONFIG_DIR: join(work, 'config') };
  const child = spawn(leads, ['register', '--claim', email, '--json'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (chunk) => (stderr += chunk));
  const done = outputOf(child);
  // What the owner is told on the terminal: the page and the user code.
  const [, uri, userCode] = await eventually(() => /open (\S+)\nand type the code ([A-Z]{4}-[A-Z]{4})/.exec(stderr) ?? undefined);
  const code = codeOf((await eventually(() => sink.to(email)[0])).parsed.text!);
  const confirmed = await fetch(uri, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ user_code: userCode, email_code: code }),
  });
  expect(confirmed.status).toBe(200);
  const result = await done;
  expect(result.code).toBe(0);
  const answer = JSON.parse(result.stdout) as { identity_assertion: string; claimed: boolean; registration_type: string };
  expect(answer).toMatchObject({ claimed: true, registration_type: 'service_auth' });
  expect(decodeJwt(answer.identity_assertion)).toMatchObject({ email, email_verified: true });

  // The next command sends the claimed identity's token: the verified quota.
  const token = JSON.parse((await outputOf(spawn(leads, ['token', '--json'], { env, stdio: ['ignore', 'pipe', 'pipe'] }))).stdout) as { access_token: string };
  const lead = await fetch(`${server.baseUrl}/api/v1/lead`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${token.access_token}` },
    body: JSON.stringify({ nome: 'Ana Dona', email: 'ana@exemplo.com' }),
  });
  expect(lead.status).toBe(201);
  expect(lead.headers.get('ratelimit-policy')).toMatch(/^"verified_agent";/);
}, 60_000);
