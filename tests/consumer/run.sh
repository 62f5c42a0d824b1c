#!/usr/bin/env bash
# The package as a consumer meets it: packs pkg/ with `npm pack` and installs the tarball
# from the registry's point of view into fresh folders under target/consumer/ (never the
# source tree), then
#   1. a Vite app imports quiver-arrow, decodes a stream, `vite build`s, and the built app
#      runs in headless chromium (browser.mjs);
#   2. a Node ESM script uses the reader, the writer and toArrowJS with apache-arrow;
#   3. tsc --strict compiles tests/js/types/example.ts (the whole API) against the
#      installed package's types, with Node's and with a bundler's resolution.
# Needs pkg/ built (pkg-scripts/build.sh). Registry downloads are cached in
# target/npm-cache, so after the first run the installs take seconds.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"

VITE_VERSION=8.3.8
# The same apache-arrow the repo's tests use.
ARROW_VERSION=$(node -p 'require("./package.json").devDependencies["apache-arrow"]')
here=tests/consumer
work=$root/target/consumer
export npm_config_cache=$root/target/npm-cache

log() { printf '[consumer] %s\n' "$*"; }

rm -rf "$work"
mkdir -p "$work"
tarball=$work/$(npm pack ./pkg --pack-destination "$work" --silent | tail -1)
log "packed $tarball"

# A fresh npm project in $work/$1 with the tarball and the given registry packages.
fresh() {
  local dir=$work/$1
  shift
  mkdir -p "$dir"
  echo '{ "private": true, "type": "module" }' > "$dir/package.json"
  (cd "$dir" && npm install --prefer-offline --no-audit --no-fund --loglevel=error "$tarball" "$@")
}

log "1. Vite $VITE_VERSION app"
fresh vite "vite@$VITE_VERSION"
cp "$here/vite/index.html" "$here/vite/main.js" "$work/vite/"
mkdir -p "$work/vite/public"
# The stream the app fetches, written by apache-arrow: 10,000 rows, x = 0..9999, s = "s<x>".
node -e '
  const arrow = require("apache-arrow");
  const n = 10000;
  const table = arrow.tableFromArrays({
    x: Int32Array.from({ length: n }, (_, i) => i),
    s: Array.from({ length: n }, (_, i) => "s" + i),
  });
  require("fs").writeFileSync(process.argv[1], arrow.tableToIPC(table, "stream"));
' "$work/vite/public/data.arrows"
(cd "$work/vite" && npx --no-install vite build --logLevel warn)
node "$here/browser.mjs" "$work/vite/dist" \
  '{"rows":10000,"sum":49995000,"names":["x","s"],"strings":["s0","s1","s2"]}'

log "2. Node $(node --version) script"
fresh node "apache-arrow@$ARROW_VERSION"
cp "$here/node.mjs" "$work/node/"
(cd "$work/node" && node node.mjs)

log "3. tsc --strict against the installed types"
fresh types "apache-arrow@$ARROW_VERSION"
cp tests/js/types/example.ts "$here/tsconfig.json" "$work/types/"
node_modules/.bin/tsc -p "$work/types/tsconfig.json"
node_modules/.bin/tsc -p "$work/types/tsconfig.json" --module esnext --moduleResolution bundler
log "ok"
