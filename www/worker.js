// The demo's decoding, off the page's main thread: the live DoGet (FlightClient decodes
// each frame as it arrives) and the comparison panels' measurements. A ZSTD batch of
// 262144 rows takes tens of milliseconds to decompress; here that never holds up the
// page's input or drawing. The page (app.js) sends `start`, `stop` and `panels`, and
// draws what comes back:
//   { type: 'progress', bytesReceived, elapsed, live }   after each frame
//   { type: 'batch', t, numRows, allocated, live, wasm } after each batch
//   { type: 'preview', names, rows }                     the first batch's first rows
//   { type: 'end', elapsed, stats, error }               error: { message, code } or undefined
//   { type: 'panels', decode, writer } or { type: 'panels', error }
import init, { FlightClient, memoryStats } from '../pkg/web/index.js';
import { measureDecoders, measureWriters, WRITER_ROWS } from './panels.js';
import { captureFrames } from './wire.js';

const PREVIEW_ROWS = 8;

// A module that fails to load (no SIMD, a failed fetch) is reported as each run's error:
// a rejection inside a worker never reaches the page's `error` listener.
const loaded = init().then(() => undefined, (error) => ({
  message: `The wasm module did not load: ${error?.message ?? error}`,
}));
let controller;

onmessage = async ({ data }) => {
  const failure = await loaded;
  if (failure) {
    if (data.type === 'start') postMessage({ type: 'end', elapsed: 0, error: failure });
    else if (data.type === 'panels') postMessage({ type: 'panels', error: failure });
  } else if (data.type === 'start') doGet(data);
  else if (data.type === 'stop') controller?.abort();
  else if (data.type === 'panels') panels(data);
};

/** The live stream: posts progress, a point per batch, the preview, then the end. */
async function doGet({ url, ticket, creditWindow }) {
  controller = new AbortController();
  const began = performance.now();
  const elapsed = () => (performance.now() - began) / 1000;
  let client;
  let stream;
  let error;
  try {
    // Stop works while connecting too (an address that never answers).
    client = await FlightClient.connect(url, { signal: controller.signal });
    let lastAllocated = memoryStats().allocatedBytes;
    stream = client.doGet(ticket, {
      signal: controller.signal,
      creditWindow,
      // After each frame, so the counters move while a large batch is still arriving.
      onProgress: (progress) => postMessage({
        type: 'progress', bytesReceived: progress.bytesReceived, elapsed: elapsed(), live: stream.stats,
      }),
    });
    let previewed = false;
    for await (const batch of stream) {
      // Allocation between batches: the frames' bytes and the decode.
      const memory = memoryStats();
      postMessage({
        type: 'batch', t: elapsed(), numRows: batch.numRows, allocated: memory.allocatedBytes - lastAllocated,
        live: memory.liveBytes, wasm: memory.wasmMemoryBytes,
      });
      lastAllocated = memory.allocatedBytes;
      if (!previewed) postMessage({ type: 'preview', ...preview(batch) });
      previewed = true;
      batch.free();
    }
  } catch (failure) {
    error = { message: failure.message, code: failure.code, aborted: controller.signal.aborted };
  } finally {
    const stats = stream?.stats;
    stream?.free();
    client?.close();
    client?.free();
    postMessage({ type: 'end', elapsed: elapsed(), stats, error });
  }
}

/** The first rows, each value as text. */
function preview(batch) {
  const names = batch.schema.fields.map((f) => f.name);
  const columns = names.map((name) => batch.column(name));
  const rows = [];
  for (let i = 0; i < Math.min(PREVIEW_ROWS, batch.numRows); i++) {
    rows.push(columns.map((c) => String(c.get(i))));
  }
  return { names, rows };
}

/**
 * The decode panel reads the same ticket again, frames as they came (unless `skip`), and
 * the writer panel one batch of each size in WRITER_ROWS from the same generated data.
 */
async function panels({ url, ticket, skipDecode }) {
  try {
    const decode = skipDecode ? undefined : await measureDecoders(await captureFrames(url, ticket));
    const writer = await writerRows(url);
    postMessage({ type: 'panels', decode, writer });
  } catch (error) {
    postMessage({ type: 'panels', error: { message: error.message, code: error.code } });
  }
}

async function writerRows(url) {
  const batches = new Map();
  const client = await FlightClient.connect(url);
  try {
    for (const rows of WRITER_ROWS) {
      const table = await client.doGet(`rows=${rows}&batches=1`).readAll();
      batches.set(rows, table.batches[0]);
      table.free();
    }
    return measureWriters(batches);
  } finally {
    for (const batch of batches.values()) batch.free();
    client.close();
    client.free();
  }
}
