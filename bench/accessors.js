// The per-row accessor benchmark of issue 32, run the same way in Node and in Chromium:
// what an app does with a decoded table besides raw typed-array loops. On the reader
// workload (200 batches of id int64, i32 int32 with 10% nulls, f64 float64, str 16-byte
// utf8) and the nested workload (a list<int32> with 10% nulls), each contender decodes
// once, then every cell is timed in interleaved rounds across Quiver, flechette and
// apache-arrow JS. The per-row cells read the first batches of the workload, about
// 200,000 rows (all 200 batches at 100 rows), so that a slow contender's round stays
// short; the README loop decodes all 200:
//   isValid       chunk.isValid(i) over every row of every batch's i32 column;
//   values per row chunk.values[i], the property read inside the loop, over every f64 row;
//   get int32     table column get(i) (flechette: at(i)) over every row, summing values;
//   iteration     for (const v of column) over the i32 column;
//   toArray X     the table column's toArray() for each column, and the nested list:
//                 typed arrays for the columns without nulls in both libraries;
//                 ", JS array": Quiver's toArray({ typed: false }), flechette's
//                 toArray() made a JS array with Array.from where it is typed;
//   get utf8      table column get(i) over the str column, summing string lengths;
//   table.toArray every row as an object;
//   README loop   decode, then per batch `if (c.isValid(i)) sum += values[i]` over i32;
//                 beside it, one memcpy of the same bytes into a kept buffer: the copy
//                 into wasm memory that Quiver's decode cannot skip (wasm reads only its
//                 own memory), where flechette reads the caller's bytes in place; and
//                 Quiver's loop alone, over a table it decoded before the timing, which
//                 reads views of wasm memory (in Chromium over the resizable buffer, which
//                 V8 reads more slowly; see the fixed-length memory run). The two together
//                 are the cell's floor: what a reader that must copy the bytes into wasm
//                 memory and read them there would take if its decode cost nothing;
//   (memcpy)      beside toArray float64, the column's values copied from one plain
//                 array into a new one; and the floor: Quiver's own views copied by hand
//                 into a new array (a `set` per batch), the copy out of wasm memory
//                 that a typed toArray() of Quiver's cannot go below.
// A cell's checksum must agree across contenders, so that none skips work. Arrow JS runs
// only the cells whose results mean the same thing (its toArray() of numbers drops the
// nulls, its rows are proxies). Each contender's loops are its own functions, as in an
// app that uses one library, so V8's type feedback is not shared between libraries.
// flechette runs twice in each round ("flechette again", its own decoded tables): the
// ratio of the two is what the run's noise makes of the same code, which tells a cell
// where Quiver and flechette do the same work and differ by a few percent from a gap.
import { fmt, interleavedMediansMs, table, warmUp } from './timing.js';

const SIZES = [100, 2000, 8192];

/** A sum of what a cell returns, equal for equal values whatever their JS type. */
function checksum(values) {
  let sum = 0;
  for (const v of values) {
    if (v === null || v === undefined) sum += 0.5;
    else if (typeof v === 'string') sum += v.length;
    else if (Array.isArray(v) || ArrayBuffer.isView(v)) sum += checksum(v) + 1;
    else if (typeof v === 'object') sum += checksum(Object.values(v));
    else sum += Number(v);
  }
  return sum;
}

function quiverCells(quiver) {
  return {
    decode: (bytes) => quiver.tableFromIPC(bytes),
    free: (t) => t.free(),
    isValid(t) {
      let n = 0;
      for (const c of t.getChild('i32').chunks) for (let i = 0; i < c.length; i++) if (c.isValid(i)) n++;
      return n;
    },
    values(t) {
      let sum = 0;
      for (const c of t.getChild('f64').chunks) for (let i = 0; i < c.length; i++) sum += c.values[i];
      return sum;
    },
    getInt32(t) {
      const c = t.getChild('i32');
      let sum = 0;
      for (let i = 0; i < c.length; i++) sum += c.get(i) ?? 0.5;
      return sum;
    },
    iterate(t) {
      let sum = 0;
      for (const v of t.getChild('i32')) sum += v ?? 0.5;
      return sum;
    },
    toArray: (t, name) => t.getChild(name).toArray(),
    copyOut(t, name) {
      const { chunks, length } = t.getChild(name);
      const out = new Float64Array(length);
      let at = 0;
      for (const c of chunks) {
        out.set(c.values, at);
        at += c.length;
      }
      return out;
    },
    jsArray: (t, name) => t.getChild(name).toArray({ typed: false }),
    getUtf8(t) {
      const c = t.getChild('str');
      let sum = 0;
      for (let i = 0; i < c.length; i++) sum += c.get(i).length;
      return sum;
    },
    rows: (t) => t.toArray(),
    readme(bytes) {
      const t = quiver.tableFromIPC(bytes);
      const sum = this.loop(t);
      t.free();
      return sum;
    },
    /** The README loop alone, over a decoded table. */
    loop(t) {
      let sum = 0;
      for (const c of t.getChild('i32').chunks) {
        const values = c.values;
        for (let i = 0; i < c.length; i++) if (c.isValid(i)) sum += values[i];
      }
      return sum;
    },
  };
}

function flechetteCells(flechette) {
  return {
    decode: (bytes) => flechette.tableFromIPC(bytes),
    isValid(t) {
      let n = 0;
      for (const c of t.getChild('i32').data) for (let i = 0; i < c.length; i++) if (c.isValid(i)) n++;
      return n;
    },
    values(t) {
      let sum = 0;
      for (const c of t.getChild('f64').data) for (let i = 0; i < c.length; i++) sum += c.values[i];
      return sum;
    },
    getInt32(t) {
      const c = t.getChild('i32');
      let sum = 0;
      for (let i = 0; i < c.length; i++) sum += c.at(i) ?? 0.5;
      return sum;
    },
    iterate(t) {
      let sum = 0;
      for (const v of t.getChild('i32')) sum += v ?? 0.5;
      return sum;
    },
    toArray: (t, name) => t.getChild(name).toArray(),
    jsArray(t, name) {
      const values = t.getChild(name).toArray();
      return Array.isArray(values) ? values : Array.from(values);
    },
    getUtf8(t) {
      const c = t.getChild('str');
      let sum = 0;
      for (let i = 0; i < c.length; i++) sum += c.at(i).length;
      return sum;
    },
    rows: (t) => t.toArray(),
    readme(bytes) {
      return this.loop(flechette.tableFromIPC(bytes));
    },
    loop(t) {
      let sum = 0;
      for (const c of t.getChild('i32').data) {
        const values = c.values;
        for (let i = 0; i < c.length; i++) if (c.isValid(i)) sum += values[i];
      }
      return sum;
    },
  };
}

function arrowCells(arrow) {
  // Arrow JS answers isValid on a Vector: one per batch, made before the timing (its
  // warm-up rounds) and kept.
  const vectors = new WeakMap();
  const chunksOf = (t) => {
    let v = vectors.get(t);
    if (v === undefined) vectors.set(t, (v = t.getChild('i32').data.map((d) => arrow.makeVector(d))));
    return v;
  };
  return {
    decode: (bytes) => arrow.tableFromIPC(bytes),
    isValid(t) {
      let n = 0;
      for (const c of chunksOf(t)) for (let i = 0; i < c.length; i++) if (c.isValid(i)) n++;
      return n;
    },
    values(t) {
      let sum = 0;
      for (const c of t.getChild('f64').data) for (let i = 0; i < c.length; i++) sum += c.values[i];
      return sum;
    },
    getInt32(t) {
      const c = t.getChild('i32');
      let sum = 0;
      for (let i = 0; i < c.length; i++) sum += c.get(i) ?? 0.5;
      return sum;
    },
    iterate(t) {
      let sum = 0;
      for (const v of t.getChild('i32')) sum += v ?? 0.5;
      return sum;
    },
    getUtf8(t) {
      const c = t.getChild('str');
      let sum = 0;
      for (let i = 0; i < c.length; i++) sum += c.get(i).length;
      return sum;
    },
    readme(bytes) {
      const t = arrow.tableFromIPC(bytes);
      let sum = 0;
      for (const d of t.getChild('i32').data) {
        const c = arrow.makeVector(d);
        const values = d.values;
        for (let i = 0; i < c.length; i++) if (c.isValid(i)) sum += values[i];
      }
      return sum;
    },
  };
}

/** The cells: a name, the workload ('reader' or 'nested'), the method and its argument. */
const CELLS = [
  ['isValid', 'reader', 'isValid'],
  ['values per row', 'reader', 'values'],
  ['get int32', 'reader', 'getInt32'],
  ['iteration int32', 'reader', 'iterate'],
  ['toArray int64', 'reader', 'toArray', 'id'],
  ['toArray int32', 'reader', 'toArray', 'i32'],
  ['toArray float64', 'reader', 'toArray', 'f64'],
  ['toArray int64, JS array', 'reader', 'jsArray', 'id'],
  ['toArray float64, JS array', 'reader', 'jsArray', 'f64'],
  ['toArray utf8', 'reader', 'toArray', 'str'],
  ['toArray list<int32>', 'nested', 'toArray', 'list'],
  ['get utf8', 'reader', 'getUtf8'],
  ['table.toArray', 'reader', 'rows'],
];
const README = 'decode + README loop';
const MEMCPY = 'memcpy';
// The floor's part that MEMCPY is not: Quiver's README loop alone, or Quiver's views
// copied out of wasm memory (see the top of this file).
const LOOP = 'Quiver loop';
const COPY_OUT = 'copy out of wasm memory';
const AGAIN = 'flechette again';
const BATCHES = 200;
const ROWS_READ = 200_000;

/** The first batches of a stream, about ROWS_READ rows, re-encoded by Arrow JS. */
function firstBatches(arrow, bytes, rows) {
  const t = arrow.tableFromIPC(bytes);
  return arrow.tableToIPC(new arrow.Table(t.batches.slice(0, Math.ceil(ROWS_READ / rows))), 'stream');
}

/**
 * Result rows: { rows, cell, name, ns } with ns per row (per batch, in µs, for the README
 * loop), each the median of interleaved rounds of the contenders that run the cell.
 */
export async function runAccessorsBench({ quiver, flechette, arrow }, files, { rounds = 7, minMs = 300, log = () => {} } = {}) {
  const contenders = [
    ['quiver', quiverCells(quiver)],
    ['flechette', flechetteCells(flechette)],
    ['arrowjs', arrowCells(arrow)],
    [AGAIN, flechetteCells(flechette)],
  ];
  const results = [];
  for (const rows of SIZES) {
    const full = files[`reader-${rows}-none`];
    const bytes = { reader: firstBatches(arrow, full, rows), nested: firstBatches(arrow, files[`nested-${rows}`], rows) };
    const read = Math.min(BATCHES, Math.ceil(ROWS_READ / rows)) * rows;
    const tables = contenders.map(([, c]) => ({ reader: c.decode(bytes.reader), nested: c.decode(bytes.nested) }));
    const cells = [
      ...CELLS.map(([cell, workload, method, arg]) => [cell, (c, k) => () => c[method](tables[k][workload], arg), method]),
      [README, (c) => () => c.readme(full), 'readme'],
    ];
    const scratch = new Uint8Array(full.length);
    // toArray float64 is a copy on both sides (flechette returns a batch's own array only
    // for a table of one batch, and every size here has several): beside it, one copy of
    // the same values from one plain array (flechette's toArray()) into a new one.
    const indexOf = (name) => contenders.findIndex(([n]) => n === name);
    const [quiverAt, flechetteAt] = [indexOf('quiver'), indexOf('flechette')];
    const f64 = tables[flechetteAt].reader.getChild('f64').toArray();
    for (const [cell, makeRun, method] of cells) {
      const runs = contenders.flatMap(([name, c], k) => (c[method] ? [[name, makeRun(c, k)]] : []));
      let decoded;
      if (cell === README) {
        const quiverRuns = contenders[quiverAt][1];
        decoded = quiverRuns.decode(full);
        runs.push([MEMCPY, () => scratch.set(full)], [LOOP, () => quiverRuns.loop(decoded)]);
      }
      if (cell === 'toArray float64') {
        const quiverTable = tables[quiverAt].reader;
        runs.push([MEMCPY, () => new Float64Array(f64.length).set(f64)], [COPY_OUT, () => contenders[quiverAt][1].copyOut(quiverTable, 'f64')]);
      }
      let expected;
      for (const [name, run] of runs) {
        if (rows === SIZES[0]) await warmUp(run, 300);
        if (name === MEMCPY) continue;
        const result = run();
        const sum = (typeof result === 'number' ? result : checksum(result)).toFixed(3);
        expected ??= sum;
        if (sum !== expected) throw new Error(`${cell}: ${name} checksum ${sum} != ${expected} (${rows} rows)`);
      }
      const ms = await interleavedMediansMs(runs.map(([, run]) => run), { rounds, minMs });
      runs.forEach(([name], k) => {
        const ns = cell === README ? (ms[k] * 1000) / BATCHES : (ms[k] * 1e6) / read;
        results.push({ rows, cell, name, ns });
      });
      log(`${rows} ${cell}: ${runs.map(([name], k) => `${name} ${fmt(results.at(k - runs.length).ns, 2)}`).join(', ')}`);
      decoded?.free();
    }
    contenders.forEach(([, c], k) => {
      c.free?.(tables[k].reader);
      c.free?.(tables[k].nested);
    });
  }
  return results;
}

/**
 * A cell's floor (see the top of this file) from `at(name)`, each run's time; undefined
 * for a cell without one, or results without its runs.
 */
export function floorOf(cell, at) {
  const floor = cell === README ? at(MEMCPY) + at(LOOP) : cell === 'toArray float64' ? at(COPY_OUT) : undefined;
  return Number.isFinite(floor) ? floor : undefined;
}

/** Markdown: each cell's time per contender and Quiver's over flechette's. */
export function accessorsTables(results, env) {
  const at = (rows, cell, name) => results.find((r) => r.rows === rows && r.cell === cell && r.name === name)?.ns;
  const orDash = (v) => (v === undefined ? '–' : fmt(v, 2));
  const body = [];
  for (const cell of [...CELLS.map(([c]) => c), README]) {
    for (const rows of [...new Set(results.map((r) => r.rows))]) {
      const [q, f, a, m, again] = ['quiver', 'flechette', 'arrowjs', MEMCPY, AGAIN].map((n) => at(rows, cell, n));
      const floor = floorOf(cell, (name) => at(rows, cell, name));
      const same = again === undefined ? '–' : `${fmt(again / f, 2)}×`;
      body.push([cell, rows, fmt(q, 2), fmt(f, 2), fmt(a, 2), orDash(m), orDash(floor), `${fmt(q / f, 2)}×`, same]);
    }
  }
  return `#### Per-row accessors (ns a row; the README loop in µs a batch, beside one memcpy of the stream's bytes, which Quiver's decode must copy into wasm memory, and its floor, that memcpy plus Quiver's loop alone over a table decoded before; toArray float64 beside one copy of the values into a new array, and its floor, Quiver's views copied out of wasm memory by hand; flechette timed twice, the run's noise on the same code), ${env}\n\n` +
    table([['read', 'rows/batch', 'Quiver', 'flechette', 'Arrow JS', 'memcpy', 'floor', 'Quiver ÷ flechette', 'flechette ÷ itself'], ...body]);
}
