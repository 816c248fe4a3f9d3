// `npm run build`: tsc (dist/src/, with source maps), the served contract, the release build of the service
// (scripts/release/) and its code cache, the command-line client; last, the stamp that scripts/build-if-stale.mjs
// compares with the sources. Each step says on stderr what it builds and how long it took (scripts/build-progress.mjs).
import { spawnSync } from 'node:child_process';
import { rmSync, utimesSync, writeFileSync } from 'node:fs';
import { ROOT, STAMP, stampText } from './build-if-stale.mjs';
import { buildProgress } from './build-progress.mjs';
import { bundleService, trainService } from './release/bundle.mjs';

process.chdir(ROOT);
const started = new Date();
rmSync(STAMP, { force: true });

/** Runs a command to its end and gives what it wrote; a failure throws that output, with the command's status. */
function run(command, args) {
  const result = spawnSync(command, args, { stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  const output = `${result.stdout ?? ''}${result.stderr ?? ''}`;
  if (result.status === 0) return output;
  throw Object.assign(new Error(output.trim() || result.error?.message || `${command} failed`), { status: result.status ?? 1 });
}

const progress = buildProgress(5);
try {
  await progress.step('TypeScript (tsc → dist/src/)', () => run(process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.build.json']));
  await progress.step('the contract (openapi/ → dist/openapi-leads.json)', () => run(process.execPath, ['scripts/build-contract.mjs']));
  await progress.step('the release build of the service (esbuild → dist/server.cjs)', bundleService);
  await progress.step('its code cache (a training start of dist/server.mjs)', trainService);
  await progress.step('the command-line client (dist/cli/leads.cjs)', () => run('npm', ['run', '--silent', 'build:cli']));
} catch (error) {
  // a command's own output says what went wrong; an error of this script's steps, with its stack
  console.error(error.status ? error.message : error);
  process.exit(error.status ?? 1);
}

writeFileSync(STAMP, stampText());
utimesSync(STAMP, started, started);
progress.done();
