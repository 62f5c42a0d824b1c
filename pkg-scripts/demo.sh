#!/usr/bin/env bash
# Starts the demo: the npm package (pkg/), the page's vendored chart and Arrow JS files,
# and quiver-gateway with its in-process demo Flight service, serving the page at
# http://127.0.0.1:$PORT/www/. Ctrl-C stops the gateway.
#
# Usage: [PORT=8080] [DEMO_PROFILE=release] pkg-scripts/demo.sh
#   PORT=0 picks a free port (and prints the page's address like any other).
#   DEMO_PROFILE=debug runs the debug gateway that `cargo test` builds anyway (the tests
#   use it: the release link takes minutes on two cores, and they measure nothing).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
export PATH="$HOME/.cargo/bin:$PATH"
port=${PORT:-8080}
profile=${DEMO_PROFILE:-release}

log() { printf '[demo] %s\n' "$*"; }

# Both skip their work when the machine or the package is up to date.
pkg-scripts/setup.sh
pkg-scripts/build.sh

# The gateway serves only www/ and pkg/, and the page loads no CDN, so the browser
# builds of uPlot and apache-arrow are copied next to it (www/vendor/ is not committed).
mkdir -p www/vendor
for file in node_modules/uplot/dist/uPlot.iife.min.js node_modules/uplot/dist/uPlot.min.css \
    node_modules/apache-arrow/Arrow.es2015.min.js; do
  cp -u "$file" www/vendor/
done

case "$profile" in
  release) cargo_flags=(--release) ;;
  debug) cargo_flags=() ;;
  *) echo "DEMO_PROFILE must be release or debug, found $profile" >&2; exit 2 ;;
esac
log "cargo build ${cargo_flags[*]} -p quiver-gateway"
cargo build "${cargo_flags[@]}" -p quiver-gateway
gateway="${CARGO_TARGET_DIR:-target}/$profile/quiver-gateway"

if [ "$port" = 0 ]; then
  # Chosen here rather than by the gateway, so that the page's address can be printed.
  port=$(node -e 'const s = require("net").createServer().listen(0, "127.0.0.1", () => {
    console.log(s.address().port);
    s.close();
  });')
fi
"$gateway" --demo --static "$root" --listen "127.0.0.1:$port" &
child=$!
# A background job of a script ignores Ctrl-C, so the script stops it. `|| true`: under
# set -e a failing command in a trap would change the exit status.
stop() {
  kill "$child" 2>/dev/null || true
  wait "$child" 2>/dev/null || true
  exit 0
}
trap stop INT TERM HUP
log "open http://127.0.0.1:$port/www/ (Ctrl-C stops)"
# The gateway's own failure (a port in use) is the script's.
status=0
wait "$child" || status=$?
exit "$status"
