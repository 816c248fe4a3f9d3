/** @system npm run start:dev on a copy of the repository */
import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { freePort } from '../scripts/free-port.mjs';

/**
 * CONTRIBUTING.md's walkthrough, done as a new engineer would: `npm run start:dev` on a copy of the repository, then
 * every step the guide marks (`<!-- walkthrough: … -->` before a fenced block) applied to that copy as written, then
 * GET /api/v1/ping asked until the reloaded service answers. The time from the last edit to that answer is printed,
 * not asserted: on a shared machine it would flake. A step whose anchor no longer matches exactly one place fails.
 */

const ROOT = fileURLToPath(new URL('..', import.meta.url));
/** Not working files: the copy gets its own build and data, and a link to the installed packages. */
const NOT_COPIED = new Set(['.git', 'dist', 'node_modules', 'data', 'coverage', 'test-artifacts']);

type Step =
  | { kind: 'create'; file: string; text: string }
  | { kind: 'insert'; file: string; anchor: string; text: string }
  | { kind: 'replace'; file: string; anchor: string; text: string }
  | { kind: 'run'; text: string };

function walkthroughSteps(markdown: string): Step[] {
  return [...markdown.matchAll(/<!-- walkthrough: (.+?) -->\s*```[a-z]*\n([\s\S]*?)\n```/g)].map(([, head, text]) => {
    if (head === 'run') return { kind: 'run', text };
    const insert = /^(\S+), insert after the line containing "(.+)"$/.exec(head);
    if (insert) return { kind: 'insert', file: insert[1], anchor: insert[2], text };
    const replace = /^(\S+), replace "(.+)"$/.exec(head);
    if (replace) return { kind: 'replace', file: replace[1], anchor: replace[2], text };
    if (/^\S+$/.test(head)) return { kind: 'create', file: head, text };
    throw new Error(`CONTRIBUTING.md: a walkthrough marker this test cannot read: ${head}`);
  });
}

function apply(step: Step, cwd: string, env: NodeJS.ProcessEnv): void {
  if (step.kind === 'run') {
    execFileSync('sh', ['-c', step.text], { cwd, env, stdio: 'pipe' });
    return;
  }
  const path = join(cwd, step.file);
  if (step.kind === 'create') {
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, `${step.text}\n`);
    return;
  }
  const before = readFileSync(path, 'utf8');
  if (step.kind === 'replace') {
    expect([step.file, before.split(step.anchor).length - 1]).toEqual([step.file, 1]);
    writeFileSync(
      path,
      before.replace(step.anchor, () => step.text),
    );
    return;
  }
  const lines = before.split('\n');
  const at = lines.flatMap((line, index) => (line.includes(step.anchor) ? [index] : []));
  expect([step.file, step.anchor, at.length]).toEqual([step.file, step.anchor, 1]);
  lines.splice(at[0] + 1, 0, ...step.text.split('\n'));
  writeFileSync(path, lines.join('\n'));
}

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

/** Asks until `ready` holds for an answer (a refused connection counts as not yet), at most `ms`. */
async function poll(url: string, ready: (res: Response) => boolean, ms: number, output: () => string): Promise<Response> {
  const deadline = Date.now() + ms;
  for (;;) {
    const res = await fetch(url).catch(() => undefined);
    if (res && ready(res)) return res;
    if (Date.now() > deadline) throw new Error(`no ready answer from ${url} in ${ms} ms; start:dev said:\n${output().slice(-4000)}`);
    await sleep(50);
  }
}

// ajv-formats is CommonJS with a default export; under nodenext its default is the module object.
const addFormats = ((addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ?? addFormatsModule) as unknown as (ajv: Ajv2020) => void;

describe('CONTRIBUTING.md walkthrough: GET /api/v1/ping in the watch loop', () => {
  const scratch = mkdtempSync(join(tmpdir(), 'walkthrough-'));
  const copy = join(scratch, 'repo');
  let dev: ChildProcess;
  let output = '';
  let base = '';
  let env: NodeJS.ProcessEnv;

  beforeAll(async () => {
    cpSync(ROOT, copy, { recursive: true, filter: (source) => !NOT_COPIED.has(relative(ROOT, source).split(sep)[0]) });
    symlinkSync(join(ROOT, 'node_modules'), join(copy, 'node_modules'), 'dir');
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    env = { PATH: process.env.PATH, HOME: process.env.HOME, PORT: String(port), DATA_DIR: join(scratch, 'data'), LOG_FORMAT: 'json', LOG_LEVEL: 'info' };
    // Its own process group: npm starts the Nest CLI, which starts the service; afterAll stops all three at once.
    dev = spawn('npm', ['run', 'start:dev'], { cwd: copy, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    dev.stdout!.on('data', (chunk) => (output += chunk));
    dev.stderr!.on('data', (chunk) => (output += chunk));
    await poll(
      `${base}/api/v1/health`,
      (res) => res.status === 200,
      100_000,
      () => output,
    );
  }, 120_000);

  afterAll(async () => {
    if (dev?.pid !== undefined && dev.exitCode === null && dev.signalCode === null) {
      const exited = once(dev, 'exit');
      process.kill(-dev.pid, 'SIGTERM');
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([exited, new Promise((done) => (timer = setTimeout(done, 10_000)))]);
      clearTimeout(timer);
    }
    try {
      if (dev?.pid !== undefined) process.kill(-dev.pid, 'SIGKILL');
    } catch {
      // ESRCH: the whole group has exited.
    }
    rmSync(scratch, { recursive: true, force: true });
  }, 30_000);

  it('serves GET /api/v1/ping after the documented steps, reloaded by the watch loop', async () => {
    expect((await fetch(`${base}/api/v1/ping`)).status).toBe(404);
    const steps = walkthroughSteps(readFileSync(join(ROOT, 'CONTRIBUTING.md'), 'utf8'));
    expect(steps.filter((step) => step.kind === 'create').map((step) => (step as { file: string }).file)).toEqual(
      expect.arrayContaining(['src/ping/ping.module.ts', 'src/ping/ping.controller.ts', 'src/ping/ping-query.dto.ts', 'openapi/ping/paths.yaml']),
    );
    for (const step of steps) apply(step, copy, env);
    const lastEdit = Date.now();
    await poll(
      `${base}/api/v1/ping`,
      (res) => res.status === 200,
      60_000,
      () => output,
    );
    console.log(`walkthrough: GET /api/v1/ping answered 200 ${Date.now() - lastEdit} ms after the last edit`);
  }, 120_000);

  it('answers pong, echoes, refuses a long echo and unknown parameters, as the served contract documents', async () => {
    const contract = (await (await fetch(`${base}/docs/openapi-leads.json`)).json()) as Record<string, any>;
    const operation = contract.paths['/api/v1/ping']?.get;
    expect(operation).toMatchObject({ operationId: 'getPing', security: [{}, { bearerAuth: [] }] });
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats(ajv);
    ajv.addSchema({ ...contract, $id: 'contract' }, 'contract');
    const validate = (status: string, mediaType: string) =>
      ajv.compile({ $ref: `contract#/paths/~1api~1v1~1ping/get/responses/${status}/content/${mediaType.replace('/', '~1')}/schema` });
    const ok = validate('200', 'application/json');
    const badQuery = validate('400', 'application/problem+json');

    const get = async (query: string) => {
      const res = await fetch(`${base}/api/v1/ping${query}`);
      return { status: res.status, type: res.headers.get('content-type'), policy: res.headers.get('ratelimit-policy'), body: (await res.json()) as any };
    };

    const plain = await get('');
    expect(plain).toMatchObject({ status: 200, body: { pong: true } });
    expect(plain.body).toEqual({ pong: true });
    expect(plain.policy).toMatch(/^"anonymous";q=\d+;w=\d+$/);
    expect(ok(plain.body)).toBe(true);

    const echoed = await get('?echo=hello');
    expect(echoed.body).toEqual({ pong: true, echo: 'hello' });
    expect(ok(echoed.body)).toBe(true);

    for (const [query, parameter, code] of [
      [`?echo=${'x'.repeat(33)}`, 'echo', 'too_long'],
      ['?echo=a&echo=b', 'echo', 'repeated_parameter'],
      ['?foo=1', 'foo', 'unknown_parameter'],
    ]) {
      const refused = await get(query);
      expect([refused.status, refused.type, refused.body.code]).toEqual([400, 'application/problem+json; charset=utf-8', 'invalid_query']);
      expect(refused.body.errors).toEqual([expect.objectContaining({ parameter, code })]);
      expect([query, badQuery(refused.body), badQuery.errors]).toEqual([query, true, null]);
    }
  }, 30_000);
});
