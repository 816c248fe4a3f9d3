// `npm start`: builds first when the build is missing or older than its sources (scripts/build-if-stale.mjs), then runs
// the service in this same process, as `node dist/server.mjs` does (one process, so signals reach the service).
import { buildIfStale } from './build-if-stale.mjs';

buildIfStale();
await import('../dist/server.mjs');
