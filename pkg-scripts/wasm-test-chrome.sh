#!/usr/bin/env bash
# The wasm-bindgen-test suites in headless Chromium (see test.sh), with Chromium's
# requests going through close-proxy.mjs. Without it a test page now and then never
# loads: wasm-bindgen-test-runner's server leaves one of the page's connections unread
# (a race in tiny_http's worker pool, described in close-proxy.mjs), seen on about one
# page load in six here.
set -euo pipefail
cd "$(dirname "$0")/.."

work=$(mktemp -d)
node pkg-scripts/close-proxy.mjs >"$work/proxy.log" &
proxy=$!
trap 'kill "$proxy" 2>/dev/null; rm -rf "$work"' EXIT
for _ in $(seq 50); do
  port=$(head -n1 "$work/proxy.log")
  [ -n "$port" ] && break
  sleep 0.1
done
[ -n "$port" ] || { echo "[wasm-test-chrome] close-proxy did not start" >&2; exit 1; }

# wasm-bindgen-test-runner adds these arguments to the ones it gives Chromium.
# `<-loopback>` makes Chromium send requests for 127.0.0.1 through the proxy too.
cat >"$work/webdriver.json" <<EOF
{ "goog:chromeOptions": { "args": ["--proxy-server=http://127.0.0.1:$port", "--proxy-bypass-list=<-loopback>"] } }
EOF

WASM_BINDGEN_USE_BROWSER=1 CHROMEDRIVER="$(command -v chromedriver)" \
  WASM_BINDGEN_TEST_WEBDRIVER_JSON="$work/webdriver.json" \
  wasm-pack test --headless --chrome

# The workaround must have been in the path: every test page is fetched through it.
if ! grep -q '_bg\.wasm' "$work/proxy.log"; then
  echo "[wasm-test-chrome] no test page went through close-proxy; check the Chromium arguments" >&2
  exit 1
fi
