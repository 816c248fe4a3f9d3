// Before `npm run start:dev`: dist/dev/ holds SWC's CommonJS output (nest-cli.json, swc.dev.jsonc) inside an
// ES module package, so it gets a package.json of its own that says so.
import { mkdirSync, writeFileSync } from 'node:fs';

mkdirSync('dist/dev', { recursive: true });
writeFileSync('dist/dev/package.json', '{ "type": "commonjs" }\n');
