#!/usr/bin/env bash
# Runs every test tier in order: formatting and lints, native tests, wasm-bindgen tests in
# Node, headless Chromium and headless Firefox, the npm package build, then JS tests
# against the built package in Node and in the three browser engines (Chromium, Firefox,
# WebKit), and the demo end to end in Chromium and Firefox. A failed step is reported and the next one still runs,
# so one run shows everything that is broken. Ends with "N passed, N failed" (one count
# per step) and exits non-zero if any step failed.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
export PATH="$HOME/.cargo/bin:$PATH"
# Each step builds its artifacts once, so incremental caches (about 1 GB a target dir)
# would only take disk.
export CARGO_INCREMENTAL=0

# No step may hang the run: CI stops at 90 minutes and the whole suite should take well
# under 40 on two cores.
STEP_TIMEOUT=${STEP_TIMEOUT:-1200}

passed=0
failed=0
failures=()

step() {
  local name=$1
  shift
  printf '\n==> %s\n' "$name"
  local start=$SECONDS status=0
  timeout --kill-after=30 "$STEP_TIMEOUT" "$@" || status=$?
  local took=$((SECONDS - start))
  if [ "$status" -eq 0 ]; then
    passed=$((passed + 1))
    printf '<== %s: ok (%ss)\n' "$name" "$took"
  else
    failed=$((failed + 1))
    failures+=("$name")
    printf '<== %s: FAILED with status %s (%ss)\n' "$name" "$status" "$took"
  fi
}

summary() {
  printf '\n'
  for name in "${failures[@]}"; do printf 'failed: %s\n' "$name"; done
  printf '%s passed, %s failed\n' "$passed" "$failed"
  [ "$failed" -eq 0 ]
}

step "setup" pkg-scripts/setup.sh
if [ "$failed" -ne 0 ]; then
  # Without the toolchain every later step fails for the same reason.
  summary
  exit 1
fi

step "cargo fmt --check" cargo fmt --all --check
# #29: no module of the library or the gateway imports one that imports it back.
step "no import cycles" node pkg-scripts/cycles.mjs src gateway/src
step "clippy (native)" cargo clippy --workspace --all-targets -- -D warnings
step "clippy (wasm32)" \
  cargo clippy -p quiver --target wasm32-unknown-unknown --all-targets -- -D warnings
# The decode-only flavour (build.sh --decode-only) must build without warnings too.
step "clippy (wasm32, decode-only)" \
  cargo clippy -p quiver --target wasm32-unknown-unknown --no-default-features -- -D warnings
step "cargo test" cargo test --workspace
# wasm-pack tests the package in the current folder: the root crate `quiver` only.
step "wasm-pack test --node" wasm-pack test --node
# The suites use no `run_in_browser`, so WASM_BINDGEN_USE_BROWSER runs the same tests here.
# wasm-test-browser.sh routes the browser through a proxy that works around a test-page
# hang in wasm-bindgen-test-runner's server (described in close-proxy.mjs).
step "wasm-pack test --chrome" pkg-scripts/wasm-test-browser.sh chrome
step "wasm-pack test --firefox" pkg-scripts/wasm-test-browser.sh firefox
# The zstd-c build (C zstd instead of ruzstd) runs the same ZSTD tests: natively (gcc
# builds libzstd) and as wasm in Node (clang-22 builds it, as .cargo/config.toml says).
# Its own target dir keeps the default build's artifacts in target/ from being rebuilt on
# every switch.
step "cargo test (zstd-c)" \
  env CARGO_TARGET_DIR=target/zstd-c cargo test -p quiver --features zstd-c
step "clippy (wasm32, zstd-c)" \
  env CARGO_TARGET_DIR=target/zstd-c \
  cargo clippy -p quiver --target wasm32-unknown-unknown --features zstd-c -- -D warnings
step "wasm-pack test --node (zstd-c)" \
  env CARGO_TARGET_DIR=target/zstd-c \
  wasm-pack test --node -- --features zstd-c
# A short pass of every fuzz target; pkg-scripts/fuzz.sh with no argument runs 10 minutes each.
step "fuzz smoke" pkg-scripts/fuzz.sh 20
step "build npm package" pkg-scripts/build.sh
step "build npm package (zstd-c flavour)" pkg-scripts/build.sh --zstd-c
# pyarrow writes the streams and expected values under tests/data/types (not checked in) that
# the Node and browser column and fromArrowJS tests read.
step "pyarrow expected values" .venv/bin/python tests/data/expected.py
# The real Flight SQL server that tests/js/flight_sql.test.js runs against:
# datafusion-flight-sql-server, a separate Cargo project with its own lock file and target
# dir (it is on arrow-flight 59, Quiver on 60). Built here so that its time shows apart.
step "build the Flight SQL fixture" env CARGO_TARGET_DIR=tests/fixtures/flight-sql-server/target \
  cargo build --locked --manifest-path tests/fixtures/flight-sql-server/Cargo.toml
step "JS tests (node --test)" node --test tests/js/
# The packed tarball installed as a user would: a Vite app in Chromium, Firefox and
# WebKit, a Node script, tsc.
step "consumer apps (npm pack: Vite, Node, tsc)" tests/consumer/run.sh
step "browser tests (chromium)" node tests/browser/run.mjs
# The same modules in the engines playwright cannot drive, through bench/launch.mjs. In
# Firefox wasm memory is resizable as in Chromium; WebKit takes the fixed-size path.
step "browser tests (firefox)" node tests/browser/run_engine.mjs firefox
step "browser tests (webkit)" node tests/browser/run_engine.mjs webkit
# The demo page against pkg-scripts/demo.sh's gateway; screenshots in test-results/.
step "demo end-to-end (chromium)" node tests/e2e/demo.mjs
step "demo end-to-end (firefox)" node tests/e2e/demo.mjs firefox

summary
