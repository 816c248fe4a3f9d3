/** @system `npm start` (npm, then the service it runs) as processes, under `script` for a terminal */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { cpSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, symlinkSync } from 'node:fs';
import { once } from 'node:events';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PACKAGE_ROOT } from '../src/config/package-root.js';
import { freePort } from '../scripts/free-port.mjs';

/** What the service's stdin is under `npm start`: a supervisor's /dev/null, a pipe left open or closed, a terminal. */
type Stdin = '/dev/null' | 'an open pipe' | 'a closed pipe' | 'a terminal';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Whether something accepts connections on the port. */
const listening = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => resolve(true)).once('error', () => resolve(false));
    socket.once('connect', () => socket.destroy());
  });

interface NpmStart {
  /** What `npm start` wrote, the service's log lines included. */
  output(): string;
  /** The npm process, the pid a supervisor signals, and the leader of its process group. */
  npm: number;
  /** Kills every process the start made, whatever the test found (an orphaned service included). */
  cleanUp(): void;
  port: number;
}

/** `npm start` in its own process group, as a supervisor starts it, once the service accepts connections. */
async function npmStart(stdin: Stdin): Promise<NpmStart> {
  const port = await freePort();
  const dataDir = mkdtempSync(join(tmpdir(), 'npm-start-'));
  const env = { PATH: process.env.PATH, HOME: process.env.HOME, PORT: String(port), DATA_DIR: dataDir, LOG_LEVEL: 'info', npm_config_update_notifier: 'false' };
  const options = { cwd: PACKAGE_ROOT, env, detached: true };
  let child: ChildProcess;
  if (stdin === 'a terminal') {
    // script(1) gives npm a pseudo-terminal as stdin, stdout and stderr; the shell it starts becomes npm (exec).
    const command = `echo $$ > ${dataDir}/npm.pid; exec npm start`;
    child = spawn('script', ['-qfec', command, '/dev/null'], { ...options, stdio: ['pipe', 'pipe', 'pipe'] });
  } else {
    child = spawn('npm', ['start'], { ...options, stdio: [stdin === '/dev/null' ? 'ignore' : 'pipe', 'pipe', 'pipe'] });
    if (stdin === 'a closed pipe') child.stdin!.end();
  }
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  const groups = () => [child.pid!, ...(stdin === 'a terminal' ? [Number(readFileSync(join(dataDir, 'npm.pid'), 'utf8'))] : [])];
  const cleanUp = () => {
    for (const group of groups()) {
      try {
        process.kill(-group, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    rmSync(dataDir, { recursive: true, force: true });
  };
  const deadline = Date.now() + 30_000;
  while (!(await listening(port))) {
    if (child.exitCode !== null || Date.now() > deadline) {
      cleanUp();
      throw new Error(`npm start did not start the service:\n${output}`);
    }
    await sleep(100);
  }
  return { output: () => output, npm: groups().at(-1)!, cleanUp, port };
}

/** Waits up to 10 s (the issue's bound) for the port to be free and the stop line written; says which is missing. */
async function stoppedWithin10s(start: NpmStart, signal: string): Promise<{ portFree: boolean; stopLine: string | undefined }> {
  const stopLine = () => start.output().match(new RegExp(`Stopped on ${signal} in \\d+ ms: requests in flight answered, connections closed`))?.[0];
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline && ((await listening(start.port)) || !stopLine())) await sleep(100);
  return { portFree: !(await listening(start.port)), stopLine: stopLine() };
}

describe('npm start, stopped by a signal to the npm process (a pid file, supervisord, systemd with KillMode=process)', () => {
  beforeAll(() => {
    // `npm test` builds first; a run of this file alone must not spend its first test's time building.
    expect(spawnSync(process.execPath, ['scripts/build-if-stale.mjs'], { cwd: PACKAGE_ROOT, stdio: 'inherit' }).status).toBe(0);
  }, 300_000);

  it.each([
    ['SIGTERM', '/dev/null'],
    ['SIGINT', '/dev/null'],
    ['SIGTERM', 'a closed pipe'],
    ['SIGINT', 'an open pipe'],
    ['SIGTERM', 'a terminal'],
    ['SIGINT', 'a terminal'],
  ] as const)('stops the service on %s to the npm process, with stdin %s: port free and the stop line within 10 s', async (signal, stdin) => {
    const start = await npmStart(stdin);
    try {
      process.kill(start.npm, signal);
      expect(await stoppedWithin10s(start, signal)).toEqual({ portFree: true, stopLine: expect.stringContaining(`Stopped on ${signal}`) });
    } finally {
      start.cleanUp();
    }
  });

  // npm passes on what it gets, so the service gets such a signal twice; the copy must not end it before its stop line.
  it.each([
    ['SIGINT', 'a terminal', 'Ctrl+C'],
    ['SIGTERM', '/dev/null', "systemd's default KillMode=control-group"],
  ] as const)('stops the service gracefully on %s to the whole process group, stdin %s (%s)', async (signal, stdin, _why) => {
    const start = await npmStart(stdin);
    try {
      process.kill(-start.npm, signal);
      expect(await stoppedWithin10s(start, signal)).toEqual({ portFree: true, stopLine: expect.stringContaining(`Stopped on ${signal}`) });
    } finally {
      start.cleanUp();
    }
  });

  it('stops the service, as on SIGTERM, when npm itself is killed (SIGKILL, which npm cannot pass on)', async () => {
    const start = await npmStart('/dev/null');
    try {
      process.kill(start.npm, 'SIGKILL');
      expect(await stoppedWithin10s(start, 'SIGTERM')).toEqual({ portFree: true, stopLine: expect.stringContaining('Stopped on SIGTERM') });
    } finally {
      start.cleanUp();
    }
  });
});

/** The processes (pid and command line) whose working directory is `dir` or under it, found in /proc. */
function processesIn(dir: string): string[] {
  const found: string[] = [];
  for (const pid of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    try {
      const cwd = readlinkSync(`/proc/${pid}/cwd`);
      if (cwd === dir || cwd.startsWith(`${dir}/`)) found.push(`${pid} ${readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ').trim()}`);
    } catch {
      // gone meanwhile, or not ours to read
    }
  }
  return found;
}

describe('npm start, stopped by a signal while it builds first', () => {
  let copy: string;

  beforeAll(() => {
    // A copy of the package without dist/ (so the start must build), node_modules shared through a link.
    copy = mkdtempSync(join(tmpdir(), 'npm-start-stale-'));
    const skip = new Set(['node_modules', 'dist', '.git', 'test-artifacts', 'coverage']);
    cpSync(PACKAGE_ROOT, copy, { recursive: true, filter: (path) => !skip.has(path.slice(PACKAGE_ROOT.length).split('/').find(Boolean) ?? '') });
    symlinkSync(join(PACKAGE_ROOT, 'node_modules'), join(copy, 'node_modules'));
  });

  afterAll(() => {
    for (const line of processesIn(copy)) process.kill(Number(line.split(' ')[0]), 'SIGKILL');
    rmSync(copy, { recursive: true, force: true });
  });

  it.each(['SIGTERM', 'SIGINT'] as const)(
    '%s to the npm process during the build stops the build and its tsc too, and says so',
    async (signal) => {
      const dataDir = mkdtempSync(join(tmpdir(), 'npm-start-'));
      const env = { PATH: process.env.PATH, HOME: process.env.HOME, PORT: String(await freePort()), DATA_DIR: dataDir, npm_config_update_notifier: 'false' };
      const npm = spawn('npm', ['start'], { cwd: copy, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
      // Rejects only on a spawn error, which the wait for tsc reports on its own.
      const closed = once(npm, 'close').catch(() => undefined);
      let output = '';
      npm.stdout.on('data', (chunk) => (output += chunk));
      npm.stderr.on('data', (chunk) => (output += chunk));
      try {
        // Signalled once tsc runs: the step that takes longest, in a process of its own.
        const deadline = Date.now() + 120_000;
        while (!processesIn(copy).some((line) => line.includes('typescript/bin/tsc'))) {
          if (npm.exitCode !== null || Date.now() > deadline) throw new Error(`the build did not reach tsc:\n${output}`);
          await sleep(100);
        }
        expect(output).toContain('Building first');
        process.kill(npm.pid!, signal);
        const until = Date.now() + 5_000;
        while (Date.now() < until && processesIn(copy).length > 0) await sleep(100);
        expect(processesIn(copy)).toEqual([]);
        // Its last words may still be in the pipe when the processes are gone: read until npm's streams close.
        let waited: NodeJS.Timeout | undefined;
        await Promise.race([closed, new Promise((resolve) => (waited = setTimeout(resolve, 5_000)))]);
        clearTimeout(waited);
        expect(npm.exitCode ?? npm.signalCode).not.toBeNull();
        expect(output).toMatch(new RegExp(`Build stopped on ${signal}`));
        expect(npm.exitCode ?? npm.signalCode).not.toBe(0);
      } finally {
        try {
          process.kill(-npm.pid!, 'SIGKILL');
        } catch {
          // already gone
        }
        rmSync(dataDir, { recursive: true, force: true });
      }
    },
    180_000,
  );
});
