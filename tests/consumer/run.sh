#!/usr/bin/env bash
# The package as a consumer meets it: packs pkg/ with `npm pack` and installs the tarball
# from the registry's point of view into fresh folders under target/consumer/ (never the
# source tree), then
#   1. a Vite app imports quiver-arrow, decodes a stream, `vite build`s, and the built app
#      runs in headless Chromium, Firefox and WebKit (browser.mjs); so does the same app from Vite's dev
#      server, which pre-bundles the package: as it is in Vite 8, while Vite 7's needs
#      `optimizeDeps.exclude` and, without it, fails with init()'s Error that says so;
#   2. a Node ESM script uses the reader, the writer and toArrowJS with apache-arrow;
#   3. tsc --strict compiles tests/js/types/example.ts (the whole API) against the
#      installed package's types, with Node's and with a bundler's resolution.
# Needs pkg/ built (pkg-scripts/build.sh). Registry downloads are cached in
# target/npm-cache, so after the first run the installs take seconds.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"

VITE_VERSION=8.3.8
# The last Vite whose dev server pre-bundles with esbuild, which leaves the .wasm behind.
VITE_ESBUILD_VERSION=7.3.8
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
expected='{"rows":10000,"sum":49995000,"names":["x","s"],"strings":["s0","s1","s2"]}'
for engine in chromium firefox webkit; do
  node "$here/browser.mjs" "$work/vite/dist" "$expected" "$engine"
done

# Runs Vite's dev server in the app folder $1 on a free port while browser.mjs checks the
# page against the expected result $2.
check_dev_server() {
  local port pid status=0
  port=$(node -e 'const s = require("net").createServer().listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close(); })')
  (cd "$1" && exec node_modules/.bin/vite --host 127.0.0.1 --port "$port" --strictPort --logLevel warn) &
  pid=$!
  # Until it answers, for at most 30 s.
  node -e '
    const until = Date.now() + 30000;
    (async () => { while (!(await fetch(process.argv[1]).then((r) => r.ok, () => false)) && Date.now() < until) await new Promise((r) => setTimeout(r, 300)); })();
  ' "http://127.0.0.1:$port/"
  node "$here/browser.mjs" "http://127.0.0.1:$port/" "$2" || status=$?
  kill "$pid"
  wait "$pid" 2>/dev/null || true
  return "$status"
}
log "1b. the same app from Vite $VITE_VERSION's dev server, as it is"
check_dev_server "$work/vite" "$expected"

log "1c. the same app from Vite $VITE_ESBUILD_VERSION's dev server: without optimizeDeps.exclude, then with it"
fresh vite7 "vite@$VITE_ESBUILD_VERSION"
cp -r "$here/vite/index.html" "$here/vite/main.js" "$work/vite/public" "$work/vite7/"
check_dev_server "$work/vite7" '{"error":"the server sent text/html, not WebAssembly. A dev server that pre-bundles"}'
echo "export default { optimizeDeps: { exclude: ['quiver-arrow'] } };" > "$work/vite7/vite.config.js"
check_dev_server "$work/vite7" "$expected"

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
