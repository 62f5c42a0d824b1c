#!/usr/bin/env bash
# Runs every benchmark in Node 20 and in headless Chromium (started directly, no devtools
# client), against the real peers (apache-arrow JS, flechette) on the same data in the
# same run. The tables and results go to target/bench-results/; bench/report.mjs then
# writes docs/benchmarks.md from them (the tables, the machine, the date, the commit and
# each target, met or not) and the README's summary. A run of some suites writes its page
# to target/bench-results/benchmarks.md instead, so that the committed page always comes
# from one full run.
#
# Usage: pkg-scripts/bench.sh [--zstd-c] [suite,suite...]   (default: every suite)
#   --zstd-c  also builds the zstd-c flavour (build.sh --zstd-c) and adds it to the reader
#             suite's ZSTD rows, as "Quiver (C zstd)".
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
started=$(date +%s)

"$root/pkg-scripts/setup.sh"
"$root/pkg-scripts/build.sh"
if [ "${1:-}" = --zstd-c ]; then
  shift
  "$root/pkg-scripts/build.sh" --zstd-c
  # Read by bench/node.mjs and bench/browser.mjs.
  export BENCH_ZSTD_C=target/pkg-zstd-c
fi

data=target/bench-data
.venv/bin/python bench/data.py "$data"

all=$(node -e "import('./bench/suites.js').then(m => console.log(Object.keys(m.suites).join(',')))")
suites=${1:-$all}
out=target/bench-results
rm -rf "$out"
mkdir -p "$out"
echo "[bench] suites: $suites; tables in $out/"
node bench/node.mjs "$data" "$out/node.json" ${suites//,/ } | tee "$out/node.md"
node bench/browser.mjs "$data" "$out/chromium.json" "$suites" | tee "$out/chromium.md"

# The reader's decode cells natively, beside the wasm figures above: the same decoder built
# for this machine at opt-level 3 (the package is built at "s" for size), on the same files.
if [[ ",$suites," == *,reader,* ]]; then
  native=target/native-o3
  mkdir -p "$native"
  run_native() {
    CARGO_PROFILE_BENCH_OPT_LEVEL=3 cargo bench --quiet --bench decode_native \
      --target-dir "$native" "$@" -- "$data"
  }
  run_native > "$native/default.json"
  if [ -n "${BENCH_ZSTD_C:-}" ]; then
    run_native --features zstd-c > "$native/zstd-c.json"
    zstd_c_json="$native/zstd-c.json"
  fi
  node bench/native.mjs "$out" "$native/default.json" ${zstd_c_json:-} | tee "$out/native.md"
fi

# Read by bench/report.mjs: how long the run took, builds included.
export BENCH_SECONDS=$(($(date +%s) - started))
if [ "$suites" = "$all" ]; then
  node bench/report.mjs "$out" docs/benchmarks.md --readme README.md
  echo "[bench] wrote docs/benchmarks.md and the README's summary"
else
  node bench/report.mjs "$out" "$out/benchmarks.md"
  echo "[bench] wrote $out/benchmarks.md"
fi
