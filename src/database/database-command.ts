// The frame of the `npm run clients:*` and `users:*` commands: a command line checked before the database is opened,
// then one service over the configured database (DATA_DIR or DATABASE_URL, as the service), its migrations run first.
// What a script reads goes to standard output, what a person reads to standard error. Exit codes: 0 done, 1 refused
// (by the service, or a configuration or database that cannot be used), 2 usage (with the usage text).
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { DataSource, type EntitySchema } from 'typeorm';
import { type AppConfig, ConfigError, loadConfig } from '../config/config.js';
import { dataSourceOptions, runMigrations } from './data-source.js';

/** A command line the command cannot take: exit code 2, with the usage. */
export class UsageError extends Error {}

/** Understood, and refused (no such person, the last admin): exit code 1. */
export class Refused extends Error {}

/** Where a command writes: standard output and standard error, one line per call. */
export interface CommandOutput {
  out(line: string): void;
  err(line: string): void;
}

export const STANDARD_OUTPUT: CommandOutput = {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
};

/** The options after the command word, strictly, and exactly `positionals` plain arguments (else `missing`). */
export function commandArgs(rest: string[], options: ParseArgsConfig['options'] = {}, positionals = 0, missing = 'Give one argument.') {
  let parsed;
  try {
    parsed = parseArgs({ args: rest, options, allowPositionals: positionals > 0, strict: true });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  if (parsed.positionals.length !== positionals) throw new UsageError(positionals ? missing : 'Unexpected arguments.');
  return parsed;
}

export interface DatabaseCommand<S> {
  usage: string;
  /** The command line as the work to do, checked before the database is opened; throws UsageError. */
  parse(argv: string[]): (service: S, io: CommandOutput) => Promise<void>;
  entities: (string | (new () => unknown) | EntitySchema)[];
  service(dataSource: DataSource, config: AppConfig): S;
  /** The service's own refusals besides Refused (exit code 1; while parsing, a usage error). */
  refusal?: new (...args: never[]) => Error;
}

/** Runs one command line against the database `env` (else the process environment) names; resolves to the exit code. */
export async function runDatabaseCommand<S>(
  command: DatabaseCommand<S>,
  argv: string[],
  env?: Record<string, string | undefined>,
  io = STANDARD_OUTPUT,
): Promise<number> {
  const refused = (error: unknown): error is Error => error instanceof Refused || (command.refusal !== undefined && error instanceof command.refusal);
  let run;
  try {
    run = command.parse(argv);
  } catch (error) {
    if (!(error instanceof UsageError || refused(error))) throw error;
    io.err(`${error.message}\n\n${command.usage}`);
    return 2;
  }
  let config;
  try {
    config = loadConfig(env);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    io.err(error.message);
    return 1;
  }
  const dataSource = await new DataSource({ ...dataSourceOptions(config), entities: command.entities }).initialize();
  try {
    await runMigrations(dataSource);
    await run(command.service(dataSource, config), io);
    return 0;
  } catch (error) {
    if (!refused(error)) throw error;
    io.err(error.message);
    return 1;
  } finally {
    await dataSource.destroy();
  }
}
