// dist/server.mjs, what `npm start` runs (copied there by scripts/bundle-server.mjs). Node 20 keeps no compiled code
// between runs, and compiling the 7.5 MB bundle and the functions its start-up calls was a third of the time to the
// first healthy answer. This runs the CommonJS bundle dist/server.cjs through vm.Script with V8's code cache from
// dist/server.cjs.cache, which the build writes after a training start (bench/RESULTS.md); V8 checks the cache against
// the source, its own version and its flags, and compiles as usual whenever it does not fit.
import { readFileSync, writeFileSync } from 'node:fs';
import Module, { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
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
  // The bundle has no import() left (scripts/bundle-server.mjs), so it needs no importModuleDynamically.
  return new vm.Script(Module.wrap(readFileSync(bundle, 'utf8')), { filename: bundle, cachedData });
}

const script = compile();
const run = script.runInThisContext();

// The build's training start: write the cache, with every function compiled so far, when told to.
if (process.argv.includes('--write-code-cache')) {
  process.once('SIGUSR2', () => {
    writeFileSync(cacheFile, script.createCachedData());
    process.exit(0);
  });
}

const module = { exports: {}, filename: bundle, id: bundle, loaded: false };
run.call(module.exports, module.exports, createRequire(bundle), module, bundle, dirname(bundle));
