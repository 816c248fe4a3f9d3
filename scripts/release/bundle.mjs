// The release build of the service, everything `npm start` runs that tsc alone would not give (README, "Release
// build", says what each part buys, measured):
// - dist/server.cjs: tsc's output (dist/src/main.js) and its dependencies bundled by esbuild into one CommonJS file,
//   with the names pass (scripts/release/restore-names.mjs), and dist/server.cjs.map, which maps it to src/…ts lines;
// - dist/server.mjs (scripts/release/launcher.mjs), which loads the bundle with V8's code cache, and the cache itself,
//   dist/server.cjs.cache, written after a training start (scripts/release/train-code-cache.mjs).
// Every pass over esbuild's output is a list of text edits (scripts/release/text-edits.mjs), so the map stays true.
// Each pass checks what it relies on and stops the build when a dependency upgrade changes it.
import { copyFileSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { restoreNames } from './restore-names.mjs';
import { applyEdits, lineLevelMappings } from './text-edits.mjs';
import { trainCodeCache } from './train-code-cache.mjs';

const BUNDLE = 'dist/server.cjs';
const LAUNCHER = 'dist/server.mjs';

export async function bundleService() {
  const result = await build({
    entryPoints: ['dist/src/main.js'],
    outfile: BUNDLE,
    write: false,
    bundle: true,
    platform: 'node',
    // CommonJS, because vm.Script (which takes a code cache) runs scripts, not modules; Nest's ESM build reads
    // import.meta.url for createRequire.
    format: 'cjs',
    define: { 'import.meta.url': '__bundleUrl' },
    // import() becomes require(): a vm.Script that can import() needs a host callback, which cost 1.5% of a lead's CPU.
    supported: { 'dynamic-import': false },
    target: 'node20',
    // tsc's maps (tsconfig.json, sourceMap) are followed back to src/…ts; libraries are mapped to their own .js files
    // (see the plugin below). Without sourcesContent: the sources are in the package, and the map stays a third smaller.
    sourcemap: 'linked',
    sourcesContent: false,
    // Identifiers stay unminified: Nest, TypeORM and graphql read class names at run time, and with the original names
    // in place keepNames has little to rename (scripts/release/restore-names.mjs).
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
        // The image has no src/ (Dockerfile): the docs pages' Markdown goes into the bundle, as the tsc build reads it
        // (dist/src/docs/page-files.js). Loading the pages here first checks them as a start would: an unknown
        // placeholder or a fact no page uses stops the build.
        name: 'docs-pages',
        setup(onBuild) {
          onBuild.onLoad({ filter: /[\\/]dist[\\/]src[\\/]docs[\\/]page-files\.js$/ }, async ({ path }) => {
            await import(pathToFileURL(path.replace(/page-files\.js$/, 'docs.pages.js')).href);
            const { PAGE_FILES } = await import(pathToFileURL(path).href);
            return { contents: `export const PAGE_FILES = ${JSON.stringify(PAGE_FILES)};\n`, loader: 'js' };
          });
        },
      },
      {
        // The e-mail templates (src/mail/templates/*.eta) go into the bundle the same way, as the tsc build reads them
        // (dist/src/mail/template-files.js). Compiling them here first checks them as a start would: a broken template,
        // or a mail without a part in some language, stops the build.
        name: 'mail-templates',
        setup(onBuild) {
          onBuild.onLoad({ filter: /[\\/]dist[\\/]src[\\/]mail[\\/]template-files\.js$/ }, async ({ path }) => {
            const { TEMPLATE_FILES } = await import(pathToFileURL(path).href);
            const { EtaMailTemplates } = await import(pathToFileURL(path.replace(/template-files\.js$/, 'eta-mail-templates.js')).href);
            new EtaMailTemplates('UTC', TEMPLATE_FILES);
            return { contents: `export const TEMPLATE_FILES = ${JSON.stringify(TEMPLATE_FILES)};\n`, loader: 'js' };
          });
        },
      },
      {
        // The inbox's templates and assets (src/inbox/views, src/inbox/assets, htmx) the same way; compiling the
        // templates here first checks them as a start would.
        name: 'inbox-files',
        setup(onBuild) {
          onBuild.onLoad({ filter: /[\\/]dist[\\/]src[\\/]inbox[\\/]inbox-files\.js$/ }, async ({ path }) => {
            const { VIEW_FILES, ASSET_FILES } = await import(pathToFileURL(path).href);
            const { InboxViews } = await import(pathToFileURL(path.replace(/inbox-files\.js$/, 'inbox-views.js')).href);
            new InboxViews(VIEW_FILES);
            return {
              contents: `export const VIEW_FILES = ${JSON.stringify(VIEW_FILES)};\nexport const ASSET_FILES = ${JSON.stringify(ASSET_FILES)};\n`,
              loader: 'js',
            };
          });
        },
      },
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
      {
        // Libraries' own source maps point at TypeScript they do not ship (TypeORM's at "../../src/…", which reads like
        // this service's src/): a frame in a library names the .js file in node_modules instead.
        name: 'library-frames-as-shipped',
        setup(onBuild) {
          onBuild.onLoad({ filter: /[\\/]node_modules[\\/].*\.[cm]?js$/ }, ({ path }) => ({
            contents: readFileSync(path, 'utf8').replace(/\/\/# sourceMappingURL=\S*\s*$/, ''),
            loader: 'js',
          }));
        },
      },
    ],
  });
  const output = (suffix) => result.outputFiles.find((file) => file.path.endsWith(suffix)).text;
  let code = output('.cjs');
  let map = JSON.parse(output('.cjs.map'));

  const calls = code.split('__name(').length - 1;
  const names = restoreNames(code, map);
  ({ code, map } = names);
  // Today 1,297 of ~10,000 calls are kept (function declarations esbuild renamed, helpers). Most of them kept means the
  // pass no longer recognises esbuild's output, and every lead would pay for slow properties again (bench/RESULTS.md).
  if (names.kept > calls / 4) throw new Error(`restore-names kept ${names.kept} of ${calls} __name calls; see scripts/release/restore-names.mjs`);

  // What keeps its __name call: rename only when the name differs, and leave arrow functions, whose names nothing
  // reads, as they are (hasOwn: reading `prototype` would create it). A renamed class is then used once as a prototype,
  // which brings V8 back to fast properties (a plain function stays slow, but nothing reads properties of those).
  const NAME_HELPER = 'var __name=(target,value)=>__defProp(target,"name",{value,configurable:!0})';
  const helperAt = code.indexOf(NAME_HELPER);
  if (helperAt < 0) throw new Error("esbuild's __name helper changed; update scripts/release/bundle.mjs");
  const edits = [
    [
      helperAt,
      helperAt + NAME_HELPER.length,
      'var __name=(target,value)=>(target.name!==value&&Object.hasOwn(target,"prototype")&&(__defProp(target,"name",{value,configurable:!0}),Object.setPrototypeOf({},target)),target)',
    ],
  ];
  // esbuild escapes non-ASCII text except inside regular expression literals (validator's alphabets); one such
  // character makes V8 hold the whole 7 MB source as UTF-16, twice the memory. \uXXXX means the same in a regular
  // expression.
  if (/\\[\u0080-\uffff]/.test(code)) throw new Error('a non-ASCII character follows a backslash in the bundle: escape it by hand');
  for (const match of code.matchAll(/[\u0080-\uffff]/g)) {
    edits.push([match.index, match.index + 1, `\\u${match[0].charCodeAt(0).toString(16).padStart(4, '0')}`]);
  }
  ({ code, map } = applyEdits(code, edits, map));

  // Node reads the whole map the first time it formats a stack: at every column of every library, that held the event
  // loop for ~300 ms; a library frame keeps its file and line, and the map shrinks from 5.1 to 1.6 MB (~90 ms).
  map = lineLevelMappings(map, (source) => source.includes('node_modules/'));

  // The old cache first: V8 would take it for a new bundle of the same length (scripts/release/launcher.mjs).
  rmSync(`${BUNDLE}.cache`, { force: true });
  writeFileSync(BUNDLE, code);
  writeFileSync(`${BUNDLE}.map`, JSON.stringify(map));
  copyFileSync('scripts/release/launcher.mjs', LAUNCHER);
}

/** The code cache for the bundle bundleService() wrote, from a training start (scripts/release/train-code-cache.mjs). */
export const trainService = () => trainCodeCache(LAUNCHER, `${BUNDLE}.cache`);

// `npm run build:server`: this step alone
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await bundleService();
  await trainService();
}
