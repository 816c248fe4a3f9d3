#!/usr/bin/env bash
# The full run, `npm run test:all`, under Node.js 24 LTS, the Docker image's Node (Dockerfile), in a copy of this
# checkout (.ci/on-node.sh). Built against Node 24.19+'s headers, better-sqlite3 12's objects abort the process when
# garbage-collected ("Assertion failed: (env) != nullptr" in RemoveEnvironmentCleanupHook); built against 24.18.1's
# (the same ABI), the addon runs on every 24.x. The Docker build takes the package's prebuilt addon, which predates 24.19.
set -euo pipefail
exec "$(dirname "$0")/on-node.sh" 24.21.0 24.18.1 npm run test:all
