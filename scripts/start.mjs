// `npm start`: builds first when the build is missing or older than its sources (scripts/build-if-stale.mjs), then runs
// the service in this same process, as `node dist/server.mjs` does: no second Node start. The script is `exec node …`:
// npm runs it through `sh -c` and forwards SIGTERM and SIGINT to that shell only, which dash (Debian's sh) does not pass
// on; exec makes this process the one npm signals.
import { clearInterval, setInterval } from 'node:timers';
import { buildIfStale } from './build-if-stale.mjs';

buildIfStale();
// A signal npm cannot forward (its own SIGKILL) leaves this process orphaned, holding the port: stop as on SIGTERM once
// the npm that started it is gone. Only under npm, whose pid is the parent's: started by hand it may outlive its shell.
if (process.env.npm_lifecycle_event === 'start') {
  const npm = process.ppid;
  const watch = setInterval(() => {
    if (process.ppid === npm) return;
    clearInterval(watch);
    process.kill(process.pid, 'SIGTERM');
  }, 250).unref();
}
await import('../dist/server.mjs');
