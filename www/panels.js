// The comparison panels' measurements, run in the demo's worker (worker.js): decoding the
// frames just received with Quiver and with apache-arrow JS, and the writer's allocations
// with right-sized against fixed 1 MiB chunks. compare.js draws the results.
import { StreamReader, StreamWriter, memoryStats, messageSize } from '../pkg/web/index.js';

/** Rows per batch of the writer panel (Comet's table). */
export const WRITER_ROWS = [100, 256, 1024, 2048, 4096, 8192];

/**
 * apache-arrow JS, vendored as a UMD script (demo.sh copies it to www/vendor/). A module
 * worker has no importScripts, so the script runs in the worker's global scope, where it
 * defines `Arrow`.
 */
async function arrowJS() {
  if (!globalThis.Arrow) {
    const script = await fetch(new URL('vendor/Arrow.es2015.min.js', import.meta.url));
    if (!script.ok) throw new Error(`apache-arrow JS did not load: HTTP ${script.status}`);
    (0, eval)(await script.text());
  }
  return globalThis.Arrow;
}

/** Decodes `segments` (an IPC stream, in frames) and sums the `value` column into `out`. */
function quiverDecode(segments, out) {
  const reader = new StreamReader();
  try {
    for (const segment of segments) {
      reader.push(segment);
      for (const batch of reader) {
        out.rows += batch.numRows;
        const values = batch.column('value').values;
        for (let i = 0; i < values.length; i++) out.sum += values[i];
        batch.free();
      }
    }
    reader.finish();
  } finally {
    reader.free();
  }
}

function arrowDecode(Arrow, segments, out) {
  for (const batch of Arrow.RecordBatchReader.from(segments)) {
    out.rows += batch.numRows;
    for (const data of batch.getChild('value').data) {
      const { values } = data;
      for (let i = 0; i < data.length; i++) out.sum += values[i];
    }
  }
}

/** Best of three decodes of the same segments (the machine may be busy), with the wasm bytes the first allocated. */
function measure(decode, segments) {
  try {
    let best;
    for (let round = 0; round < 3; round++) {
      const result = { rows: 0, sum: 0 };
      const before = memoryStats().allocatedBytes;
      const start = performance.now();
      decode(segments, result);
      const ms = performance.now() - start;
      best ??= { ...result, ms, allocated: memoryStats().allocatedBytes - before };
      best.ms = Math.min(best.ms, ms);
    }
    return best;
  } catch (error) {
    return { error: error.message };
  }
}

/** The decode panel's figures for `segments`, the frames' IPC bytes. */
export async function measureDecoders(segments) {
  const Arrow = await arrowJS();
  return {
    frames: segments.length,
    bytes: segments.reduce((n, s) => n + s.byteLength, 0),
    Quiver: measure(quiverDecode, segments),
    'apache-arrow JS': measure((s, out) => arrowDecode(Arrow, s, out), segments),
  };
}

/**
 * The writer panel's figures, one batch per size in WRITER_ROWS (`batches` maps rows to a
 * RecordBatch). The first write of a writer carries the schema, so the second is measured.
 */
export function measureWriters(batches) {
  const allocated = (batch, options) => {
    const writer = StreamWriter.forBatch(batch, options);
    writer.write(batch).free();
    const before = memoryStats().allocatedBytes;
    const chunks = writer.write(batch);
    const cost = memoryStats().allocatedBytes - before;
    chunks.free();
    writer.free();
    return cost;
  };
  return WRITER_ROWS.map((n) => {
    const batch = batches.get(n);
    return { n, payload: messageSize(batch), exact: allocated(batch), fixed: allocated(batch, { chunkSizing: 'fixed' }) };
  });
}
