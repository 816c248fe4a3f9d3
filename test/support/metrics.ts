import { execFileSync, spawnSync } from 'node:child_process';

/** One sample of a Prometheus text exposition. */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** The samples of a text exposition (format 0.0.4); comments and blank lines skipped. */
export function parseExposition(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match) throw new Error(`not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const [, key, value] of (match[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[key] = value;
    samples.push({ name: match[1], labels, value: Number(match[3]) });
  }
  return samples;
}

/** The sum of the samples named `name` whose labels include `labels`; 0 when there is none. */
export function valueOf(samples: Sample[], name: string, labels: Record<string, string> = {}): number {
  return samples
    .filter((sample) => sample.name === name && Object.entries(labels).every(([key, value]) => sample.labels[key] === value))
    .reduce((sum, sample) => sum + sample.value, 0);
}

/** GET the exposition at `url`: its text, parsed samples and content type. */
export async function scrape(url: string): Promise<{ text: string; samples: Sample[]; contentType: string | null }> {
  const res = await fetch(url);
  if (res.status !== 200) throw new Error(`metrics answered ${res.status}`);
  const text = await res.text();
  return { text, samples: parseExposition(text), contentType: res.headers.get('content-type') };
}

/** Whether Debian's prometheus package (promtool, prometheus) is installed; .ci/run installs it. */
export const HAVE_PROMTOOL = spawnSync('promtool', ['--version']).status === 0;

/** `promtool check metrics` on an exposition: its complaints, empty when it passes. */
export function promtoolCheck(text: string): string {
  try {
    execFileSync('promtool', ['check', 'metrics'], { input: text, stdio: ['pipe', 'pipe', 'pipe'] });
    return '';
  } catch (error) {
    const { stdout, stderr } = error as { stdout: Buffer; stderr: Buffer };
    return `${stdout}${stderr}` || String(error);
  }
}
