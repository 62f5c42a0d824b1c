// Why `column.values` read on every row can run slower in Node than in a fresh process:
// V8 treats a field that no object of its class ever had replaced as a constant, and
// reads it faster inside a loop. free() replaces a freed column's `values` (the stand-in
// that throws) and growth over a fixed-length memory replaces a live one's (made
// again), after which V8 treats `values` as mutable for every column. This times the
// accessor suite's "values per row" loop, Quiver's over flechette's, in a fresh Node
// process per state: nothing replaced, after one table was freed, after memory grew.
// Usage: node bench/constness.mjs DATA_DIR [rows]   (DATA_DIR from bench/data.py)
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const STATES = ['fresh', 'after free()', 'after growth'];
const [dataDir, rowsArg = '2000', state] = process.argv.slice(2);

if (state === undefined) {
  for (const name of STATES) {
    const out = execFileSync(process.execPath, [fileURLToPath(import.meta.url), dataDir, rowsArg, name], { encoding: 'utf8' });
    console.log(`${name}: Quiver ÷ flechette ${out.trim()}`);
  }
} else {
  const [quiver, arrow, flechette, { interleavedMediansMs }] = await Promise.all(
    ['quiver-arrow', 'apache-arrow', '@uwdata/flechette', './timing.js'].map((m) => import(m)));
  const rows = Number(rowsArg);
  const full = new Uint8Array(readFileSync(`${dataDir}/reader-${rows}-none.arrows`));
  const first = arrow.tableFromIPC(full).batches.slice(0, Math.ceil(200_000 / rows));
  const bytes = arrow.tableToIPC(new arrow.Table(first), 'stream');
  const q = quiver.tableFromIPC(bytes);
  const f = flechette.tableFromIPC(bytes);
  const quiverChunks = q.getChild('f64').chunks;
  if (state === 'after free()') {
    const other = quiver.tableFromIPC(bytes);
    other.getChild('f64');
    other.free();
  }
  if (state === 'after growth') quiver.batchFromColumns({ fill: new Uint8Array(quiver.memoryStats().wasmMemoryBytes) }).free();
  // One loop per library, as in bench/accessors.js.
  const quiverLoop = (chunks) => { let s = 0; for (const c of chunks) for (let i = 0; i < c.length; i++) s += c.values[i]; return s; };
  const flechetteLoop = (chunks) => { let s = 0; for (const c of chunks) for (let i = 0; i < c.length; i++) s += c.values[i]; return s; };
  const flechetteChunks = f.getChild('f64').data;
  const [qms, fms] = await interleavedMediansMs([() => quiverLoop(quiverChunks), () => flechetteLoop(flechetteChunks)], { rounds: 15, minMs: 3000 });
  console.log(`${(qms / fms).toFixed(2)}×`);
}
