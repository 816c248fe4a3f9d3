import { ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { freePort } from '../../scripts/free-port.mjs';

/** Suites send hundreds of requests from one address; the rate-limit suites set their own quotas. */
export const GENEROUS_LIMITS = {
  RATE_LIMIT_ANONYMOUS: '1000000/60s',
  RATE_LIMIT_AGENT: '10000000/60s',
  RATE_LIMIT_VERIFIED_AGENT: '10000000/60s',
  RATE_LIMIT_OPERATOR: '10000000/60s',
  RATE_LIMIT_REGISTRATION: '1000000/60s',
  RATE_LIMIT_TOKEN: '1000000/60s',
  RATE_LIMIT_MCP_HOUSEKEEPING: '1000000/60s',
};

type Exit = [number | null, NodeJS.Signals | null];

export interface ServerProcess {
  child: ChildProcess;
  baseUrl: string;
  output(): string;
  exit: Promise<Exit>;
  /** Sends `signal` unless the process has already exited, and waits for the exit (SIGKILL after 20 s, so a test never hangs here). */
  stop(signal?: NodeJS.Signals): Promise<Exit>;
}

export { freePort };

/** What `npm start` runs after its staleness check: the release build of the service (scripts/release/). */
export const SERVER_ENTRY = fileURLToPath(new URL('../../dist/server.mjs', import.meta.url));

/**
 * Starts the built service (`npm run build` output) as its own process and waits until it answers health; in the
 * package's folder unless `cwd` names another, from `entry` (another copy of dist/server.mjs) when given.
 */
export async function startServer(env: Record<string, string>, port?: number, cwd?: string, entry = SERVER_ENTRY): Promise<ServerProcess> {
  const chosen = port ?? (await freePort());
  const child = spawn(process.execPath, [entry], {
    cwd,
    env: { PATH: process.env.PATH, PORT: String(chosen), LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  const exit = once(child, 'exit') as Promise<Exit>;
  const stop = async (signal: NodeJS.Signals = 'SIGTERM') => {
    if (child.exitCode !== null || child.signalCode !== null) return exit;
    child.kill(signal);
    const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    try {
      return await exit;
    } finally {
      clearTimeout(timer);
    }
  };
  const baseUrl = `http://127.0.0.1:${chosen}`;
  // A start takes 1-3 s; on a CI machine running two suites beside it, up to ten times that.
  const deadline = Date.now() + 40_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`server exited early:\n${output}`);
    try {
      if ((await fetch(`${baseUrl}/api/v1/health`)).status === 200) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      await stop('SIGKILL');
      throw new Error(`server did not become healthy:\n${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return { child, baseUrl, output: () => output, exit, stop };
}
