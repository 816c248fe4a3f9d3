// Bundles the compiled service (dist/src/main.js) into dist/server.cjs, which dist/server.mjs (the file `npm start`
// runs, scripts/server-launcher.mjs) loads with V8's code cache; then starts it once to write that cache. Node 20 has
// no module compile cache, and loading the module graph file by file was most of the start-up time.
import { copyFileSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { build } from 'esbuild';
import { restoreNames } from './restore-names.mjs';
import { trainCodeCache } from './train-code-cache.mjs';

const OUTFILE = 'dist/server.cjs';
const LAUNCHER = 'dist/server.mjs';

await build({
  entryPoints: ['dist/src/main.js'],
  outfile: OUTFILE,
  bundle: true,
  platform: 'node',
  // CommonJS, because vm.Script (which takes a code cache) runs scripts, not modules; Nest's ESM build reads
  // import.meta.url for createRequire.
  format: 'cjs',
  define: { 'import.meta.url': '__bundleUrl' },
  // import() becomes require(): a vm.Script that can import() needs a host callback, which cost 1.5% of a lead's CPU.
  supported: { 'dynamic-import': false },
  target: 'node20',
  // Identifiers stay unminified: Nest, TypeORM and graphql read class names at run time, and with the original names
  // in place keepNames has almost nothing to rename (see the helper below).
  minifyWhitespace: true,
  minifySyntax: true,
  keepNames: true,
  logLevel: 'warning',
  // Native, optional or never-loaded modules; swagger-ui-dist is read from disk for its asset folder.
  external: [
    'better-sqlite3',
    'swagger-ui-dist',
    '@apollo/gateway',
    '@apollo/subgraph',
    '@as-integrations/fastify',
    '@nestjs/microservices',
    '@nestjs/websockets',
    'bufferutil',
    'utf-8-validate',
    'ts-morph',
  ],
  // "use strict" first: the code from ES modules must stay strict, and a directive counts only before any statement.
  banner: { js: '"use strict";var __bundleUrl = require("node:url").pathToFileURL(__filename).href;' },
  plugins: [
    {
      // @nestjs/typeorm looks up `Connection` and `AbstractRepository`, which TypeORM 1.x no longer has, with a runtime
      // require() that esbuild cannot follow: it loaded a second, unbundled TypeORM (2.5 MB of source) to find nothing.
      name: 'typeorm-compat',
      setup(onBuild) {
        onBuild.onLoad({ filter: /@nestjs[\\/]typeorm[\\/]dist[\\/]common[\\/]typeorm-compat\.js$/ }, () => ({
          contents: 'export const Connection = undefined;\nexport const AbstractRepository = undefined;\n',
          loader: 'js',
        }));
      },
    },
  ],
});

let code = readFileSync(OUTFILE, 'utf8');

code = restoreNames(code).code;

// What keeps its __name call: rename only when the name differs, and leave arrow functions, whose names nothing reads,
// as they are (hasOwn: reading `prototype` would create it). A renamed class is then used once as a prototype, which
// brings V8 back to fast properties (a plain function stays slow, but nothing reads properties of those).
const NAME_HELPER = 'var __name=(target,value)=>__defProp(target,"name",{value,configurable:!0})';
if (!code.includes(NAME_HELPER)) throw new Error(`esbuild's __name helper changed; update ${import.meta.url}`);
code = code.replace(
  NAME_HELPER,
  'var __name=(target,value)=>(target.name!==value&&Object.hasOwn(target,"prototype")&&(__defProp(target,"name",{value,configurable:!0}),Object.setPrototypeOf({},target)),target)',
);

// esbuild escapes non-ASCII text except inside regular expression literals (validator's alphabets); one such character
// makes V8 hold the whole 7 MB source as UTF-16, twice the memory. \uXXXX means the same inside a regular expression.
if (/\\[\u0080-\uffff]/.test(code)) throw new Error('a non-ASCII character follows a backslash in the bundle: escape it by hand');
code = code.replace(/[\u0080-\uffff]/g, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);

// The old cache first: V8 would take it for a new bundle of the same length (scripts/server-launcher.mjs).
rmSync(`${OUTFILE}.cache`, { force: true });
writeFileSync(OUTFILE, code);
copyFileSync('scripts/server-launcher.mjs', LAUNCHER);
await trainCodeCache(LAUNCHER, `${OUTFILE}.cache`);
