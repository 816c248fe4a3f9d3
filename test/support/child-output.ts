import { spawn, type ChildProcess } from 'node:child_process';

/** How a child process exited and what it wrote. */
export interface ChildOutput {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Collects a child's output until it exits; when it has a stdin, `input` is written to it and it is closed. */
export function outputOf(child: ChildProcess, input = ''): Promise<ChildOutput> {
  return new Promise((resolve, reject) => {
    let stdout = '';
    let stderr = '';
    child.stdout?.on('data', (chunk) => (stdout += chunk));
    child.stderr?.on('data', (chunk) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    // A child may exit before it reads its input (a refusal, --help): its closed pipe is no failure of the test.
    child.stdin?.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code !== 'EPIPE') reject(error);
    });
    child.stdin?.end(input);
  });
}

/** Where a test's CLI lives and keeps its files. */
export interface CliHome {
  leads: string;
  home: string;
  configDir: string;
}

/** What a CLI run gets besides its arguments: its stdin, and settings beside PATH, HOME and its config folder. */
export interface CliOptions {
  input?: string;
  env?: Record<string, string>;
}

/** Runs the CLI (`leads …`) with only PATH, HOME and its config folder in the environment, plus `env`. */
export function runCli(cli: CliHome, args: string[], options: CliOptions = {}): Promise<ChildOutput> {
  const env = { PATH: process.env.PATH, HOME: cli.home, LEADS_CONFIG_DIR: cli.configDir, ...options.env };
  return outputOf(spawn(cli.leads, args, { env, stdio: ['pipe', 'pipe', 'pipe'] }), options.input);
}

/** What a CLI run on a terminal gets: its width, and `answer`, typed once `prompt` shows. */
export interface TerminalOptions {
  columns?: number;
  prompt?: string;
  answer?: string;
  env?: Record<string, string>;
}

/**
 * Runs the CLI on a pseudo-terminal (util-linux `script`) of `columns` columns; `answer` is typed once `prompt` shows,
 * as a person would (typed earlier, the terminal would echo it before the CLI could turn echo off). Output is the
 * terminal's: stdout and stderr together.
 */
export function runCliOnTerminal(cli: CliHome, args: string[], options: TerminalOptions = {}): Promise<ChildOutput> {
  const command = `stty cols ${options.columns ?? 100}; exec ${[cli.leads, ...args].map((arg) => `'${arg.replace(/'/g, `'\\''`)}'`).join(' ')}`;
  return new Promise((resolve, reject) => {
    const child = spawn('script', ['-q', '-e', '-c', command, '/dev/null'], {
      env: { PATH: process.env.PATH, HOME: cli.home, LEADS_CONFIG_DIR: cli.configDir, TERM: 'dumb', ...options.env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let answered = false;
    child.stdout!.on('data', (chunk) => {
      stdout += chunk;
      if (options.prompt && !answered && stdout.includes(options.prompt)) {
        answered = true;
        child.stdin!.write(`${options.answer}\r`);
      }
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr: '' }));
  });
}
