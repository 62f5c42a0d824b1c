// The IPC file benchmark of issue 31, on the reader workload (200 batches of four
// columns) written by pyarrow both as a stream and as a file:
// - a whole file read by Quiver's tableFromIPC, apache-arrow JS and flechette, each then
//   reading two columns as the reader suite does (JS readers decode lazily), next to
//   Quiver reading the same batches as a stream: a file should read at a stream's speed;
// - openFile's random access to batch 100 of a File (a Blob), against reading the
//   whole file, with the bytes each read.
// Every contender's checksum must agree, so one that skips work fails instead of winning.
import { interleavedMediansMs, table, fmt, warmUp } from './timing.js';

const BATCHES = 200;
const ROWS = [100, 500, 2000, 8192];

function sumFloats(values) {
  let s = 0;
  for (let i = 0; i < values.length; i++) s += values[i];
  return s;
}

/** The read of the reader suite: the sum of `f64`, and the UTF-8 bytes of `str`. */
const sums = (f64, offsets, length) => sumFloats(f64) + offsets[length] - offsets[0];

function quiverSums(table) {
  let sum = 0;
  for (const b of table.batches) {
    const str = b.column('str');
    sum += sums(b.column('f64').values, str.offsets, str.length);
  }
  return sum;
}

/** The read of a JS peer's table, whose string chunks name their offsets `offsetsKey`. */
function peerRead(table, offsetsKey) {
  const [f64, str] = [table.getChild('f64').data, table.getChild('str').data];
  let sum = 0;
  for (let i = 0; i < f64.length; i++) sum += sums(f64[i].values, str[i][offsetsKey], str[i].length);
  return [f64.length, sum];
}

function contenders({ quiver, arrow, flechette }) {
  const quiverRead = (bytes) => {
    const t = quiver.tableFromIPC(bytes);
    const result = [t.batches.length, quiverSums(t)];
    t.free();
    return result;
  };
  return {
    'quiver stream': (w) => quiverRead(w.stream),
    quiver: (w) => quiverRead(w.file),
    arrowjs: (w) => peerRead(arrow.tableFromIPC(w.file), 'valueOffsets'),
    flechette: (w) => peerRead(flechette.tableFromIPC(w.file), 'offsets'),
  };
}

/** openFile on a Blob, then batch `index`: the rows' checksum and the bytes read. */
async function randomAccess(quiver, blob, index) {
  const file = await quiver.openFile(blob);
  const batch = await file.batch(index);
  const str = batch.column('str');
  const sum = sums(batch.column('f64').values, str.offsets, str.length);
  const bytesRead = file.bytesRead;
  batch.free();
  file.free();
  return { sum, bytesRead };
}

/** Reading every batch of the same Blob, as an app without random access would. */
async function wholeBlob(quiver, blob, index) {
  const t = quiver.tableFromIPC(new Uint8Array(await blob.arrayBuffer()));
  const b = t.batches[index];
  const str = b.column('str');
  const sum = sums(b.column('f64').values, str.offsets, str.length);
  t.free();
  return { sum, bytesRead: blob.size };
}

export async function runFilesBench(libs, files, { rounds = 5, minMs = 2000, log = () => {} } = {}) {
  const workload = (rows) => ({ stream: files[`reader-${rows}-none`], file: files[`file-${rows}-none`] });
  const run = contenders(libs);
  await warmUp(() => { for (const fn of Object.values(run)) fn(workload(500)); });
  const results = [];
  for (const rows of ROWS) {
    const w = workload(rows);
    let expected;
    for (const [name, fn] of Object.entries(run)) {
      const [batches, sum] = fn(w);
      const check = `${batches}:${sum.toFixed(3)}`;
      expected ??= check;
      if (check !== expected) throw new Error(`${name} checksum ${check} != ${expected} (${rows} rows)`);
    }
    const medians = await interleavedMediansMs(Object.values(run).map((fn) => () => fn(w)), { rounds: 3 * rounds, minMs });
    for (const [k, name] of Object.keys(run).entries()) {
      results.push({ kind: 'whole', rows, name, usPerBatch: (medians[k] * 1000) / BATCHES, mbPerS: w.file.length / 1e3 / medians[k] });
      log(`whole ${rows} ${name}: ${fmt((medians[k] * 1000) / BATCHES)} µs/batch`);
    }

    const blob = new Blob([w.file]);
    const index = BATCHES / 2;
    const [one, all] = [await randomAccess(libs.quiver, blob, index), await wholeBlob(libs.quiver, blob, index)];
    if (one.sum !== all.sum) throw new Error(`batch ${index} checksum ${one.sum} != ${all.sum} (${rows} rows)`);
    const [oneMs, allMs] = await interleavedMediansMs(
      [() => randomAccess(libs.quiver, blob, index), () => wholeBlob(libs.quiver, blob, index)],
      { rounds, minMs },
    );
    const batchBytes = w.file.length / BATCHES;
    results.push({ kind: 'random', rows, batchMs: oneMs, wholeMs: allMs, bytesRead: one.bytesRead, batchBytes, fileBytes: blob.size });
    log(`random ${rows}: batch(${index}) ${fmt(oneMs, 3)} ms, whole ${fmt(allMs, 2)} ms`);
  }
  return results;
}

export function filesTables(results, env) {
  const whole = results.filter((r) => r.kind === 'whole' && r.name === 'quiver');
  const pick = (r, name) => results.find((x) => x.kind === 'whole' && x.rows === r.rows && x.name === name);
  const wholeRows = whole.map((q) => {
    const [s, a, f] = ['quiver stream', 'arrowjs', 'flechette'].map((n) => pick(q, n));
    return [q.rows, fmt(q.usPerBatch, 2), fmt(s.usPerBatch, 2), fmt(a.usPerBatch, 2), fmt(f.usPerBatch, 2), fmt(q.mbPerS, 0),
      `${fmt(q.usPerBatch / s.usPerBatch, 2)}×`, `${fmt(a.usPerBatch / q.usPerBatch, 2)}×`, `${fmt(f.usPerBatch / q.usPerBatch, 2)}×`];
  });
  const random = results.filter((r) => r.kind === 'random').map((r) => [r.rows, fmt(r.batchMs, 3), fmt(r.wholeMs, 2),
    `${fmt(r.wholeMs / r.batchMs, 1)}×`, r.bytesRead, fmt(r.batchBytes, 0), `${fmt(r.bytesRead / r.batchBytes, 2)}×`]);
  return `#### IPC file read whole (decode + read two columns), ${env}\n\n` + table([['rows/batch', 'Quiver file µs', 'Quiver stream µs',
    'Arrow JS µs', 'flechette µs', 'Quiver MB/s', 'file ÷ stream', 'Arrow JS ÷ Quiver', 'flechette ÷ Quiver'], ...wholeRows])
    + `\n\n#### openFile: one batch of a Blob against reading it whole, ${env}\n\n` + table([['rows/batch', 'batch(100) ms',
      'whole file ms', 'whole ÷ batch', 'bytes read', 'batch bytes (mean)', 'read ÷ batch'], ...random]);
}
