// dist/server.mjs (copied there by scripts/release/bundle.mjs): what `npm start`, the Dockerfile, the process tests and
// the benchmarks run. It turns on source maps, so that logged stack traces name src/…ts lines, and Node's compile cache
// where Node has one (22.1 and later), then loads the service's bundle.
import module from 'node:module';
import v8 from 'node:v8';

// Before the bundle loads: Node reads a module's source map only if they are on when it compiles the module.
if (module.setSourceMapsSupport) module.setSourceMapsSupport(true);
else process.setSourceMapsEnabled(true);
// V8's compiled code for the bundle, kept by Node in the system's temporary folder and checked against the source.
module.enableCompileCache?.();
await import('./service.mjs');
// written now: a process that is killed would not write it at exit
module.flushCompileCache?.();

// V8 lets the heap grow to four times what the last full collection kept; MCP under load then peaked at 320 MB. A
// tenth keeps every scenario under 180 MB (bench/RESULTS.md). Set after the bundle's top level: set before, it slowed
// the start by 4–7%. A value given on the command line wins.
if (!process.execArgv.some((arg) => /^--heap[-_]growing[-_]percent/.test(arg))) v8.setFlagsFromString('--heap-growing-percent=10');
