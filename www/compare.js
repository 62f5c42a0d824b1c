// The comparison panels, run in the page after a stream: decoding the frames just
// received with Quiver and with apache-arrow JS (global `Arrow`, vendored), and the
// writer's allocations with right-sized against fixed 1 MiB chunks.
import { StreamReader, StreamWriter, memoryStats, messageSize } from '../pkg/web/index.js';
import { bytes, drawBars, fmt } from './charts.js';

/** Rows per batch of the writer panel (Comet's table). */
export const WRITER_ROWS = [100, 256, 1024, 2048, 4096, 8192];

/** Main-thread work runs in slices of about this long, so input waits at most a frame. */
const SLICE_MS = 8;

/** Gives the event loop back to the page: input, rendering, then the next slice. */
const pause = () => globalThis.scheduler?.yield?.() ?? new Promise((resolve) => setTimeout(resolve));

/**
 * Steps `work`, a generator that yields after each unit (a batch), in slices of SLICE_MS
 * with a pause between; resolves with the time spent in `work` only. The pauses are left
 * out, so the figure is decode time, not how long the page took to get back to it.
 */
async function sliced(work) {
  let ms = 0;
  for (let done = false; !done;) {
    const start = performance.now();
    do ({ done } = work.next()); while (!done && performance.now() - start < SLICE_MS);
    ms += performance.now() - start;
    if (!done) await pause();
  }
  return ms;
}

/** Decodes `segments` (an IPC stream, in frames) and sums the `value` column into `out`. */
function* quiverDecode(segments, out) {
  const reader = new StreamReader();
  try {
    for (const segment of segments) {
      reader.push(segment);
      for (const batch of reader) {
        out.rows += batch.numRows;
        const values = batch.column('value').values;
        for (let i = 0; i < values.length; i++) out.sum += values[i];
        batch.free();
        yield;
      }
    }
    reader.finish();
  } finally {
    reader.free();
  }
}

function* arrowDecode(segments, out) {
  for (const batch of Arrow.RecordBatchReader.from(segments)) {
    out.rows += batch.numRows;
    for (const data of batch.getChild('value').data) {
      const { values } = data;
      for (let i = 0; i < data.length; i++) out.sum += values[i];
    }
    yield;
  }
}

/** Best of three decodes of the same segments (the machine may be busy), with the wasm bytes the first allocated. */
async function measure(decode, segments) {
  try {
    let best;
    for (let round = 0; round < 3; round++) {
      await pause();
      const result = { rows: 0, sum: 0 };
      const before = memoryStats().allocatedBytes;
      const ms = await sliced(decode(segments, result));
      best ??= { ...result, ms, allocated: memoryStats().allocatedBytes - before };
      best.ms = Math.min(best.ms, ms);
    }
    return best;
  } catch (error) {
    return { error: error.message };
  }
}

/** Runs the decode panel; returns its figures. `segments` are the frames' IPC bytes. */
export async function compareDecoders(element, segments, compression) {
  const total = segments.reduce((n, s) => n + s.byteLength, 0);
  const results = {};
  for (const [name, decode] of [['Quiver', quiverDecode], ['apache-arrow JS', arrowDecode]]) {
    results[name] = await measure(decode, segments);
  }
  const bar = (name, kind) => {
    const r = results[name];
    if (r.error) return { name, value: null, text: `failed: ${r.error}`, kind: 'failed' };
    return { name, value: total / 1e6 / (r.ms / 1000), text: `${fmt(total / 1e6 / (r.ms / 1000), 0)} MB/s (${fmt(r.ms, 1)} ms)`, kind };
  };
  const q = results.Quiver;
  const a = results['apache-arrow JS'];
  const agree = !q.error && !a.error && q.rows === a.rows && q.sum === a.sum;
  drawBars(element, [{
    label: `${segments.length} frames, ${bytes(total)} of IPC (${compression}); decode and sum the value column`,
    bars: [bar('Quiver', 'quiver'), bar('apache-arrow JS', 'arrow')],
  }], [
    !q.error && `Quiver allocated ${bytes(q.allocated)} in wasm for ${fmt(q.rows)} rows.`,
    a.error && compression !== 'none' && 'apache-arrow JS reads compressed bodies only with a codec registered by hand; Quiver decodes LZ4 and ZSTD in the module.',
    agree && `Both read ${fmt(q.rows)} rows with the same sum.`,
  ].filter(Boolean).join(' '));
  return results;
}

/**
 * Runs the writer panel on one batch per size in WRITER_ROWS (`batches` maps rows to a
 * RecordBatch). The first write of a writer carries the schema, so the second is measured.
 */
export async function compareWriters(element, batches) {
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
  const rows = [];
  for (const n of WRITER_ROWS) {
    await pause();
    const batch = batches.get(n);
    rows.push({ n, payload: messageSize(batch), exact: allocated(batch), fixed: allocated(batch, { chunkSizing: 'fixed' }) });
  }
  drawBars(element, rows.map(({ n, payload, exact, fixed }) => ({
    label: `${fmt(n)} rows: message ${bytes(payload)}`,
    bars: [
      { name: 'right-sized', value: exact, text: bytes(exact), kind: 'quiver' },
      { name: 'fixed 1 MiB', value: fixed, text: bytes(fixed), kind: 'fixed' },
    ],
  })), 'Right-sized chunks allocate the message size once; fixed chunks allocate a zeroed 1 MiB chunk per message and then copy it down (Apache DataFusion Comet #6985).');
  return rows;
}
