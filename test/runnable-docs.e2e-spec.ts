/** @system runs the docs' shell blocks against the built service */
import { execFileSync, spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Webhook } from 'standardwebhooks';
import { GENEROUS_LIMITS, ServerProcess, freePort, startServer } from './support/server-process.js';
import { TestDatabase, freshDatabase } from './support/database.js';
import { type ChildOutput, outputOf } from './support/child-output.js';

// The documentation's shell blocks, run as a reader copies them: each page's ```sh and ```bash blocks, in order, as one
// bash script under `set -euo pipefail`, against the built service (dist/server.mjs) and its database, in a folder of
// their own. A code block that opens with a comment naming a file (`// receiver.mjs: …`) is saved there first, as the
// page asks. Only BASE, SERVICE_DIR and RECEIVER_PORT come from outside, as the pages say.

const which = (command: string) => {
  try {
    return execFileSync('sh', ['-c', `command -v ${command}`], { encoding: 'utf8' }).trim();
  } catch {
    return '';
  }
};
const CURL = which('curl');
const JQ = which('jq');

const ENTITIES: Record<string, string> = { '&amp;': '&', '&lt;': '<', '&gt;': '>', '&quot;': '"', '&#39;': "'" };

/** The shell blocks of a page as the browser shows them: marked's `<pre><code class="language-sh">`, unescaped. */
function blocksOfHtml(html: string): string[] {
  return [...html.matchAll(/<pre><code class="language-(?:sh|bash)">([\s\S]*?)<\/code><\/pre>/g)].map(([, code]) =>
    code.replace(/&(?:amp|lt|gt|quot|#39);/g, (entity) => ENTITIES[entity]),
  );
}

function blocksOfJs(html: string): string[] {
  return [...html.matchAll(/<pre><code class="language-js">([\s\S]*?)<\/code><\/pre>/g)].map(([, code]) =>
    code.replace(/&(?:amp|lt|gt|quot|#39);/g, (entity) => ENTITIES[entity]),
  );
}

/** The files a page asks the reader to save: its JavaScript blocks whose first line is `// <file name>: …`. */
function filesOfHtml(html: string): Record<string, string> {
  return Object.fromEntries(
    blocksOfJs(html).flatMap((code) => {
      const name = /^\/\/ ([\w.-]+\.m?js): /.exec(code)?.[1];
      return name ? [[name, code]] : [];
    }),
  );
}

function blocksOfMarkdown(markdown: string): string[] {
  return [...markdown.matchAll(/^```(?:sh|bash)\n([\s\S]*?)^```$/gm)].map(([, code]) => code);
}

interface Run extends ChildOutput {
  /** The folder the script ran in: the files it wrote. */
  dir: string;
  /** The script's process group. */
  pid: number;
}

let database: TestDatabase;
let server: ServerProcess;
let scratch: string;
let bin: string;
/** The process groups of the scripts: what a script left running in the background (a receiver) is stopped with it. */
const groups: number[] = [];

interface RunOptions {
  env?: Record<string, string>;
  /** Files the page asks the reader to save in the folder first. */
  files?: Record<string, string>;
  /** This package's node_modules linked into the folder, for a page that has the reader install a package. */
  linkModules?: boolean;
}

async function runPage(path: string, blocksOf: (text: string) => string[], options: RunOptions = {}): Promise<Run> {
  const res = await fetch(`${server.baseUrl}${path}`);
  expect(res.status).toBe(200);
  const blocks = blocksOf(await res.text());
  expect(blocks.length).toBeGreaterThan(0);
  const dir = mkdtempSync(join(scratch, 'page-'));
  for (const [name, text] of Object.entries(options.files ?? {})) writeFileSync(join(dir, name), text);
  if (options.linkModules) symlinkSync(resolve('node_modules'), join(dir, 'node_modules'), 'dir');
  writeFileSync(join(dir, 'docs.sh'), ['set -euo pipefail', ...blocks].join('\n'));
  const child = spawn('bash', ['docs.sh'], {
    cwd: dir,
    env: {
      PATH: `${bin}:${process.env.PATH}`,
      HOME: dir,
      XDG_CONFIG_HOME: join(dir, '.config'),
      BASE: server.baseUrl,
      SERVICE_DIR: process.cwd(),
      LOG_LEVEL: 'warn',
      ...database.env,
      ...options.env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  groups.push(child.pid!);
  return { ...(await outputOf(child)), dir, pid: child.pid! };
}

/** Stops what a script left running. */
function stopGroup(pid: number): void {
  try {
    process.kill(-pid, 'SIGTERM');
  } catch {
    // nothing left
  }
}

/** The lines of a log file once `done` holds for them (or the deadline passes: the caller's expectation then fails). */
async function logWhen(file: string, done: (lines: string[]) => boolean): Promise<string[]> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const lines = existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean) : [];
    if (done(lines) || Date.now() > deadline) return lines;
    await sleep(100);
  }
}

/** Exit 0, or the script's output in the failure message. */
function expectSuccess(run: Run): void {
  expect({ code: run.code, stdout: run.stdout, stderr: run.stderr }).toEqual({ code: 0, stdout: run.stdout, stderr: run.stderr });
}

beforeAll(async () => {
  if (!CURL || !JQ) throw new Error(`the runnable docs need curl and jq on PATH (found curl "${CURL}", jq "${JQ}"); .ci/run installs jq`);
  scratch = mkdtempSync(join(tmpdir(), 'leads-runnable-docs-'));
  // `curl -s` exits 0 on a 4xx: this curl fails on any HTTP error (printing its body), unless the block asked for -f itself.
  bin = join(scratch, 'bin');
  mkdirSync(bin);
  writeFileSync(
    join(bin, 'curl'),
    `#!/usr/bin/env bash
for arg in "$@"; do
  if [[ "$arg" == --fail || "$arg" == --fail-with-body || "$arg" =~ ^-[A-Za-z]*f[A-Za-z]*$ ]]; then exec ${CURL} "$@"; fi
done
exec ${CURL} --fail-with-body "$@"
`,
  );
  chmodSync(join(bin, 'curl'), 0o755);
  database = await freshDatabase();
  const port = await freePort();
  server = await startServer(
    { ...GENEROUS_LIMITS, LOG_LEVEL: 'warn', PUBLIC_BASE_URL: `http://127.0.0.1:${port}`, WEBHOOKS_ALLOW_PRIVATE: 'true', ...database.env },
    port,
  );
}, 60_000);

afterAll(async () => {
  groups.forEach(stopGroup);
  await server?.stop();
  await database?.drop();
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

const RECEIVED_LEAD = /"id":\s*"[0-9a-f-]{36}",\s*"status":\s*"received"/;

describe('the shell blocks of the docs run verbatim, in order, in one bash session', () => {
  it.each([
    ['/docs/agents', blocksOfHtml],
    ['/auth.md', blocksOfMarkdown],
  ])(
    '%s: discovery, registration, token, a lead sent with it, revocation',
    async (path, blocksOf) => {
      const run = await runPage(path, blocksOf);
      expectSuccess(run);
      expect(run.stdout).toContain('"agent_auth"');
      expect(run.stdout).toMatch(RECEIVED_LEAD);
    },
    120_000,
  );

  it('/docs/quickstart: the sandbox, then a stored lead', async () => {
    const run = await runPage('/docs/quickstart', blocksOfHtml);
    expectSuccess(run);
    expect(run.stdout).toMatch(/"valid":\s*true/);
    expect(run.stdout).toMatch(RECEIVED_LEAD);
  }, 120_000);

  it('/docs/operators: a client from npm run clients:create, its token, the list, the export, and the CLI', async () => {
    const lead = await fetch(`${server.baseUrl}/api/v1/lead`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ nome: 'Leitura Operador', email: 'operators-page@example.com', origem: 'runnable-docs' }),
    });
    expect(lead.status).toBe(201);
    const run = await runPage('/docs/operators', blocksOfHtml);
    expectSuccess(run);
    // The list (jq .) and the CLI's table both show the lead; the export and the CLI's export are files.
    expect(run.stdout.match(/operators-page@example\.com/g)?.length).toBeGreaterThanOrEqual(2);
    const files = readdirSync(run.dir);
    expect(files).toEqual(expect.arrayContaining(['client.json', 'leads', 'leads.csv']));
    expect(files.some((file) => /^leads-.*\.csv$/.test(file))).toBe(true);
  }, 120_000);

  it.each([['node:crypto'], ['standardwebhooks']])(
    '/docs/webhooks: its receiver (verifying with %s) started, an endpoint for it, test messages verified, replay, rotation, changes, the CLI',
    async (verifier) => {
      const page = await fetch(`${server.baseUrl}/docs/webhooks`).then((res) => res.text());
      const files = filesOfHtml(page);
      expect(Object.keys(files)).toEqual(['receiver.mjs']);
      if (verifier === 'standardwebhooks') {
        // As the page says: verifyWebhook becomes the library's, installed beside the receiver.
        const library = blocksOfJs(page).find((code) => code.includes("from 'standardwebhooks'"))!;
        const plain = /^\/\*\*[^\n]*\*\/\nfunction verifyWebhook\([\s\S]*?\n\}\n/m;
        expect(files['receiver.mjs']).toMatch(plain);
        files['receiver.mjs'] = `${library}\n${files['receiver.mjs'].replace(plain, '')}`;
      }
      const port = await freePort();
      const run = await runPage('/docs/webhooks', blocksOfHtml, {
        env: { RECEIVER_PORT: String(port) },
        files,
        ...(verifier === 'standardwebhooks' && { linkModules: true }),
      });
      try {
        expectSuccess(run);
        expect(run.stdout).toMatch(/"replayed":\s*\d+/);
        expect(run.stdout).toMatch(/^204$/m);
        // The receiver verified the curl block's test message and the CLI's (each endpoint with its own secret).
        const log = join(run.dir, 'receiver.log');
        const verified = (lines: string[]) => lines.filter((line) => /^verified webhook\.test msg_\w+$/.test(line));
        const lines = await logWhen(log, (all) => verified(all).length >= 2);
        expect(verified(lines)).toHaveLength(2);
        const testMessage = /"message_id":\s*"(msg_\w+)"/.exec(run.stdout)?.[1];
        expect(lines).toContain(`verified webhook.test ${testMessage}`);

        // An event type it does not know, genuine: accepted (2xx); the same with a wrong signature: refused.
        const url = `http://127.0.0.1:${port}/hooks/leads`;
        const body = JSON.stringify({ type: 'lead.merged', timestamp: new Date().toISOString(), data: {} });
        const secret = readFileSync(join(run.dir, 'webhook-secret'), 'utf8').trim();
        // One moment for the signature and its header: read twice, a second's turn between them broke the signature.
        const signedAt = new Date();
        const headers = (signature: string) => ({
          'content-type': 'application/json',
          'webhook-id': 'msg_unknowntype',
          'webhook-timestamp': String(Math.floor(signedAt.getTime() / 1000)),
          'webhook-signature': signature,
        });
        const signature = new Webhook(secret).sign('msg_unknowntype', signedAt, body);
        const forged = await fetch(url, { method: 'POST', headers: headers(signature.replace(/.{4}$/, 'AAA=')), body });
        expect(forged.status).toBe(400);
        const unknown = await fetch(url, { method: 'POST', headers: headers(signature), body });
        expect(unknown.status).toBe(204);
        expect(await logWhen(log, (all) => all.some((line) => line.startsWith('verified lead.merged')))).toContain(
          'verified lead.merged msg_unknowntype, not handled',
        );
      } finally {
        stopGroup(run.pid);
      }
    },
    120_000,
  );

  it('/docs/notifications: a client from npm run clients:create, a recipient added (pending until it confirms) and listed, the CLI', async () => {
    const run = await runPage('/docs/notifications', blocksOfHtml);
    expectSuccess(run);
    expect(run.stdout).toMatch(/^pending$/m);
    expect(run.stdout).toMatch(/"status":\s*"pending",\s*"mode":\s*"immediate"/);
    expect(run.stdout).toMatch(/"email": "diretoria@example\.com",\s*"mode": "daily_digest",\s*"language": "en",\s*"include_personal_data": false/);
    expect(run.stdout).toMatch(/"removed": true/);
  }, 120_000);

  it('/docs/privacy: an access request with a client made for it', async () => {
    const run = await runPage('/docs/privacy', blocksOfHtml);
    expectSuccess(run);
    expect(run.stdout).toMatch(/"next_cursor":null,"data":\s*\[/);
  }, 120_000);
});
