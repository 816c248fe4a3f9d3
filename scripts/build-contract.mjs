// The served contract: Redocly's bundle of openapi/openapi.yaml (whose paths and components $ref the module files under
// openapi/) as compact JSON, dist/openapi-leads.json, which the service serves byte for byte. Redocly fails on an
// unresolved $ref, a duplicate key or two components that would get the same name, and then so does the build.
import { execFileSync } from 'node:child_process';
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const redocly = fileURLToPath(import.meta.resolve('@redocly/cli/bin/cli.js'));
const args = ['bundle', 'openapi/openapi.yaml', '--ext', 'json', '--component-renaming-conflicts-severity', 'error'];

let bundle;
try {
  // Redocly's progress lines and its Node 20 notice go to stderr: shown only when it fails.
  bundle = execFileSync(process.execPath, [redocly, ...args], {
    cwd: root,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
  });
} catch (error) {
  process.stderr.write(error.stderr ?? '');
  throw new Error('redocly bundle openapi/openapi.yaml failed', { cause: error });
}
// Written aside and renamed: test/support/contract.ts may rebuild it from several jest workers at once.
mkdirSync(`${root}dist`, { recursive: true });
const temporary = `${root}dist/openapi-leads.json.${process.pid}`;
writeFileSync(temporary, JSON.stringify(JSON.parse(bundle)));
renameSync(temporary, `${root}dist/openapi-leads.json`);
