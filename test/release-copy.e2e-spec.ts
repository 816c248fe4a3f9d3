/** @system the release build, copied and started (`node dist/server.mjs`) as its own process */
//
// The production image has the build and no sources: the Dockerfile's last stage copies dist/, package.json, node_modules
// and two files of src/, not src/docs/. This suite makes that folder (by those very COPY lines, node_modules linked),
// starts the service there, and reads every documentation page, so that pages read from src/docs/pages at run time, or a
// file the image lacks, fail here rather than in production. The e-mail templates (src/mail/templates) are compiled at
// every start, so a start of this copy shows that the bundle carries them.
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import type { AppConfig } from '../src/config/config.js';
import { DOC_PAGES } from '../src/docs/docs.pages.js';
import { DocsService } from '../src/docs/docs.service.js';
import request from 'supertest';
import { expectContract } from './support/contract.js';
import { freePort, startServer, type ServerProcess } from './support/server-process.js';
import { SITE_PAGES } from './support/site-pages.js';

/** The runtime stage's `COPY [--from=build] <source> <destination>` lines, sources as paths of this package. */
function runtimeCopies(): [source: string, destination: string][] {
  const dockerfile = readFileSync('Dockerfile', 'utf8');
  const runtimeStage = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '));
  return [...runtimeStage.matchAll(/^COPY\s.*$/gm)].map(([line]) => {
    const [, source, destination] = /^COPY\s+(?:--from=build\s+)?(\S+)\s+(\S+)\s*$/.exec(line) ?? [];
    if (!source) throw new Error(`a COPY line this suite cannot copy yet: ${line}`);
    return [source.replace(/^\/app\//, ''), destination];
  });
}

let folder: string;
let server: ServerProcess;
let docs: DocsService;

beforeAll(async () => {
  folder = mkdtempSync(join(tmpdir(), 'leads-release-copy-'));
  for (const [source, destination] of runtimeCopies()) {
    const target = resolve(folder, destination.endsWith('/') ? join(destination, source) : destination);
    mkdirSync(dirname(target), { recursive: true });
    if (source === 'node_modules') symlinkSync(resolve(source), target, 'dir');
    else cpSync(source, target, { recursive: true });
  }
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  server = await startServer(
    { NODE_ENV: 'production', DATA_DIR: join(folder, 'data'), PUBLIC_BASE_URL: base, LOG_LEVEL: 'warn' },
    port,
    folder,
    join(folder, 'dist/server.mjs'),
  );
  docs = new DocsService({ publicBaseUrl: base } as AppConfig);
}, 60_000);

afterAll(async () => {
  await server?.stop();
  if (folder) rmSync(folder, { recursive: true, force: true });
});

describe('the release build, copied as the Dockerfile copies it (no src/docs, no src/mail)', () => {
  it('is the build, package.json and node_modules, with none of the docs sources', () => {
    const destinations = runtimeCopies().map(([, destination]) => destination);
    expect(destinations).toEqual(expect.arrayContaining(['./dist', './node_modules']));
    expect([existsSync(join(folder, 'dist/server.mjs')), existsSync(join(folder, 'src/docs')), existsSync(join(folder, 'src/mail'))]).toEqual([
      true,
      false,
      false,
    ]);
  });

  it('starts with the e-mail templates of the bundle (each compiled at start), and warns that without SMTP_URL mail goes to files', () => {
    const warning = server
      .output()
      .split('\n')
      .filter((line) => line.includes('SMTP_URL is not set'))
      .map((line) => JSON.parse(line) as { level: number; destination: string });
    expect(warning).toEqual([expect.objectContaining({ level: 40, destination: join(folder, 'data', 'mail') })]);
  });

  it.each(DOC_PAGES.map((page) => [`/docs/${page.slug}`, page.slug]))('serves %s, the page its Markdown file gives', async (path, slug) => {
    const res = await request(server.baseUrl).get(path).then(expectContract);
    expect([res.status, res.headers['content-type']]).toEqual([200, 'text/html; charset=utf-8']);
    expect(res.text).toBe(docs.get(slug).html);
  });

  it('serves /auth.md, the agents page as Markdown', async () => {
    const res = await request(server.baseUrl).get('/auth.md').then(expectContract);
    expect([res.status, res.headers['content-type']]).toEqual([200, 'text/markdown; charset=utf-8']);
    expect(res.text).toBe(docs.get('agents').markdown);
  });

  it.each(SITE_PAGES.map((path) => [path]))('serves %s with the site navigation', async (path) => {
    const res = await request(server.baseUrl).get(path).then(expectContract);
    expect([res.status, res.headers['content-type']]).toEqual([200, 'text/html; charset=utf-8']);
    expect(res.text).toContain('<nav class="site-nav" aria-label="Documentation">');
  });
});
