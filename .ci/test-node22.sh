#!/usr/bin/env bash
# A short run under Node.js 22 LTS (engines: ^22.12.0), enough to catch an addon or runtime break: the build under 22,
# the database unit specs (better-sqlite3 rebuilt for 22's ABI, and pg), the lead path in process on SQLite and
# PostgreSQL, and the built service as a process (start, code cache, signals, logs). The full run is Node 24's.
set -euo pipefail
exec "$(dirname "$0")/on-node.sh" 22.23.3 22.23.3 npm run test:all -- src/database test/leads.e2e-spec.ts test/process.e2e-spec.ts
