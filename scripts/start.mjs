// `npm start`: builds first when the build is missing or older than its sources (scripts/build-if-stale.mjs), then runs
// the service in this same process, as `node dist/server.mjs` does: no second Node start, no child to pass signals to.
import { buildIfStale } from './build-if-stale.mjs';

buildIfStale();
await import('../dist/server.mjs');
