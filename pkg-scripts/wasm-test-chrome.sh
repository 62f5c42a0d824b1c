#!/usr/bin/env bash
# The wasm-bindgen-test integration suites in headless Chromium (see test.sh). Now and then
# a test page never gets past "Loading scripts..." under chromedriver and the runner gives
# up after 300 s (wasm-bindgen/wasm-pack#783). That harness failure, and only that one, is
# retried, at most twice: a failing or panicking test fails at once.
set -euo pipefail
cd "$(dirname "$0")/.."

log=$(mktemp)
trap 'rm -f "$log"' EXIT
for attempt in 1 2 3; do
  if env WASM_BINDGEN_USE_BROWSER=1 CHROMEDRIVER="$(command -v chromedriver)" \
    wasm-pack test --headless --chrome -- --test '*' 2>&1 | tee "$log"; then
    exit 0
  fi
  if ! grep -q 'Failed to detect test as having been run' "$log" || grep -q 'FAILED\|panicked' "$log"; then
    exit 1
  fi
  echo "[wasm-test-chrome] a test page did not load (attempt $attempt of 3)"
done
exit 1
