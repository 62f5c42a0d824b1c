// The reader's decode cells natively (bench/decode_native.rs) next to the same cells of
// the wasm package from this run's Chromium and Node tables, so the table shows what wasm
// costs over native code doing the same work on the same machine.
// Usage: node bench/native.mjs OUT_DIR NATIVE.json... (OUT_DIR holds chromium.json, node.json)
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { table, fmt } from './timing.js';

const [outDir, ...nativeFiles] = process.argv.slice(2);
const native = nativeFiles.flatMap((f) => JSON.parse(readFileSync(f, 'utf8')));
const wasm = ['chromium', 'node'].map((engine) => {
  const file = join(outDir, `${engine}.json`);
  return existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')).report.reader ?? [] : [];
});

const find = (cells, cell, name) =>
  cells.find((x) => x.codec === cell.codec && x.rows === cell.rows && x.mode === cell.mode && !x.read && x.name === name);
// Native names, and the wasm contender each one is compared with.
const builds = [
  ['native', 'quiver', ''],
  ['nativeZstdC', 'quiverZstdC', ' (C zstd)'],
];
const header = ['rows/batch', 'codec', 'segments', 'native µs', 'native memcpy µs', 'Chromium µs', 'Node µs', 'Chromium ÷ native', 'Node ÷ native'];
const body = [];
for (const codec of ['none', 'lz4', 'zstd']) {
  for (const [nativeName, wasmName, label] of builds) {
    for (const n of native.filter((c) => c.codec === codec && c.name === nativeName)) {
      const memcpy = find(native, n, 'nativeMemcpy');
      const [chromium, node] = wasm.map((cells) => find(cells, n, wasmName));
      const ratio = (w) => (w ? fmt(w.usPerBatch / n.usPerBatch, 2) + '×' : 'n/a');
      body.push([
        n.rows, (codec === 'none' ? 'none' : codec.toUpperCase()) + label, n.mode,
        fmt(n.usPerBatch, 2), memcpy ? fmt(memcpy.usPerBatch, 2) : '',
        chromium ? fmt(chromium.usPerBatch, 2) : 'n/a', node ? fmt(node.usPerBatch, 2) : 'n/a',
        ratio(chromium), ratio(node),
      ]);
    }
  }
}
console.log(`#### Reader, native (${process.arch}, opt-level 3) and wasm, decode only\n\n${table([header, ...body])}\n`);
