#!/usr/bin/env bash
# Installs everything the build, tests, benchmarks and demo need. Idempotent: each step
# checks first, so a second run on a ready machine takes a few seconds.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

WASM_BINDGEN_VERSION=0.2.130   # must equal the `wasm-bindgen = "=…"` pin in Cargo.toml
WASM_PACK_VERSION=0.15.1
CARGO_FUZZ_VERSION=0.13.2
GECKODRIVER_VERSION=0.37.1     # drives firefox-esr for `wasm-pack test --firefox`
PYARROW_VERSION=21.0.0
PANDAS_VERSION=3.1.1           # pandas, polars and DuckDB write the IPC files the interop tests read
POLARS_VERSION=2.1.0
DUCKDB_VERSION=2.0.1

log() { printf '[setup] %s\n' "$*"; }
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }
export PATH="$HOME/.cargo/bin:$PATH"

if ! rustup target list --installed | grep -qx wasm32-unknown-unknown; then
  log "adding the wasm32-unknown-unknown target"
  rustup target add wasm32-unknown-unknown
fi

if [ "$(wasm-bindgen --version 2>/dev/null | awk '{print $2}')" != "$WASM_BINDGEN_VERSION" ]; then
  log "installing wasm-bindgen-cli $WASM_BINDGEN_VERSION"
  # Not --locked: its lock file pins webpki-roots 1.0.11, which the registry here lacks.
  cargo install wasm-bindgen-cli --version "$WASM_BINDGEN_VERSION" --force
fi

if [ "$(wasm-pack --version 2>/dev/null | awk '{print $2}')" != "$WASM_PACK_VERSION" ]; then
  log "installing wasm-pack $WASM_PACK_VERSION"
  cargo install wasm-pack --version "$WASM_PACK_VERSION" --locked --force
fi

if [ "$(geckodriver --version 2>/dev/null | awk 'NR==1 {print $2}')" != "$GECKODRIVER_VERSION" ]; then
  log "installing geckodriver $GECKODRIVER_VERSION"
  cargo install geckodriver --version "$GECKODRIVER_VERSION" --locked --force
fi

if [ "$(cargo fuzz --version 2>/dev/null | awk '{print $2}')" != "$CARGO_FUZZ_VERSION" ]; then
  log "installing cargo-fuzz $CARGO_FUZZ_VERSION"
  cargo install cargo-fuzz --version "$CARGO_FUZZ_VERSION" --locked --force
fi

# clang-22 compiles C zstd for wasm32 (feature zstd-c, build.sh --zstd-c; the compiler is
# named in .cargo/config.toml); rustc links with its own rust-lld, so no lld is needed.
if ! command -v chromium >/dev/null || ! command -v chromedriver >/dev/null \
  || ! command -v clang-22 >/dev/null; then
  log "installing Debian chromium, chromium-driver and clang-22"
  as_root apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver clang-22 >/dev/null
fi

# The other two engines the browser tiers run in: Firefox (Gecko/SpiderMonkey) and
# WebKitGTK's MiniBrowser (WebKit/JavaScriptCore; webkit2gtk-driver ships it), which
# needs an X display even headless, hence xvfb-run. Playwright cannot drive Debian's
# builds of either, so bench/launch.mjs starts the binaries itself.
if ! command -v firefox-esr >/dev/null || ! command -v xvfb-run >/dev/null \
  || ! compgen -G '/usr/lib/*/webkit2gtk-4.*/MiniBrowser' >/dev/null; then
  log "installing Debian firefox-esr, webkit2gtk-driver and xvfb"
  as_root apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq firefox-esr webkit2gtk-driver xvfb >/dev/null
fi

# protoc, which the Flight SQL test fixture's dependencies (datafusion-flight-sql-server's
# Substrait crates) run when they build (tests/fixtures/flight-sql-server).
if ! command -v protoc >/dev/null; then
  log "installing Debian protobuf-compiler"
  as_root apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq protobuf-compiler >/dev/null
fi

# npm dependencies: binaryen's wasm-opt (Debian's 108 breaks wasm-bindgen 0.2.130 output),
# the benchmark peers, playwright-core and ws.
if [ ! -x node_modules/.bin/wasm-opt ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  log "installing npm dependencies from package-lock.json"
  npm ci --no-audit --no-fund --loglevel=error
fi

venv="$root/.venv"
if ! "$venv/bin/python" -c "
import pyarrow, pyarrow.flight, pandas, polars, duckdb
assert (pyarrow.__version__, pandas.__version__, polars.__version__, duckdb.__version__) == \
    ('$PYARROW_VERSION', '$PANDAS_VERSION', '$POLARS_VERSION', '$DUCKDB_VERSION')" 2>/dev/null; then
  log "creating .venv with pyarrow $PYARROW_VERSION, pandas $PANDAS_VERSION, polars $POLARS_VERSION, duckdb $DUCKDB_VERSION"
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q "pyarrow==$PYARROW_VERSION" "pandas==$PANDAS_VERSION" \
    "polars==$POLARS_VERSION" "duckdb==$DUCKDB_VERSION"
fi

log "ready"
