// The build's training start: runs the built service once on a scratch SQLite folder and a free loopback port, sends
// the requests a fresh process answers first, then has the launcher write V8's code cache (scripts/release/launcher.mjs)
// with every function compiled by then. A cache written right after compiling, before anything ran, saved a third as
// much start-up time. A failure here costs only speed: the build says so and goes on without a cache.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort } from '../free-port.mjs';

const LEAD = { nome: 'Maria Souza', email: 'maria@example.com.br', telefone: '+55 11 98765-4321', empresa: 'Souza', mensagem: 'Olá', origem: 'build' };

export async function trainCodeCache(launcher, cacheFile) {
  const dataDir = mkdtempSync(join(tmpdir(), 'code-cache-'));
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const env = { PATH: process.env.PATH, NODE_ENV: 'production', PORT: String(port), DATA_DIR: dataDir, PUBLIC_BASE_URL: base, LOG_LEVEL: 'silent' };
  // stdin is a pipe so that the service ends with the build (scripts/release/launcher.mjs)
  const child = spawn(process.execPath, [launcher, '--write-code-cache'], { env, stdio: ['pipe', 'ignore', 'inherit'] });
  const exited = once(child, 'exit');
  const deadline = Date.now() + 60_000;
  const timeLeft = () => AbortSignal.timeout(Math.max(1, deadline - Date.now()));
  try {
    for (;;) {
      if (child.exitCode !== null || child.signalCode !== null) throw new Error(`the service exited (${child.exitCode ?? child.signalCode})`);
      if (Date.now() > deadline) throw new Error('the service was not healthy after 60 s');
      const healthy = await fetch(`${base}/api/v1/health`, { signal: timeLeft() }).then(
        (res) => res.ok,
        () => false,
      );
      if (healthy) break;
      await sleep(20);
    }
    const json = { 'content-type': 'application/json' };
    for (const [path, body] of [
      ['/api/v1/lead', LEAD],
      ['/api/v1/lead', { ...LEAD, email: 'not an address' }],
      ['/api/v1/sandbox', LEAD],
      ['/api/v1/graphql', { query: '{ health { status } }' }],
    ]) {
      const res = await fetch(base + path, { method: 'POST', headers: json, body: JSON.stringify(body), signal: timeLeft() });
      await res.arrayBuffer();
    }
    child.kill('SIGUSR2');
    const [code, signal] = await Promise.race([exited, sleep(Math.max(1, deadline - Date.now()), [null, 'timeout'], { ref: false })]);
    if (code !== 0) throw new Error(`the service ended with ${code ?? signal} while writing the cache`);
  } catch (error) {
    child.kill('SIGKILL');
    await exited;
    rmSync(cacheFile, { force: true });
    console.warn(`No code cache for ${launcher}, so the service will start slower: ${error.message}`);
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}
