// Summarises V8 .cpuprofile files (node --cpu-prof, e.g. SERVICE_NODE_ARGS='--cpu-prof --cpu-prof-dir=DIR' with a
// bench): the functions with the most self time, and with the most inclusive time (a sample counts once for every
// distinct function on its stack). Usage: node bench/cpuprofile-summary.mjs FILE_OR_DIR… [--top 30] [--match TEXT]
// --match: only functions whose name or file contains TEXT (e.g. modelcontextprotocol) in the inclusive list.
// Frames in a file with a `.map` beside it (dist/server.cjs) are named by their original file and line.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { SourceMap } from 'node:module';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const args = process.argv.slice(2);
let top = 30;
let match;
const files = [];
for (let i = 0; i < args.length; i++) {
  if (args[i] === '--top') top = Number(args[++i]);
  else if (args[i] === '--match') match = args[++i];
  else if (statSync(args[i]).isDirectory())
    files.push(
      ...readdirSync(args[i])
        .filter((f) => f.endsWith('.cpuprofile'))
        .map((f) => join(args[i], f)),
    );
  else files.push(args[i]);
}
if (!files.length) throw new Error('usage: node bench/cpuprofile-summary.mjs FILE_OR_DIR… [--top 30] [--match TEXT]');

const maps = new Map();
/** The original file:line of a frame, through the source map beside its file when there is one. */
function where({ url, lineNumber, columnNumber }) {
  if (!url) return '';
  const path = url.startsWith('file:') ? fileURLToPath(url) : url;
  if (!maps.has(path)) maps.set(path, existsSync(`${path}.map`) ? new SourceMap(JSON.parse(readFileSync(`${path}.map`, 'utf8'))) : null);
  const entry = maps.get(path)?.findEntry(lineNumber, columnNumber);
  if (entry?.originalSource) return `${entry.originalSource.replace(/^.*node_modules\//, '').replace(/^(\.\.\/)+/, '')}:${entry.originalLine + 1}`;
  return `${basename(url)}:${lineNumber + 1}:${columnNumber + 1}`;
}

for (const file of files) {
  const profile = JSON.parse(readFileSync(file, 'utf8'));
  const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const label = ({ callFrame: f }) => `${f.functionName || '(anonymous)'} ${where(f)}`.trim();
  // Time per sample: the deltas (µs) V8 recorded between samples.
  const self = new Map();
  const inclusive = new Map();
  let total = 0;
  let idle = 0;
  profile.samples.forEach((id, index) => {
    const dt = profile.timeDeltas[index] ?? 0;
    total += dt;
    const node = nodes.get(id);
    const name = label(node);
    if (node.callFrame.functionName === '(idle)') idle += dt;
    self.set(name, (self.get(name) ?? 0) + dt);
    const seen = new Set();
    for (let at = id; at !== undefined; at = parent.get(at)) {
      const frame = label(nodes.get(at));
      if (seen.has(frame)) continue;
      seen.add(frame);
      inclusive.set(frame, (inclusive.get(frame) ?? 0) + dt);
    }
  });
  const busy = total - idle;
  const print = (title, map, filter = () => true) => {
    console.log(`\n${title}`);
    const rows = [...map].filter(([name]) => filter(name) && name !== '(root)' && name !== '(idle)').sort((a, b) => b[1] - a[1]);
    for (const [name, us] of rows.slice(0, top))
      console.log(`${(us / 1000).toFixed(0).padStart(7)} ms ${((100 * us) / busy).toFixed(1).padStart(5)}%  ${name.slice(0, 150)}`);
  };
  console.log(`${file}: ${(total / 1e6).toFixed(1)} s sampled, ${(idle / 1e6).toFixed(1)} s idle; percentages of the ${(busy / 1e6).toFixed(1)} s busy`);
  print('self time', self);
  print('inclusive time', inclusive, match ? (name) => name.includes(match) : undefined);
}
