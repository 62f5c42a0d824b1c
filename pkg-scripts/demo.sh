#!/usr/bin/env bash
# Starts the demo: the npm package (pkg/), the page's vendored chart and Arrow JS files,
# and quiver-gateway with its in-process demo Flight service, serving the page at
# http://127.0.0.1:$PORT/www/. Ctrl-C stops the gateway.
#
# Usage: [PORT=8080] pkg-scripts/demo.sh [--prepare]
#   --prepare  build everything, then exit without starting the gateway (tests use it).
#   PORT=0     any free port; the address is printed when the gateway listens.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
export PATH="$HOME/.cargo/bin:$PATH"
port=${PORT:-8080}

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

log "cargo build --release -p quiver-gateway"
cargo build --release -p quiver-gateway
gateway="${CARGO_TARGET_DIR:-target}/release/quiver-gateway"
[ "${1:-}" = --prepare ] && exit 0

"$gateway" --demo --static "$root" --listen "127.0.0.1:$port" &
child=$!
# Stop the gateway with the script, however the script ends.
trap 'kill "$child" 2>/dev/null; wait "$child" 2>/dev/null; exit 0' INT TERM
trap 'kill "$child" 2>/dev/null' EXIT
[ "$port" = 0 ] || log "open http://127.0.0.1:$port/www/ (Ctrl-C stops)"
wait "$child"
