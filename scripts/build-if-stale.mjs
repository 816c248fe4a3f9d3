// `npm start`, `npm test` and the maintenance commands build first only when the build is missing, older than what it
// is made from, or made by another Node: a start on a built tree skips the build (15–20 s on a quiet 2-core machine,
// a minute or more on a busy one; it says what it builds as it goes). `npm run build`
// (scripts/build.mjs) writes the stamp last, dated when it started, so an interrupted build leaves none and a file saved
// while it ran counts as newer. A folder's own time changes when an entry is added, removed or renamed, so deletions
// count too.
import { spawn, spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { constants } from 'node:os';
import { join } from 'node:path';
import { setTimeout } from 'node:timers';
import { fileURLToPath, pathToFileURL } from 'node:url';

export const ROOT = fileURLToPath(new URL('..', import.meta.url));
export const STAMP = 'dist/.build-stamp';
/** Everything the build reads, from the package's folder; node_modules/.package-lock.json changes with every install. */
const SOURCES = ['src', 'cli', 'migrations', 'openapi', 'scripts', 'package.json', 'package-lock.json', 'node_modules/.package-lock.json', 'redocly.yaml'];
/** Tests beside the sources, which the build leaves out (tsconfig.build.json). */
const NOT_BUILT = /\.spec\.[cm]?[jt]s$/;

/** The first path under `path` (itself included) changed after `time`, or undefined. */
function changedSince(root, path, time) {
  let stats;
  try {
    stats = statSync(join(root, path));
  } catch {
    return undefined; // an optional source that is not there (a missing required one fails the build, not this check)
  }
  if (stats.isDirectory()) {
    for (const entry of readdirSync(join(root, path))) {
      if (NOT_BUILT.test(entry)) continue;
      const changed = changedSince(root, `${path}/${entry}`, time);
      if (changed) return changed;
    }
  }
  // a folder itself when none of its entries is newer: one was added, removed or renamed
  return stats.mtimeMs > time ? path : undefined;
}

/** What the stamp says: which Node made the build (its code cache fits only that Node's V8). */
export const stampText = (node = process.version) => `npm run build with Node ${node}\n`;

/** Why the package must be built before it runs, or undefined when its build is complete and newer than its sources. */
export function staleReason(root = ROOT) {
  let built;
  let stamp;
  try {
    built = statSync(join(root, STAMP)).mtimeMs;
    stamp = readFileSync(join(root, STAMP), 'utf8');
  } catch {
    return 'there is no complete build in dist/';
  }
  if (stamp !== stampText()) return `the build was made by another Node (${stamp.trim()}), and its code cache fits only that one`;
  const tsconfigs = readdirSync(root).filter((name) => /^tsconfig.*\.json$/.test(name));
  for (const source of [...SOURCES, ...tsconfigs]) {
    const changed = changedSince(root, source, built);
    if (changed) return `${changed} changed after the last build`;
  }
  return undefined;
}

const BUILD = [process.execPath, ['scripts/build.mjs']];
const announce = (reason) => console.error(`Building first (npm run build, 15–20 s on a quiet machine, longer on a busy one): ${reason}.`);

/** Runs `npm run build` when staleReason() gives a reason; exits the process when the build fails. */
export function buildIfStale() {
  const reason = staleReason();
  if (!reason) return;
  announce(reason);
  const build = spawnSync(...BUILD, { cwd: ROOT, stdio: 'inherit' });
  if (build.status !== 0) process.exit(build.status ?? 1);
}

/**
 * buildIfStale() for `npm start`, which a supervisor may stop during a first build: the build runs in a process group
 * of its own, which SIGINT or SIGTERM to this process ends whole (tsc and the other steps are its children; before,
 * they went on under init), saying so. Exits the process when the build fails or is stopped.
 */
export async function buildIfStaleStoppable() {
  const reason = staleReason();
  if (!reason) return;
  announce(reason);
  const build = spawn(...BUILD, { cwd: ROOT, stdio: ['ignore', 'inherit', 'inherit'], detached: true });
  const killGroup = (signal) => {
    try {
      process.kill(-build.pid, signal);
    } catch {
      // the whole group has ended
    }
  };
  let stoppedBy;
  const stop = (signal) => {
    // a signal to the whole group comes again from npm a moment later
    if (stoppedBy) return;
    stoppedBy = signal;
    killGroup('SIGTERM');
    setTimeout(() => killGroup('SIGKILL'), 3000).unref();
  };
  process.on('SIGINT', stop).on('SIGTERM', stop);
  const status = await new Promise((resolve) => build.on('exit', (code) => resolve(code ?? 1)));
  process.off('SIGINT', stop).off('SIGTERM', stop);
  if (stoppedBy) {
    killGroup('SIGKILL'); // what of the build outlived its leader
    // on a new line: the step under way had not ended its own
    console.error(`\nBuild stopped on ${stoppedBy}: dist/ has no complete build, the next start builds again; the service was not started.`);
    process.exit(128 + constants.signals[stoppedBy]);
  }
  if (status !== 0) process.exit(status);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) buildIfStale();
