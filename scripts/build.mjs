// `npm run build`: tsc (dist/src/, with source maps), the served contract, the release build of the service
// (scripts/release/), the command-line client; last, the stamp that scripts/build-if-stale.mjs compares with the sources.
import { spawnSync } from 'node:child_process';
import { rmSync, utimesSync, writeFileSync } from 'node:fs';
import { ROOT, STAMP, stampText } from './build-if-stale.mjs';
import { bundleService } from './release/bundle.mjs';

process.chdir(ROOT);
const started = new Date();
rmSync(STAMP, { force: true });

function run(command, args) {
  const result = spawnSync(command, args, { stdio: 'inherit' });
  if (result.status !== 0) process.exit(result.status ?? 1);
}

run(process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.build.json']);
run('npm', ['run', '--silent', 'build:contract']);
await bundleService();
run('npm', ['run', '--silent', 'build:cli']);

writeFileSync(STAMP, stampText());
utimesSync(STAMP, started, started);
