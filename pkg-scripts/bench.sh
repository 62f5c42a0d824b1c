#!/usr/bin/env bash
# Runs every benchmark in Node 20 and in headless Chromium, and the reading, column-access
# and Flight suites (bench/suites.js, EVERY_ENGINE) in Firefox and WebKit too, each browser
# started directly (no devtools client), against the real peers (apache-arrow JS,
# flechette) in the same engine, on the same data, in the same run. The Flight SQL suite
# runs in Chromium only, against the Flight SQL test fixture and arrow-flight's native
# client, which bench/browser.mjs builds (CONTRIBUTING.md says what they cost). The tables
# and results go to target/bench-results/, one <engine>.json and .md per engine (and
# chromium-fixed, the accessor suite over a fixed-length memory);
# bench/report.mjs then writes docs/benchmarks.md from them (the tables, the machine, the
# date, the commit and each target, met or not) and the README's summary. A run of some
# suites or engines, or a quick one, writes its page to target/bench-results/benchmarks.md
# instead, so that the committed page always comes from one full run.
#
# Usage: pkg-scripts/bench.sh [--zstd-c] [--quick] [--engines e,e...] [suite,suite...]
#   --zstd-c   also builds the zstd-c flavour (build.sh --zstd-c) and adds it to the reader
#              suite's ZSTD rows, as "Quiver (C zstd)".
#   --quick    one round per cell, no minimum time, 32 MiB of Flight per cell and Flight
#              SQL query, no native reader run: checks that every path works in minutes;
#              its figures mean nothing.
#   --engines  which browsers, of chromium,firefox,webkit (default: all three).
# Default: every suite. An engine that fails a suite is recorded in its results and named
# in the report; the run goes on and exits 1 at the end.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
started=$(date +%s)

all_engines=chromium,firefox,webkit
engines=$all_engines
zstd_c=
quick=
while [[ "${1:-}" == --* ]]; do
  case $1 in
    --zstd-c) zstd_c=1 ;;
    --quick) quick=1 ;;
    --engines) engines=${2:?--engines needs a list, of chromium,firefox,webkit}; shift ;;
    *) echo "bench.sh: unknown option $1 (expected --zstd-c, --quick or --engines)" >&2; exit 2 ;;
  esac
  shift
done

"$root/pkg-scripts/setup.sh"
"$root/pkg-scripts/build.sh"
if [ -n "$zstd_c" ]; then
  "$root/pkg-scripts/build.sh" --zstd-c
  # Read by bench/node.mjs and bench/browser.mjs.
  export BENCH_ZSTD_C=target/pkg-zstd-c
fi
# Read by bench/node.mjs and bench/browser.mjs.
if [ -n "$quick" ]; then export BENCH_QUICK=1; fi

data=target/bench-data
.venv/bin/python bench/data.py "$data"

all=$(node -e "import('./bench/suites.js').then(m => console.log(Object.keys(m.suites).join(',')))")
every_engine=$(node -e "import('./bench/suites.js').then(m => console.log(m.EVERY_ENGINE.join(',')))")
suites=${1:-$all}
out=target/bench-results
rm -rf "$out"
mkdir -p "$out"
echo "[bench] suites: $suites; engines: $engines; tables in $out/"
node bench/node.mjs "$data" "$out/node.json" ${suites//,/ } | tee "$out/node.md"
failed_engines=()
for engine in ${engines//,/ }; do
  # Chromium runs every suite; Firefox and WebKit the ones in EVERY_ENGINE.
  run=$suites
  if [ "$engine" != chromium ]; then
    run=$(tr , '\n' <<< "$suites" | grep -Fx -f <(tr , '\n' <<< "$every_engine") | paste -sd, || true)
  fi
  [ -n "$run" ] || continue
  # A failure is in $engine.json (browser.mjs); the next engine still runs.
  node bench/browser.mjs "$data" "$out/$engine.json" "$run" "$engine" | tee "$out/$engine.md" || true
  node -e "process.exit(Object.keys(require('./$out/$engine.json').failed).length)" \
    || failed_engines+=("$engine")
done

# What the resizable buffer costs Chromium's per-row reads (issue 32): the accessor suite
# again over a fixed-length memory, which the web entry would otherwise switch to a
# resizable one. The report sets these cells beside the resizable ones.
if [[ ",$engines," == *,chromium,* && ",$suites," == *,accessors,* ]]; then
  BENCH_MEMORY=fixed node bench/browser.mjs "$data" "$out/chromium-fixed.json" accessors chromium \
    | tee "$out/chromium-fixed.md" || true
  node -e "process.exit(Object.keys(require('./$out/chromium-fixed.json').failed).length)" \
    || failed_engines+=("chromium (fixed-length memory)")
fi

# The reader's decode cells natively, beside the wasm figures above: the same decoder built
# for this machine at opt-level 3 (the package is built at "s" for size), on the same files.
if [[ ",$suites," == *,reader,* && -z "$quick" ]]; then
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
if [ "$suites" = "$all" ] && [ "$engines" = "$all_engines" ] && [ -z "$quick" ]; then
  node bench/report.mjs "$out" docs/benchmarks.md --readme README.md
  echo "[bench] wrote docs/benchmarks.md and the README's summary"
else
  node bench/report.mjs "$out" "$out/benchmarks.md"
  echo "[bench] wrote $out/benchmarks.md"
fi
if [ ${#failed_engines[@]} -gt 0 ]; then
  echo "[bench] suites failed in: ${failed_engines[*]} (named in the report)" >&2
  exit 1
fi
