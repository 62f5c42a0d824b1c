#!/usr/bin/env bash
# Runs every cargo-fuzz target for SECONDS each (default 600), seeded with the gold IPC
# streams and the peers' repaired ones, tests/data/peers (the decompress target with
# pyarrow's LZ4 and ZSTD frames, fuzz/seeds.py; the file target with the IPC files of
# tests/data/files.py), and
# copies anything that crashed into fuzz/regressions/<target>/ so that
# tests/fuzz_regressions.rs replays it from then on.
#
# Usage: pkg-scripts/fuzz.sh [SECONDS] [TARGET...]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root/fuzz"
export PATH="$HOME/.cargo/bin:$PATH"

seconds=${1:-600}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(reader reader_split decompress frames file)

# cargo-fuzz wants nightly rustc. The machine image ships one; without it, stable with
# RUSTC_BOOTSTRAP accepts the same flags (no sanitizer is used, so no -Z flag is needed).
if rustup run nightly rustc --version >/dev/null 2>&1; then
  toolchain=+nightly
else
  toolchain=+stable
  export RUSTC_BOOTSTRAP=1
fi

gold="$root/tests/data/arrow-testing/integration"
failed=0
for target in "${targets[@]}"; do
  corpus="corpus/$target"
  rm -rf "artifacts/$target"
  mkdir -p "$corpus" "regressions/$target"
  if [ -z "$(ls -A "$corpus")" ]; then
    if [ "$target" = decompress ]; then
      "$root/.venv/bin/python" "$root/fuzz/seeds.py" "$corpus"
    elif [ "$target" = file ]; then
      files=$(mktemp -d)
      "$root/.venv/bin/python" "$root/tests/data/files.py" write "$files"
      cp "$files"/*.arrow "$corpus/"
      rm -rf "$files"
    else
      find "$gold" -name '*.stream' -exec cp {} "$corpus/" \;
      cp "$root"/tests/data/peers/*.arrows "$corpus/"
    fi
    cp "regressions/$target/"* "$corpus/" 2>/dev/null || true
  fi
  echo "[fuzz] $target for ${seconds}s"
  if ! cargo $toolchain fuzz run --sanitizer none "$target" "$corpus" -- \
      -max_total_time="$seconds" -rss_limit_mb=2048 -malloc_limit_mb=512 \
      -print_final_stats=1 2>&1 | tee "/tmp/quiver-fuzz-$target.log" | grep -E "^(#[0-9]+ +DONE|stat::number_of_executed_units|==|SUMMARY|Done)"; then
    :
  fi
  if ls "artifacts/$target/"* >/dev/null 2>&1; then
    echo "[fuzz] $target found crashes; copied to fuzz/regressions/$target/" >&2
    cp "artifacts/$target/"* "regressions/$target/"
    failed=1
  fi
done
exit $failed
