#!/usr/bin/env bash
# The wasm-bindgen-test suites in headless Firefox through geckodriver (see test.sh), with
# Firefox's requests going through close-proxy.mjs, as wasm-test-chrome.sh does for
# Chromium: the test-page hang it works around is in wasm-bindgen-test-runner's server
# (described in close-proxy.mjs), whichever browser loads the page.
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
[ -n "$port" ] || { echo "[wasm-test-firefox] close-proxy did not start" >&2; exit 1; }

# wasm-bindgen-test-runner merges these capabilities into the ones it gives geckodriver.
# Firefox bypasses any proxy for localhost unless allow_hijacking_localhost is set.
cat >"$work/webdriver.json" <<JSON
{ "moz:firefoxOptions": {
    "binary": "$(command -v firefox-esr)",
    "prefs": {
      "network.proxy.type": 1,
      "network.proxy.http": "127.0.0.1",
      "network.proxy.http_port": $port,
      "network.proxy.allow_hijacking_localhost": true,
      "network.proxy.no_proxies_on": ""
    } } }
JSON

WASM_BINDGEN_USE_BROWSER=1 GECKODRIVER="$(command -v geckodriver)" \
  WASM_BINDGEN_TEST_WEBDRIVER_JSON="$work/webdriver.json" \
  wasm-pack test --headless --firefox

# The workaround must have been in the path: every test page is fetched through it.
if ! grep -q '_bg\.wasm' "$work/proxy.log"; then
  echo "[wasm-test-firefox] no test page went through close-proxy; check the Firefox prefs" >&2
  exit 1
fi
