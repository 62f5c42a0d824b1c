#!/usr/bin/env bash
# Builds the npm package quiver-arrow: a web build (ES module with init()) and a Node
# build, each optimised with wasm-opt, under one package.json whose `exports` map picks
# the right one. Prints the raw, gzip and brotli size of each .wasm.
#
# Usage: pkg-scripts/build.sh [--decode-only] [--zstd-c] [--out DIR]
#   --decode-only  cargo --no-default-features: the reader without the writer and Flight.
#                  Written to target/pkg-decode-only/ unless --out is given.
#   --zstd-c       ZSTD through C zstd (feature zstd-c, compiled by clang-22): several times
#                  faster than ruzstd but ~60 KB brotli larger, over the 300 KB budget, so
#                  a second flavour (docs/size.md). Written to target/pkg-zstd-c/ unless
#                  --out is given; cargo builds it in target/zstd-c/ so that the shared
#                  target/ keeps the default build.
#   --out DIR      where to write the package (default pkg/).
#
# The default build also links pkg/ as node_modules/quiver-arrow, so the JS tests, the
# benchmarks and the demo import it by its package name.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
export PATH="$HOME/.cargo/bin:$PATH"

log() { printf '[build] %s\n' "$*"; }

flavour=full
cargo_flags=()
zstd_c=false
out=
while [ $# -gt 0 ]; do
  case "$1" in
    --decode-only) flavour=decode-only; cargo_flags+=(--no-default-features) ;;
    --zstd-c) zstd_c=true ;;
    --out) out=$2; shift ;;
    *) echo "usage: $0 [--decode-only] [--zstd-c] [--out DIR]" >&2; exit 2 ;;
  esac
  shift
done
target_dir=${CARGO_TARGET_DIR:-target}
if [ "$zstd_c" = true ]; then
  if [ "$flavour" = full ]; then flavour=zstd-c; else flavour=$flavour-zstd-c; fi
  cargo_flags+=(--features zstd-c)
  target_dir=target/zstd-c
fi
if [ -z "$out" ]; then
  if [ "$flavour" = full ]; then out=pkg; else out=target/pkg-$flavour; fi
fi

wasm_opt=node_modules/.bin/wasm-opt
if [ ! -x "$wasm_opt" ]; then
  echo "missing $wasm_opt (binaryen from npm): run pkg-scripts/setup.sh" >&2
  exit 1
fi

log "cargo build ($flavour)"
cargo build --release --target wasm32-unknown-unknown -p quiver "${cargo_flags[@]}" \
  --target-dir "$target_dir"
wasm="$target_dir/wasm32-unknown-unknown/release/quiver.wasm"

# Everything the package is made from. If none of it changed since the last build of
# $out, the wasm-bindgen and wasm-opt steps (the slow part) are skipped.
inputs_hash=$({
  echo "$flavour" "$(wasm-bindgen --version)" "$("$wasm_opt" --version)"
  sha256sum "$wasm" Cargo.toml pkg-scripts/build.sh pkg-scripts/patch-glue.mjs \
    pkg-scripts/patch-types.mjs src/js/protocols.d.ts
  find pkg-template -type f -print0 | sort -z | xargs -0 sha256sum
} | sha256sum | cut -d' ' -f1)

if [ -f "$out/.inputs-hash" ] && [ "$(cat "$out/.inputs-hash")" = "$inputs_hash" ]; then
  log "$out is up to date"
else
  # Staged in target/ (ignored by git) and moved into place at the end, so a failed
  # build leaves no half-written package behind.
  mkdir -p target "$(dirname "$out")"
  stage=$(mktemp -d target/pkg-stage.XXXXXX)
  trap 'rm -rf "$stage"' EXIT

  log "wasm-bindgen --target web and --target nodejs"
  wasm-bindgen "$wasm" --target web --out-dir "$stage/web" --out-name quiver
  wasm-bindgen "$wasm" --target nodejs --out-dir "$stage/node" --out-name quiver

  # The nodejs glue is CommonJS inside an ES-module package ("type": "module"), so it
  # takes the .cjs extension, and its declarations the matching .d.cts.
  mv "$stage/node/quiver.js" "$stage/node/quiver.cjs"
  mv "$stage/node/quiver.d.ts" "$stage/node/quiver.d.cts"

  # Use after free gets a clear error in both glues; the web glue also reads and writes
  # strings in the resizable buffer that the web entry switches memory to, and refuses
  # calls before init(). See patch-glue.mjs.
  node pkg-scripts/patch-glue.mjs web "$stage/web/quiver.js"
  node pkg-scripts/patch-glue.mjs nodejs "$stage/node/quiver.cjs"
  # Table and RecordBatch take their row type as a parameter. See patch-types.mjs.
  node pkg-scripts/patch-types.mjs "$stage/web/quiver.d.ts" "$stage/node/quiver.d.cts"

  # wasm-bindgen writes the same .wasm for both targets; wasm-opt (a minute per run) is
  # run once and its output shared. The features are those rustc enables by default for
  # wasm32, plus SIMD (.cargo/config.toml); wasm-opt refuses instructions from features
  # it was not told about.
  if ! cmp -s "$stage/web/quiver_bg.wasm" "$stage/node/quiver_bg.wasm"; then
    echo "the web and nodejs .wasm differ: run wasm-opt on each" >&2
    exit 1
  fi
  # The producers and target_features sections tell tools which compilers and features
  # made the module; engines never read them.
  log "wasm-opt -Oz"
  "$wasm_opt" -Oz --converge --strip-producers --strip-target-features \
    --enable-bulk-memory --enable-nontrapping-float-to-int \
    --enable-sign-ext --enable-mutable-globals --enable-reference-types \
    --enable-multivalue --enable-simd "$stage/web/quiver_bg.wasm" -o "$stage/web/quiver_bg.opt.wasm"
  mv "$stage/web/quiver_bg.opt.wasm" "$stage/web/quiver_bg.wasm"
  cp "$stage/web/quiver_bg.wasm" "$stage/node/quiver_bg.wasm"

  cp -r pkg-template/. "$stage/"
  # What the entries add to the glue lives in src/js, beside the snippets it shares
  # modules with (owner.js, handed_out.js): wasm-bindgen ships it as a snippet of each
  # build, and each entry imports its own build's through extras.js, so that the glue
  # and the entry share one instance of each module and its state. Its types are
  # appended to both entries' declarations.
  for build in web node; do
    protocols=$(cd "$stage/$build" && echo snippets/*/src/js/protocols.js)
    if [ ! -f "$stage/$build/$protocols" ]; then
      echo "wasm-bindgen wrote no snippet src/js/protocols.js under $stage/$build/snippets" >&2
      exit 1
    fi
    printf '%s\n' "// src/js/protocols.js, as wasm-bindgen ships it in this build." \
      "export * from './$protocols';" > "$stage/$build/extras.js"
  done
  cat src/js/protocols.d.ts >> "$stage/web/index.d.ts"
  sed "s|'./quiver.js'|'./quiver.cjs'|g" src/js/protocols.d.ts >> "$stage/node/index.d.ts"
  # The version comes from Cargo.toml, so the crate and the package never disagree.
  version=$(cargo pkgid -p quiver | sed "s/.*[#@]//")
  node -e '
    const fs = require("fs");
    const [file, version] = process.argv.slice(1);
    const pkg = JSON.parse(fs.readFileSync(file, "utf8"));
    pkg.version = version;
    fs.writeFileSync(file, JSON.stringify(pkg, null, 2) + "\n");
  ' "$stage/package.json" "$version"
  # wasm-bindgen writes a .gitignore of "*" into each folder; npm pack would honour it.
  rm -f "$stage"/web/.gitignore "$stage"/node/.gitignore
  echo "$inputs_hash" > "$stage/.inputs-hash"

  rm -rf "$out"
  mv "$stage" "$out"
  trap - EXIT
  log "wrote $out ($flavour, version $version)"
fi

if [ "$out" = pkg ] && [ -d node_modules ]; then
  ln -sfn ../pkg node_modules/quiver-arrow
fi

node -e '
  const fs = require("fs");
  const zlib = require("zlib");
  const kb = (n) => (n / 1024).toFixed(1).padStart(8) + " KiB";
  const files = process.argv.slice(1);
  const width = Math.max(...files.map((f) => f.length)) + 2;
  console.log("[build] " + "file".padEnd(width) + "raw".padStart(12) + "gzip -9".padStart(12) + "brotli".padStart(12));
  for (const file of files) {
    const bytes = fs.readFileSync(file);
    const gzip = zlib.gzipSync(bytes, { level: 9 }).length;
    const brotli = zlib.brotliCompressSync(bytes, {
      params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 11 },
    }).length;
    console.log("[build] " + file.padEnd(width) + kb(bytes.length) + kb(gzip) + kb(brotli));
  }
' "$out/web/quiver_bg.wasm" "$out/node/quiver_bg.wasm"
