#!/usr/bin/env bash
# The wasm-bindgen-test suites in a headless browser (see test.sh), `chrome` or `firefox`,
# with the browser's requests going through close-proxy.mjs. Without it a test page now
# and then never loads: wasm-bindgen-test-runner's server leaves one of the page's
# connections unread (a race in tiny_http's worker pool, described in close-proxy.mjs),
# seen on about one page load in six here, whichever browser loads the page.
set -euo pipefail
cd "$(dirname "$0")/.."
browser=${1:?usage: wasm-test-browser.sh chrome|firefox}

work=$(mktemp -d)
node pkg-scripts/close-proxy.mjs >"$work/proxy.log" &
proxy=$!
trap 'kill "$proxy" 2>/dev/null; rm -rf "$work"' EXIT
for _ in $(seq 50); do
  port=$(head -n1 "$work/proxy.log")
  [ -n "$port" ] && break
  sleep 0.1
done
[ -n "$port" ] || { echo "[wasm-test-$browser] close-proxy did not start" >&2; exit 1; }

# wasm-bindgen-test-runner merges these capabilities into the ones it gives the driver.
case $browser in
  chrome)
    # `<-loopback>` makes Chromium send requests for 127.0.0.1 through the proxy too.
    cat >"$work/webdriver.json" <<JSON
{ "goog:chromeOptions": { "args": ["--proxy-server=http://127.0.0.1:$port", "--proxy-bypass-list=<-loopback>"] } }
JSON
    export CHROMEDRIVER="$(command -v chromedriver)"
    ;;
  firefox)
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
    export GECKODRIVER="$(command -v geckodriver)"
    ;;
  *) echo "[wasm-test-browser] unknown browser '$browser': expected chrome or firefox" >&2; exit 2 ;;
esac

WASM_BINDGEN_USE_BROWSER=1 WASM_BINDGEN_TEST_WEBDRIVER_JSON="$work/webdriver.json" \
  wasm-pack test --headless "--$browser"

# The workaround must have been in the path: every test page is fetched through it.
if ! grep -q '_bg\.wasm' "$work/proxy.log"; then
  echo "[wasm-test-$browser] no test page went through close-proxy; check the $browser options above" >&2
  exit 1
fi
