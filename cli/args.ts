// Command-line parsing: `leads <command> [positionals] [--flag value | --flag=value | --switch]`.
import { LEAD_FIELD_NAMES } from '../src/leads/lead-rules.js';

export class UsageError extends Error {}

export interface Parsed {
  command?: string;
  positionals: string[];
  /** The last value of each option given. */
  options: Record<string, string>;
  /** Every value of each option, in order (for options that may be repeated, such as --event). */
  repeated: Record<string, string[]>;
  switches: Set<string>;
}

/** Options that take a value; everything else that starts with -- is a switch. */
const VALUE_OPTIONS = new Set<string>([
  'base-url',
  ...LEAD_FIELD_NAMES,
  'file',
  'name',
  'variables',
  'client-id',
  'scope',
  'limit',
  'cursor',
  'since',
  'until',
  'format',
  'delimiter',
  'columns',
  'output',
  'concurrency',
  'dedupe',
  'event',
  'description',
  'wait',
  'message',
  'screening',
  'channel',
  'q',
  'mode',
  'language',
  'status',
  'claim',
]);
/** Switches every command takes; the others belong to one command each. */
const GLOBAL_SWITCHES = new Set(['json', 'help', 'version', 'verbose']);
const SWITCHES = new Set([...GLOBAL_SWITCHES, 'save-secret', 'all', 'dry-run', 'yes', 'no-personal-data']);

export function parseArgs(argv: string[]): Parsed {
  const parsed: Parsed = { positionals: [], options: {}, repeated: {}, switches: new Set() };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--') {
      parsed.positionals.push(...argv.slice(i + 1));
      break;
    }
    if (arg === '-h') {
      parsed.switches.add('help');
      continue;
    }
    if (arg.startsWith('--')) {
      const eq = arg.indexOf('=');
      const name = arg.slice(2, eq === -1 ? undefined : eq);
      if (VALUE_OPTIONS.has(name)) {
        let value: string | undefined;
        if (eq !== -1) value = arg.slice(eq + 1);
        else if (i + 1 < argv.length) value = argv[++i];
        if (value === undefined) throw new UsageError(`--${name} needs a value`);
        parsed.options[name] = value;
        (parsed.repeated[name] ??= []).push(value);
      } else if (SWITCHES.has(name) && eq === -1) {
        parsed.switches.add(name);
      } else {
        throw new UsageError(`unknown option ${arg}`);
      }
      continue;
    }
    if (arg.startsWith('-') && arg !== '-') throw new UsageError(`unknown option ${arg}`);
    if (parsed.command === undefined) parsed.command = arg;
    else parsed.positionals.push(arg);
  }
  return parsed;
}

/** Refuses options a command does not understand, so a typo is never silently ignored. */
export function allowOnly(parsed: Parsed, allowed: string[], maxPositionals: number): void {
  for (const name of [...Object.keys(parsed.options), ...parsed.switches]) {
    if (name !== 'base-url' && !GLOBAL_SWITCHES.has(name) && !allowed.includes(name)) throw new UsageError(`${parsed.command} does not take --${name}`);
  }
  if (parsed.positionals.length > maxPositionals) throw new UsageError(`unexpected argument "${parsed.positionals[maxPositionals]}"`);
}

/** An integer option within bounds, or `fallback` when it is not given. */
export function intOption(parsed: Parsed, name: string, min: number, max: number, fallback?: number): number | undefined {
  const raw = parsed.options[name];
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!/^\d+$/.test(raw) || value < min || value > max) throw new UsageError(`--${name} must be a whole number from ${min} to ${max}`);
  return value;
}
