// The column-access benchmark of issue 4, run the same way in Node and in Chromium: on the
// reader workload (200 batches of id int64, i32 int32 with 10% nulls, f64 float64, str
// 16-byte utf8), decode a whole stream and scan three columns: the sum of i32 over valid
// rows (read from the validity bitmap), the sum of f64, and the sum of the string lengths
// (one per row, from the offsets). Every contender scans the same way, over its own
// buffers, and must find the same checksum:
//   quiver views     tableFromIPC, then table.getChild(name).chunks views;
//   quiver toArrowJS tableFromIPC, toArrowJS(table, arrow), then the Arrow JS Data;
//   arrowjs          apache-arrow tableFromIPC, then its Data;
//   flechette        flechette tableFromIPC, then its batches.
// Each is timed twice: decode+scan, and scan alone over an already decoded stream; and
// toArrowJS alone, on a table Quiver decoded, is timed against Arrow JS's tableFromIPC.
// Each contender runs its own copy of the scan loop, as an app using one library would:
// with one shared loop, V8's type feedback for it would mix every contender's arrays.
import { interleavedMediansMs, table, fmt, warmUp } from './timing.js';

const BATCHES = 200;

/** Scans one batch's buffers; `bit0` is the validity bitmap's bit offset. */
function scan(i32, validity, bit0, f64, offsets, length) {
  let ints = 0;
  let floats = 0;
  let chars = 0;
  for (let i = 0; i < length; i++) {
    const j = bit0 + i;
    if (validity === null || (validity[j >> 3] >> (j & 7)) & 1) ints += i32[i];
    floats += f64[i];
    chars += offsets[i + 1] - offsets[i];
  }
  return ints + floats + chars;
}

/** A copy of `scan` with type feedback of its own. */
export const ownScan = () => new Function(`return ${scan}`)();

/** Scans Arrow JS Data chunks of the i32, f64 and str columns (offset 0 here). */
function scanArrowData(scanBatch, i32, f64, str) {
  let sum = 0;
  for (let c = 0; c < i32.length; c++) {
    const bitmap = i32[c].nullCount > 0 ? i32[c].nullBitmap : null;
    sum += scanBatch(i32[c].values, bitmap, i32[c].offset, f64[c].values, str[c].valueOffsets, i32[c].length);
  }
  return sum;
}

function contenders({ quiver, arrow, flechette }) {
  const [scanViews, scanToArrowJS, scanArrowJS, scanFlechette] = [0, 1, 2, 3].map(ownScan);
  return {
    'quiver views': {
      decode: (bytes) => quiver.tableFromIPC(bytes),
      scan(decoded) {
        const [i32, f64, str] = ['i32', 'f64', 'str'].map((name) => decoded.getChild(name).chunks);
        let sum = 0;
        for (let c = 0; c < i32.length; c++) {
          const { values, validity, validityBitOffset, length } = i32[c];
          sum += scanViews(values, validity, validityBitOffset, f64[c].values, str[c].offsets, length);
        }
        return sum;
      },
      free: (decoded) => decoded.free(),
    },
    'quiver toArrowJS': {
      decode: (bytes) => {
        const decoded = quiver.tableFromIPC(bytes);
        const converted = quiver.toArrowJS(decoded, arrow);
        decoded.free(); // the Arrow JS table holds its own share (or copies)
        return converted;
      },
      scan: (t) => scanArrowData(scanToArrowJS, t.getChildAt(1).data, t.getChildAt(2).data, t.getChildAt(3).data),
    },
    arrowjs: {
      decode: (bytes) => arrow.tableFromIPC(bytes),
      scan: (t) => scanArrowData(scanArrowJS, t.getChildAt(1).data, t.getChildAt(2).data, t.getChildAt(3).data),
    },
    flechette: {
      decode: (bytes) => flechette.tableFromIPC(bytes),
      scan(t) {
        const [i32, f64, str] = ['i32', 'f64', 'str'].map((name) => t.getChild(name).data);
        let sum = 0;
        for (let c = 0; c < i32.length; c++) {
          const validity = i32[c].nullCount > 0 ? i32[c].validity : null;
          sum += scanFlechette(i32[c].values, validity, 0, f64[c].values, str[c].offsets, i32[c].length);
        }
        return sum;
      },
    },
  };
}

/**
 * Each contender's median (interleavedMediansMs of `makeRun(contender, index)`), with
 * 'quiver toArrowJS' timed in rounds of its own: in Chromium its tables share wasm memory
 * until they are collected, and Quiver's next decode in the same rounds grew memory around
 * them (decode and scan of 8192-row batches through the views, in one page: 181 µs a
 * batch alone, 749 in turns with toArrowJS).
 */
async function mediansApart(all, makeRun, options) {
  const medians = [];
  for (const apart of [false, true]) {
    const group = [...all.keys()].filter((k) => (all[k][0] === 'quiver toArrowJS') === apart);
    const ms = await interleavedMediansMs(group.map((k) => makeRun(all[k][1], k)), options);
    group.forEach((k, i) => { medians[k] = ms[i]; });
  }
  return medians;
}

/**
 * Result rows: µs per batch of each contender, for decode+scan and for scan alone, from
 * interleaved rounds (see interleavedMediansMs).
 */
export async function runViewsBench(libs, files, { rounds = 7, minMs = 2000, log = () => {} } = {}) {
  const results = [];
  // Made once: every loop then carries its compiled code and type feedback from one size
  // to the next, the same for all. (Where the views' scan time goes is the scan suite's
  // question, bench/scan.js.)
  const all = Object.entries(contenders(libs));
  for (const rows of [100, 500, 2000, 8192]) {
    const bytes = files[`reader-${rows}-none`];
    const once = (c) => () => {
      const decoded = c.decode(bytes);
      const sum = c.scan(decoded);
      c.free?.(decoded);
      return sum;
    };
    let expected;
    for (const [name, c] of all) {
      if (rows === 100) await warmUp(once(c));
      const check = once(c)().toFixed(3);
      expected ??= check;
      if (check !== expected) throw new Error(`${name} checksum ${check} != ${expected} (${rows} rows)`);
    }
    const full = await mediansApart(all, once, { rounds, minMs });
    const decoded = all.map(([, c]) => c.decode(bytes));
    // A scan alone takes well under a millisecond at 100 rows: more rounds, as the
    // machine's noise is of that order.
    const scanOnly = await mediansApart(all, (c, k) => () => c.scan(decoded[k]), { rounds: 5 * rounds, minMs });
    for (const [k, [name, c]] of all.entries()) {
      c.free?.(decoded[k]);
      for (const [work, ms] of [['decode+scan', full[k]], ['scan', scanOnly[k]]]) {
        results.push({ rows, name, work, usPerBatch: (ms * 1000) / BATCHES });
      }
      log(`${rows} ${name}: ${fmt((full[k] * 1000) / BATCHES, 2)} µs/batch decode+scan, ${fmt((scanOnly[k] * 1000) / BATCHES, 2)} scan`);
    }
    // What toArrowJS adds to a stream Quiver already decoded, next to Arrow JS decoding it.
    const quiverTable = libs.quiver.tableFromIPC(bytes);
    const [convert, arrowDecode] = await interleavedMediansMs(
      [() => libs.quiver.toArrowJS(quiverTable, libs.arrow), () => libs.arrow.tableFromIPC(bytes)],
      { rounds, minMs },
    );
    quiverTable.free();
    results.push({ rows, name: 'quiver toArrowJS', work: 'convert', usPerBatch: (convert * 1000) / BATCHES });
    results.push({ rows, name: 'arrowjs', work: 'convert', usPerBatch: (arrowDecode * 1000) / BATCHES });
  }
  return results;
}

/** Markdown: µs per batch per contender, with the ratios issue 4 targets. */
export function viewsTables(results, env) {
  const us = (rows, name, work) => results.find((r) => r.rows === rows && r.name === name && r.work === work)?.usPerBatch;
  const header = ['rows/batch', 'work', 'Quiver views µs', 'Quiver toArrowJS µs', 'Arrow JS µs', 'flechette µs',
    'views ÷ flechette', 'toArrowJS ÷ Arrow JS'];
  const body = [];
  const sizes = [...new Set(results.map((r) => r.rows))];
  for (const rows of sizes) {
    for (const work of ['decode+scan', 'scan']) {
      const [v, t, a, f] = ['quiver views', 'quiver toArrowJS', 'arrowjs', 'flechette'].map((n) => us(rows, n, work));
      body.push([rows, work, fmt(v, 2), fmt(t, 2), fmt(a, 2), fmt(f, 2), `${fmt(v / f, 2)}×`, `${fmt(t / a, 2)}×`]);
    }
  }
  const convert = sizes.map((rows) => {
    const [t, a] = [us(rows, 'quiver toArrowJS', 'convert'), us(rows, 'arrowjs', 'convert')];
    return [rows, fmt(t, 2), fmt(a, 2), `${fmt(t / a, 2)}×`];
  });
  return [
    `#### Column access (decode, then scan i32 with nulls, f64, string lengths), ${env}\n\n${table([header, ...body])}`,
    `#### toArrowJS on a decoded table vs Arrow JS tableFromIPC, ${env}\n\n` +
      table([['rows/batch', 'toArrowJS µs', 'Arrow JS tableFromIPC µs', 'toArrowJS ÷ Arrow JS'], ...convert]),
  ].join('\n\n');
}
