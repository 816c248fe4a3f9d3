import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { MODE, SHORT } from './mode.js';

const RESULTS_FILE = 'test/reliability/RESULTS.md';
/** Full runs (by hand) keep their numbers; short runs (CI) leave the tree clean unless asked. */
const WRITE_RESULTS = !SHORT || process.env.RELIABILITY_RESULTS === '1';

/**
 * Prints a scenario's summary straight to stdout (jest would wrap console.log in stack frames) and, in full mode,
 * rewrites its section of RESULTS.md, so that running one scenario again updates only its own numbers.
 */
export function report(scenario: string, lines: string[]): void {
  process.stdout.write(`\n── ${scenario} (${MODE} mode)\n${lines.map((line) => `   ${line}\n`).join('')}`);
  if (!WRITE_RESULTS) return;
  const sections = new Map<string, string>();
  if (existsSync(RESULTS_FILE)) {
    for (const section of readFileSync(RESULTS_FILE, 'utf8')
      .split(/^(?=## )/m)
      .slice(1))
      sections.set(section.split('\n', 1)[0], section.trimEnd());
  }
  const title = `## ${scenario}`;
  const when = `_${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC, ${MODE} mode_`;
  sections.set(title, [title, '', when, '', ...lines.map((line) => `- ${line}`)].join('\n'));
  const header = [
    '# Reliability results',
    '',
    `Written by \`npm run test:reliability\` (test/reliability); each section is rewritten when its scenario runs.`,
    `Machine: ${cpus().length} × ${cpus()[0]?.model.trim() ?? 'unknown CPU'}, Node ${process.version}; the load generator shares it with the service.`,
  ].join('\n');
  const body = [...sections.keys()].sort().map((key) => sections.get(key));
  writeFileSync(RESULTS_FILE, `${[header, ...body].join('\n\n')}\n`);
}

/** The service's warnings and errors (LOG_LEVEL=warn), grouped by message: what to read first when a scenario fails. */
export function logSummary(output: string): string {
  const levels: Record<number, string> = { 40: 'warn', 50: 'error', 60: 'fatal' };
  const groups = new Map<string, number>();
  for (const line of output.split('\n')) {
    if (!line.trim()) continue;
    let label: string;
    try {
      const entry = JSON.parse(line) as { level?: number; msg?: string; context?: string };
      label = `${levels[entry.level ?? 0] ?? entry.level} ${entry.context ? `[${entry.context}] ` : ''}${entry.msg ?? ''}`;
    } catch {
      label = `(not JSON) ${line.slice(0, 120)}`;
    }
    groups.set(label, (groups.get(label) ?? 0) + 1);
  }
  return groups.size ? [...groups].map(([label, count]) => `${count}× ${label}`).join('; ') : 'nothing above info';
}
