/** @system the built service and the CLI as processes */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GENEROUS_LIMITS, ServerProcess, freePort, startServer } from './support/server-process.js';
import { TestDatabase, freshDatabase } from './support/test-app.js';
import { type CliOptions, runCli, runCliOnTerminal } from './support/child-output.js';
import { confirmByMail, until } from './support/recipient-steps.js';
import { SmtpSink } from './support/smtp-sink.js';

// `leads notify …` (issue 34, /docs/notifications), run as its own process against the built service's recipients API
// (/api/v1/notification-recipients), with operator clients made by `npm run clients:create` and a real SMTP server.

interface Client {
  client_id: string;
  client_secret: string;
  scope: string;
}

interface Recipient {
  id: string;
  email: string;
  mode: string;
  language: string;
  include_personal_data: boolean;
  status: string;
}

let work: string;
let configDir: string;
let leads: string;
let database: TestDatabase;
let server: ServerProcess;
let manager: Client;
let reader: Client;
let sink: SmtpSink;
const secretsKey = randomBytes(32).toString('base64');

const cli = () => ({ leads, home: work, configDir });
const run = (args: string[], options?: CliOptions) => runCli(cli(), args, options);

/** `npm run clients:create`, as the service's operator runs it (the same database settings as the service). */
function createClient(name: string, scope: string): Client {
  const output = execFileSync(process.execPath, ['dist/src/oauth/operator-clients.command.js', 'create', '--name', name, '--scope', scope], {
    env: { PATH: process.env.PATH, LOG_LEVEL: 'warn', PUBLIC_BASE_URL: server.baseUrl, SECRETS_KEY: secretsKey, ...database.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return JSON.parse(output.toString().trim().split('\n').pop()!) as Client;
}

async function listed(): Promise<Recipient[]> {
  const result = await run(['notify', 'list']);
  expect(result.code).toBe(0);
  return (JSON.parse(result.stdout) as { data: Recipient[] }).data;
}

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'leads-cli-notify-'));
  configDir = join(work, 'config');
  leads = join(work, 'leads');
  database = await freshDatabase();
  sink = await SmtpSink.start();
  const port = await freePort();
  server = await startServer(
    { ...GENEROUS_LIMITS, LOG_LEVEL: 'info', PUBLIC_BASE_URL: `http://127.0.0.1:${port}`, SECRETS_KEY: secretsKey, SMTP_URL: sink.url, ...database.env },
    port,
  );
  execFileSync('sh', ['-c', `curl -fsSL ${server.baseUrl}/cli/leads -o "${leads}" && chmod +x "${leads}"`]);
  manager = createClient('CLI notify e2e', 'notifications:manage');
  reader = createClient('CLI notify reader e2e', 'leads:read');
  const login = await run(['login', '--client-id', manager.client_id], { input: `${manager.client_secret}\n` });
  expect(login).toMatchObject({ code: 0, stdout: expect.stringContaining(`logged in as ${manager.client_id} (scopes: notifications:manage)`) });
});

afterAll(async () => {
  await server?.stop();
  await database?.drop();
  await sink?.close();
  rmSync(work, { recursive: true, force: true });
});

describe('leads notify', () => {
  it('names its commands in the help, and refuses bad arguments before asking the service', async () => {
    const help = await run(['notify', '--help']);
    expect(help.code).toBe(0);
    for (const command of ['add <email>', 'list', 'test <id>', 'remove <id>', '--no-personal-data', 'notifications:manage'])
      expect(help.stdout).toContain(command);
    expect((await run(['--help'])).stdout).toContain('notify <command>');

    expect(await run(['notify'])).toMatchObject({ code: 1, stderr: expect.stringContaining('notify needs a command: add, list, test, remove') });
    expect(await run(['notify', 'frob'])).toMatchObject({ code: 1, stderr: expect.stringContaining('unknown notify command "frob"') });
    expect(await run(['notify', 'add'])).toMatchObject({ code: 1, stderr: expect.stringContaining('notify add needs an e-mail address') });
    expect(await run(['notify', 'add', 'a@example.com', '--mode', 'weekly'])).toMatchObject({
      code: 1,
      stderr: expect.stringContaining('--mode must be immediate or daily_digest'),
    });
    expect(await run(['notify', 'add', 'a@example.com', '--language', 'fr'])).toMatchObject({
      code: 1,
      stderr: expect.stringContaining('--language must be pt-BR or en'),
    });
    expect(await run(['notify', 'list', '--mode', 'immediate'])).toMatchObject({
      code: 1,
      stderr: expect.stringContaining('notify list does not take --mode'),
    });
    expect(await run(['notify', 'remove'])).toMatchObject({ code: 1, stderr: expect.stringContaining('notify remove needs a recipient id') });
    expect(await listed()).toEqual([]);
  });

  it('adds a recipient (pending until it confirms), lists it, and removes it', async () => {
    const added = await run(['notify', 'add', 'Vendas@Example.com']);
    expect(added.code).toBe(0);
    const recipient = JSON.parse(added.stdout) as Recipient;
    expect(recipient).toMatchObject({ email: 'Vendas@example.com', mode: 'immediate', language: 'pt-BR', include_personal_data: true, status: 'pending' });

    const digest = JSON.parse(
      (await run(['notify', 'add', 'diretoria@example.com', '--mode', 'daily_digest', '--language', 'en', '--no-personal-data'])).stdout,
    ) as Recipient;
    expect(digest).toMatchObject({ mode: 'daily_digest', language: 'en', include_personal_data: false, status: 'pending' });
    expect((await listed()).map((row) => row.id).sort()).toEqual([recipient.id, digest.id].sort());

    // The same address again is the service's problem, told as such.
    const again = await run(['notify', 'add', 'vendas@example.com']);
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(/^error: [a-z_]+ \(HTTP 409\): /);

    const table = await runCliOnTerminal(cli(), ['notify', 'list'], { columns: 200 });
    expect(table.stdout).toMatch(/id\s+status\s+mode\s+language\s+personal_data\s+email/);
    expect(table.stdout).toContain(`${digest.id}  pending`);

    const removed = await runCliOnTerminal(cli(), ['notify', 'remove', recipient.id]);
    expect(removed.stdout).toContain(`removed notification recipient ${recipient.id}`);
    expect((await listed()).map((row) => row.id)).toEqual([digest.id]);
    expect(await run(['notify', 'remove', recipient.id])).toMatchObject({ code: 5, stderr: expect.stringMatching(/\(HTTP 404\)/) });
  });

  it('test: a pending recipient gets no test e-mail, and the CLI says why; once confirmed, it gets one', async () => {
    const recipient = JSON.parse((await run(['notify', 'add', 'novo@example.com'])).stdout) as Recipient;
    const refused = await run(['notify', 'test', recipient.id]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/^error: notification_recipient_not_confirmed \(HTTP 409\): /);

    await confirmByMail(server, sink, 'novo@example.com');
    expect((await listed()).find((row) => row.id === recipient.id)?.status).toBe('confirmed');
    const sent = await runCliOnTerminal(cli(), ['notify', 'test', recipient.id]);
    expect(sent.stdout).toMatch(new RegExp(`queued a test e-mail to ${recipient.id} \\(msg_`));
    const mail = await until('the test e-mail', () => sink.to('novo@example.com')[1]);
    expect(mail.parsed.subject).toBe('Teste: avisos de novos leads');
  });

  it('a login without notifications:manage is told which scope it lacks', async () => {
    const other = join(work, 'reader-config');
    const asReader = (args: string[], input?: string) => runCli({ leads, home: work, configDir: other }, args, { input });
    expect((await asReader(['login', '--client-id', reader.client_id], `${reader.client_secret}\n`)).code).toBe(0);
    const refused = await asReader(['notify', 'list']);
    expect(refused.code).toBe(3);
    expect(refused.stderr).toContain(
      `the operator login ${reader.client_id} cannot manage e-mail notifications: log in with a client that has the notifications:manage scope`,
    );
  });
});
