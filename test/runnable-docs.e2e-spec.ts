/** @system runs the docs' shell blocks against the built service */
import { execFileSync, spawn } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GENEROUS_LIMITS, ServerProcess, freePort, startServer } from './support/server-process.js';
import { TestDatabase, freshDatabase } from './support/database.js';
import { WebhookReceiver } from './support/webhook-receiver.js';
import { type ChildOutput, outputOf } from './support/child-output.js';

// The documentation's shell blocks, run as a reader copies them: each page's ```sh and ```bash blocks, in order, as one
// bash script under `set -euo pipefail`, against the built service (dist/server.mjs) and its database, in a folder of
// their own. Only BASE, SERVICE_DIR and RECEIVER_URL come from outside, as the pages say.

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

function blocksOfMarkdown(markdown: string): string[] {
  return [...markdown.matchAll(/^```(?:sh|bash)\n([\s\S]*?)^```$/gm)].map(([, code]) => code);
}

interface Run extends ChildOutput {
  /** The folder the script ran in: the files it wrote. */
  dir: string;
}

let database: TestDatabase;
let server: ServerProcess;
let receiver: WebhookReceiver;
let scratch: string;
let bin: string;

async function runPage(path: string, blocksOf: (text: string) => string[]): Promise<Run> {
  const res = await fetch(`${server.baseUrl}${path}`);
  expect(res.status).toBe(200);
  const blocks = blocksOf(await res.text());
  expect(blocks.length).toBeGreaterThan(0);
  const dir = mkdtempSync(join(scratch, 'page-'));
  writeFileSync(join(dir, 'docs.sh'), ['set -euo pipefail', ...blocks].join('\n'));
  const child = spawn('bash', ['docs.sh'], {
    cwd: dir,
    env: {
      PATH: `${bin}:${process.env.PATH}`,
      HOME: dir,
      XDG_CONFIG_HOME: join(dir, '.config'),
      BASE: server.baseUrl,
      SERVICE_DIR: process.cwd(),
      RECEIVER_URL: receiver.url,
      LOG_LEVEL: 'warn',
      ...database.env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return { ...(await outputOf(child)), dir };
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
  receiver = await WebhookReceiver.start();
  database = await freshDatabase();
  const port = await freePort();
  server = await startServer(
    { ...GENEROUS_LIMITS, LOG_LEVEL: 'warn', PUBLIC_BASE_URL: `http://127.0.0.1:${port}`, WEBHOOKS_ALLOW_PRIVATE: 'true', ...database.env },
    port,
  );
}, 60_000);

afterAll(async () => {
  await server?.stop();
  await receiver?.close();
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

  it('/docs/webhooks: an endpoint for RECEIVER_URL, a test message delivered, replay, rotation, changes, the CLI', async () => {
    const before = receiver.received.length;
    const run = await runPage('/docs/webhooks', blocksOfHtml);
    expectSuccess(run);
    expect(run.stdout).toMatch(/"replayed":\s*\d+/);
    expect(run.stdout).toMatch(/^204$/m);
    // The curl block's test message and the CLI's, both delivered to the reader's receiver.
    const tests = receiver.received.slice(before).filter((request) => JSON.parse(request.body).type === 'webhook.test');
    expect(tests.length).toBeGreaterThanOrEqual(2);
  }, 120_000);

  it('/docs/privacy: an access request with a client made for it', async () => {
    const run = await runPage('/docs/privacy', blocksOfHtml);
    expectSuccess(run);
    expect(run.stdout).toMatch(/"leads":\s*\[/);
  }, 120_000);
});
