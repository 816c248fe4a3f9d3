// `npm start`: builds first when the build is missing or older than its sources (scripts/build-if-stale.mjs), then runs
// the service in this same process, as `node dist/server.mjs` does: no second Node start. The script is `exec node …`:
// npm runs it through `sh -c` and passes SIGTERM and SIGINT on to that shell only, which dash (Debian's sh) neither
// passes on nor dies of (SIGINT); exec makes this process the one npm signals.
import { clearInterval, setInterval } from 'node:timers';
import { buildIfStaleStoppable } from './build-if-stale.mjs';

if (process.env.npm_lifecycle_event === 'start') {
  // A signal to the whole group (Ctrl+C at a terminal, systemd's default KillMode) now comes twice: once directly and,
  // milliseconds later, npm's copy. The copy must not count as the second signal that ends the service at once
  // (src/main.ts): a repeat within a second is dropped. Otherwise this listener acts as if it were not there.
  for (const signal of ['SIGINT', 'SIGTERM']) {
    let last = -Infinity;
    const onSignal = () => {
      const repeat = Date.now() - last < 1000;
      last = Date.now();
      // the service's own handler, still there, stops it gracefully
      if (process.listenerCount(signal) > 1 || repeat) return;
      // a signal before the service is up, or a second one: its default action, as without this listener
      process.removeListener(signal, onSignal);
      process.kill(process.pid, signal);
    };
    process.on(signal, onSignal);
  }
  // A signal npm cannot pass on (its own SIGKILL) would leave this process orphaned, holding the port: stop as on
  // SIGTERM once the npm that started it is gone. Only under npm: started by hand it may outlive its shell on purpose.
  const npm = process.ppid;
  const watch = setInterval(() => {
    if (process.ppid === npm) return;
    clearInterval(watch);
    process.kill(process.pid, 'SIGTERM');
  }, 250).unref();
}
// Its listeners come first: a signal while it builds (or npm's end, above) stops the build and this process.
await buildIfStaleStoppable();
await import('../dist/server.mjs');
