// dist/server.mjs (copied there by scripts/release/bundle.mjs): what `npm start`, the Dockerfile, the process tests and
// the benchmarks run. It compiles the CommonJS bundle dist/server.cjs through vm.Script with V8's code cache from
// dist/server.cjs.cache, which the build writes after a training start (scripts/release/train-code-cache.mjs): Node
// keeps no compiled code between runs (Node 22's compile cache holds only what is compiled before anything runs), and
// compiling the 7.5 MB bundle and the functions its start-up calls was a third of the time to the first healthy answer.
// V8 compiles as usual when the cache does not fit its version, its flags or the source's length; a cache that fits
// stale source of the same length would be taken, so the build removes the cache before it writes a bundle and writes
// a cache atomically.
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import Module, { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import v8 from 'node:v8';
import vm from 'node:vm';

const bundle = fileURLToPath(new URL('./server.cjs', import.meta.url));
const cacheFile = `${bundle}.cache`;

/** The bundle compiled with the cache; the cache's 6 MB are garbage once V8 has read them. */
function compile() {
  let cachedData;
  try {
    cachedData = readFileSync(cacheFile);
  } catch {
    // no cache (a build that could not train): compile as Node would
  }
  // esbuild turned the bundle's import() calls into require() (scripts/release/bundle.mjs), so it needs no
  // importModuleDynamically; TypeORM's file loader keeps one inside a Function(), which Node's own loader serves.
  // The column offset takes the wrapper off the first line's columns, so that they are the bundle's (its source map).
  const source = Module.wrap(readFileSync(bundle, 'utf8'));
  return new vm.Script(source, { filename: bundle, columnOffset: -Module.wrapper[0].length, cachedData });
}

// Logged stack traces name src/…ts lines. Node maps the frames of a file whose source map it has read; it reads one
// only as it compiles a module (never for vm.Script) and keeps it only while that module lives. So the bundle's module
// is a real one, in require.cache like any loaded module, and compiling it once with just the map's comment makes Node
// read dist/server.cjs.map for the bundle's frames (test/process.e2e-spec.ts checks it).
if (Module.setSourceMapsSupport) Module.setSourceMapsSupport(true);
else process.setSourceMapsEnabled(true);
const bundleModule = new Module(bundle);
bundleModule.filename = bundle;
createRequire(bundle).cache[bundle] = bundleModule;
bundleModule._compile('//# sourceMappingURL=server.cjs.map', bundle);

const script = compile();
// For the process suite: whether V8 refused the cache, under exactly the conditions of a start.
if (process.argv.includes('--code-cache-rejected')) {
  process.stdout.write(String(script.cachedDataRejected));
  process.exit(0);
}
const run = script.runInThisContext();

// The build's training start: write the cache, with every function compiled so far, when told to.
if (process.argv.includes('--write-code-cache')) {
  process.once('SIGUSR2', () => {
    // V8 ties a cache to the flags it was made under, and a start compiles before the heap is tuned (below).
    v8.setFlagsFromString('--heap-growing-percent=0');
    writeFileSync(`${cacheFile}.tmp`, script.createCachedData());
    renameSync(`${cacheFile}.tmp`, cacheFile);
    process.exit(0);
  });
  // and never outlive the build that started it
  process.stdin.on('end', () => process.exit(1)).resume();
}

run.call(bundleModule.exports, bundleModule.exports, createRequire(bundle), bundleModule, bundle, dirname(bundle));

// V8 lets the heap grow to four times what the last full collection kept; MCP under load then peaked at 320 MB. A
// tenth keeps every scenario under 180 MB (bench/RESULTS.md). Set after the bundle's top level: set before, it slowed
// the start by 4–7%. A value given on the command line wins.
if (!process.execArgv.some((arg) => /^--heap[-_]growing[-_]percent/.test(arg))) v8.setFlagsFromString('--heap-growing-percent=10');
