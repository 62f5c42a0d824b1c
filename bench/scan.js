// Where the views' scan time goes (issue 4). The views suite times each contender in a
// block of its own, so a slow phase of this noisy machine can fall on one contender only.
// Here one scan loop (views.js `scan`, a copy per set) runs over the same rows held four
// ways, in interleaved passes, so that such a phase falls on all of them alike:
//   flechette      flechette's arrays, views of the IPC bytes;
//   quiver views   Quiver's column views of wasm memory (a resizable buffer in Chromium);
//   plain copy     the same views' bytes in a plain ArrayBuffer copy of wasm memory, at the
//                  same offsets;
//   slices         each of Quiver's views sliced into an ArrayBuffer of its own.
import { ownScan } from './views.js';
import { fmt, medianMs, table, warmUp } from './timing.js';

const BATCHES = 200;
const PASSES = 9;
const ROUNDS = 15;

/** Per set, one argument list of `scan` per batch; `free` releases Quiver's table. */
function arraySets({ quiver, flechette }, bytes) {
  const theirs = flechette.tableFromIPC(bytes);
  const [fi, ff, fs] = ['i32', 'f64', 'str'].map((n) => theirs.getChild(n).data);
  const decoded = quiver.tableFromIPC(bytes);
  const [qi, qf, qs] = ['i32', 'f64', 'str'].map((n) => decoded.getChild(n).chunks);
  const views = qi.map((c, k) => [c.values, c.validity, c.validityBitOffset, qf[k].values, qs[k].offsets, c.length]);
  const plain = qi[0].values.buffer.slice(0);
  const moved = (v) => v && new v.constructor(plain, v.byteOffset, v.length);
  const sliced = (v) => v && v.slice();
  const sets = {
    flechette: fi.map((c, k) => [c.values, c.nullCount > 0 ? c.validity : null, 0, ff[k].values, fs[k].offsets, c.length]),
    'quiver views': views,
    'plain copy': views.map(([i, v, bit, f, o, n]) => [moved(i), moved(v), bit, moved(f), moved(o), n]),
    slices: views.map(([i, v, bit, f, o, n]) => [sliced(i), sliced(v), bit, sliced(f), sliced(o), n]),
  };
  if (plain.resizable) throw new Error('the plain copy is resizable');
  return { sets, free: () => decoded.free() };
}

/** Result rows: µs per batch of each set, the median over passes of per-pass medians. */
export async function runScanBench(libs, files, { log = () => {} } = {}) {
  const results = [];
  for (const rows of [100, 500, 2000, 8192]) {
    const { sets, free } = arraySets(libs, files[`reader-${rows}-none`]);
    const runs = Object.entries(sets).map(([name, batches]) => {
      const loop = ownScan();
      return [name, () => batches.reduce((sum, a) => sum + loop(a[0], a[1], a[2], a[3], a[4], a[5]), 0)];
    });
    const sums = new Set(runs.map(([, run]) => run().toFixed(3)));
    if (sums.size !== 1) throw new Error(`the sets' checksums differ at ${rows} rows: ${[...sums]}`);
    for (const [, run] of runs) await warmUp(run);
    const passes = runs.map(() => []);
    for (let p = 0; p < PASSES; p++) {
      for (const [k, [, run]] of runs.entries()) passes[k].push(await medianMs(run, ROUNDS, 1));
    }
    for (const [k, [name]] of runs.entries()) {
      const ms = passes[k].sort((a, b) => a - b)[PASSES >> 1];
      results.push({ rows, name, usPerBatch: (ms * 1000) / BATCHES });
      log(`${rows} ${name}: ${fmt((ms * 1000) / BATCHES, 2)} µs/batch`);
    }
    free();
  }
  return results;
}

export function scanTables(results, env) {
  const us = (rows, name) => results.find((r) => r.rows === rows && r.name === name)?.usPerBatch;
  const names = ['flechette', 'quiver views', 'plain copy', 'slices'];
  const body = [...new Set(results.map((r) => r.rows))].map((rows) => {
    const [f, v, p, s] = names.map((n) => us(rows, n));
    return [rows, fmt(f, 2), fmt(v, 2), fmt(p, 2), fmt(s, 2), `${fmt(v / p, 2)}×`, `${fmt(p / f, 2)}×`];
  });
  return `#### One scan loop over four sets of the same arrays, interleaved passes, ${env}\n\n` +
    table([['rows/batch', 'flechette µs', 'views µs', 'plain copy µs', 'slices µs', 'views ÷ plain', 'plain ÷ flechette'], ...body]);
}
