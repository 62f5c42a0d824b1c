// The writer benchmark of issue 3, run the same way in Node and in headless Chromium:
// 200 batches (int64, int32 with 10% nulls, float64, 16-byte utf8) at 100, 500, 2000 and
// 8192 rows, written as an IPC stream by Quiver (right-sized chunks, and chunks fixed at
// 1 MiB, the old way), apache-arrow JS's RecordBatchStreamWriter and flechette's
// tableToIPC, next to a plain copy of the same bytes. ZSTD (level 1) is Quiver only: the
// JS peers have no ZSTD encoder to register (fzstd only decodes).
//
// Quiver starts from batches already in wasm (decoded by StreamReader), and again from
// the Arrow JS batches through fromArrowJS (one copy into wasm per batch), and hands the
// chunks to JS with toArray(), as a sender would. Every contender's output is copied once
// into the same destination, as a sender copies what it sends, and is decoded once and
// must hold all rows, so a contender that skips work fails instead of winning.
import { interleavedMediansMs, table, fmt, warmUp } from './timing.js';

const BATCHES = 200;
// The contender that writes with the zstd-c flavour's module, not the default one.
const ZSTD_C = 'quiver (C zstd)';

/** The contenders for `codec`; each returns the stream as a list of Uint8Arrays. */
function contenders({ quiver, quiverZstdC, arrow, flechette }, codec) {
  const compression = codec === 'zstd' ? { compression: 'zstd', zstdLevel: 1 } : {};
  // Every contender's output goes to the same sink: a copy into `dst`, as WebSocket.send
  // or a file write would copy it. Quiver's chunks are consumed before the Chunks are
  // freed (a view is valid only until free()); the peers' streams are sent the same way.
  const sink = (dst) => {
    let at = 0;
    const put = (bytes) => {
      dst.set(bytes, at);
      at += bytes.length;
    };
    return {
      put,
      consume(chunks) {
        for (const bytes of chunks.toArray()) put(bytes);
        chunks.free();
      },
      written: () => dst.subarray(0, at),
    };
  };
  // `module` writes `batches`, which it decoded itself: a batch belongs to one instance.
  const quiverWrite = (module, batches, chunkSizing) => ({ dst, ...input }) => {
    const options = { ...compression, chunkSizing };
    const writer = module.StreamWriter.forBatch(input[batches][0], options);
    const out = sink(dst);
    for (const batch of input[batches]) out.consume(writer.write(batch));
    out.consume(writer.finish());
    writer.free();
    return [out.written()];
  };
  // From Arrow JS batches: fromArrowJS copies each batch into wasm once, then it is written.
  const quiverFromArrowJS = ({ arrowBatches, dst }) => {
    const first = quiver.fromArrowJS(arrowBatches[0]);
    const writer = quiver.StreamWriter.forBatch(first, compression);
    first.free();
    const out = sink(dst);
    for (const arrowBatch of arrowBatches) {
      const batch = quiver.fromArrowJS(arrowBatch);
      out.consume(writer.write(batch));
      batch.free();
    }
    out.consume(writer.finish());
    writer.free();
    return [out.written()];
  };
  const quivers = {
    quiver: quiverWrite(quiver, 'quiverBatches', 'exact'),
    'quiver fixed 1 MiB': quiverWrite(quiver, 'quiverBatches', 'fixed'),
    'quiver from Arrow JS': quiverFromArrowJS,
  };
  // The zstd-c flavour (bench.sh --zstd-c): C zstd's compressor against ruzstd's.
  if (codec === 'zstd' && quiverZstdC) {
    quivers[ZSTD_C] = quiverWrite(quiverZstdC, 'zstdCBatches', 'exact');
  }
  if (codec === 'zstd') return quivers;
  return {
    memcpy({ messages, dst }) {
      let at = 0;
      for (const m of messages) {
        dst.set(m, at);
        at += m.length;
      }
      return [dst];
    },
    ...quivers,
    // Arrow JS's writer has no synchronous sink: its output is joined into one buffer
    // first (one more copy than the others make), as an app sending it would have it.
    arrowjs({ arrowBatches, dst }) {
      const writer = new arrow.RecordBatchStreamWriter();
      for (const b of arrowBatches) writer.write(b);
      writer.finish();
      const out = sink(dst);
      out.put(writer.toUint8Array(true));
      return [out.written()];
    },
    flechette({ flechetteTable, dst }) {
      const out = sink(dst);
      // flechette writes each part to the sink as it goes: one copy, like Quiver's chunks.
      flechette.tableToIPC(flechetteTable, { format: 'stream', sink: { write: out.put, finish: () => null } });
      return [out.written()];
    },
  };
}

function joined(parts) {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/**
 * Runs the matrix and returns result rows. Each cell's contenders are timed in
 * interleaved rounds (see interleavedMediansMs).
 */
export async function runWriterBench(libs, files, { rounds = 5, minMs = 2000, log = () => {} } = {}) {
  const { quiver, quiverZstdC, arrow, flechette } = libs;
  const results = [];
  for (const rows of [100, 500, 2000, 8192]) {
    const bytes = files[`reader-${rows}-none`];
    const source = quiver.tableFromIPC(bytes);
    const quiverBatches = source.batches;
    const arrowBatches = arrow.tableFromIPC(bytes).batches;
    const flechetteTable = flechette.tableFromIPC(bytes);
    const payload = quiver.messageSize(quiverBatches[0]);
    // The stream as Quiver writes it, one piece per write, for the memcpy floor. `dst` is
    // where every contender's output is copied to, with room for the peers' streams,
    // whose metadata differs in size.
    const writer = quiver.StreamWriter.forBatch(quiverBatches[0]);
    const messages = quiverBatches.map((batch) => {
      const chunks = writer.write(batch);
      const piece = chunks.toUint8Array();
      chunks.free();
      return piece;
    });
    writer.free();
    const dst = new Uint8Array(2 * messages.reduce((n, m) => n + m.length, 8) + (1 << 20));
    const zstdCSource = quiverZstdC?.tableFromIPC(bytes);
    const input = { quiverBatches, zstdCBatches: zstdCSource?.batches, arrowBatches, flechetteTable, messages, dst };
    for (const codec of ['none', 'zstd']) {
      const cell = Object.entries(contenders(libs, codec));
      const allocated = {};
      for (const [name, fn] of cell) {
        const go = () => fn(input);
        if (rows === 100) await warmUp(go, codec === 'none' ? 1500 : 500);
        if (name !== 'memcpy') {
          const check = quiver.tableFromIPC(joined(go()));
          if (check.numRows !== BATCHES * rows) throw new Error(`${name} wrote ${check.numRows} rows`);
          check.free();
        }
        const module = name === ZSTD_C ? quiverZstdC : quiver;
        const before = module.memoryStats().allocatedBytes;
        go();
        allocated[name] = (module.memoryStats().allocatedBytes - before) / BATCHES;
      }
      const medians = await interleavedMediansMs(cell.map(([, fn]) => () => fn(input)), { rounds, minMs });
      for (const [k, [name]] of cell.entries()) {
        const row = { codec, rows, name, payload, usPerBatch: (medians[k] * 1000) / BATCHES,
          wasmBytesPerBatch: name.startsWith('quiver') ? allocated[name] : undefined };
        results.push(row);
        log(`${codec} ${rows} ${name}: ${fmt(row.usPerBatch, 2)} µs/batch`);
      }
    }
    for (const b of quiverBatches) b.free();
    source.free();
    for (const b of input.zstdCBatches ?? []) b.free();
    zstdCSource?.free();
  }
  return results;
}

/** Markdown tables in the shape of issue 3: allocation and µs per batch, with ratios. */
export function writerTables(results, env) {
  const out = [];
  const pick = (r, name) => results.find((x) => x.codec === r.codec && x.rows === r.rows && x.name === name);
  for (const codec of ['none', 'zstd']) {
    const rows = results.filter((r) => r.codec === codec && r.name === 'quiver');
    const header = ['rows/batch', 'payload', 'wasm alloc/batch, right-sized', 'wasm alloc/batch, fixed 1 MiB',
      'Quiver µs', 'fixed 1 MiB µs', 'from Arrow JS µs'];
    if (codec === 'none') header.push('Arrow JS µs', 'flechette µs', 'memcpy µs', 'fastest JS ÷ Quiver', 'Quiver/memcpy');
    // Payload bytes per µs: the codec's throughput over the batch as written.
    const mbps = (r) => fmt(r.payload / r.usPerBatch, 0);
    const zstdC = codec === 'zstd' && rows.some((q) => pick(q, ZSTD_C));
    if (codec === 'zstd') header.push('ruzstd MB/s');
    if (zstdC) header.push('C zstd µs', 'C zstd alloc/batch', 'C zstd MB/s', 'ruzstd ÷ C zstd');
    const body = rows.map((q) => {
      const fixed = pick(q, 'quiver fixed 1 MiB');
      const row = [q.rows, `${fmt(q.payload / 1024, 1)} KiB`, `${fmt(q.wasmBytesPerBatch / 1024, 1)} KiB`,
        `${fmt(fixed.wasmBytesPerBatch / 1024, 1)} KiB`, fmt(q.usPerBatch, 2), fmt(fixed.usPerBatch, 2),
        fmt(pick(q, 'quiver from Arrow JS').usPerBatch, 2)];
      if (codec === 'none') {
        const a = pick(q, 'arrowjs');
        const f = pick(q, 'flechette');
        const m = pick(q, 'memcpy');
        row.push(fmt(a.usPerBatch, 2), fmt(f.usPerBatch, 2), fmt(m.usPerBatch, 2),
          fmt(Math.min(a.usPerBatch, f.usPerBatch) / q.usPerBatch, 2) + '×', fmt(q.usPerBatch / m.usPerBatch, 2) + '×');
      }
      if (codec === 'zstd') row.push(mbps(q));
      if (zstdC) {
        const c = pick(q, ZSTD_C);
        row.push(fmt(c.usPerBatch, 2), `${fmt(c.wasmBytesPerBatch / 1024, 1)} KiB`, mbps(c),
          fmt(q.usPerBatch / c.usPerBatch, 2) + '×');
      }
      return row;
    });
    const title = codec === 'none' ? 'uncompressed'
      : 'ZSTD level 1 (Quiver only: the JS peers have no ZSTD encoder; C zstd is the zstd-c flavour)';
    out.push(`#### Writer, ${env}, ${title}\n\n${table([header, ...body])}`);
  }
  return out.join('\n\n');
}
