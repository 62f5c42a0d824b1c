// StreamReader.from, tableFromIPCAsync and the writer's TransformStream in each engine
// (tests/js/lib/streams.js), and over real fetches from the test server: a stream body
// decoded as it arrives, a 404, and the writer's output read back through
// StreamReader.from.
import { test, assert } from './harness.js';
import * as quiver from 'quiver-arrow';
import * as arrow from 'apache-arrow';
import { streamTests } from '../js/lib/streams.js';

streamTests({ test, assert, quiver, arrow });

const { StreamReader, StreamWriter, tableFromIPC, tableFromIPCAsync } = quiver;
// 248 KiB of decimals from the Arrow integration suite, sent by the server in 10 pieces,
// 10 ms apart (server.mjs). Its decimal buffers are 8-byte aligned, so the reader
// realigns (copies) them to 16.
const URL_ = new URL('../data/arrow-testing/integration/1.0.0-littleendian/generated_decimal.stream?pace=25392', location.href).href;

/** Every column of `table` as JS values. */
function values(table) {
  return table.schema.fields.map((_, i) => table.getChild(i).toArray());
}

/** The stream read whole: its size, rows, values, and the bytes one push of it copies. */
async function expected() {
  const bytes = new Uint8Array(await (await fetch(URL_)).arrayBuffer());
  const table = tableFromIPC(bytes);
  const reader = new StreamReader();
  reader.push(bytes);
  for (const batch of reader) batch.free();
  const out = { bytes: bytes.length, copied: reader.stats.bytesCopied, numRows: table.numRows, values: values(table) };
  reader.free();
  table.free();
  return out;
}

test('a fetched stream decodes through StreamReader.from as it arrives, copying no more than one push', async () => {
  const want = await expected();
  const reader = StreamReader.from(await fetch(URL_));
  const segments = [];
  reader.push = (segment) => {
    segments.push(segment.length);
    StreamReader.prototype.push.call(reader, segment);
  };
  const batches = [];
  for await (const batch of reader) batches.push(batch);
  const { bytesPushed, bytesCopied } = reader.stats;
  // Each chunk is copied once, straight into place: no more than the whole body pushed at
  // once costs (its realigned decimals included).
  assert.deepEqual({ bytesPushed, bytesCopied }, { bytesPushed: want.bytes, bytesCopied: want.copied });
  assert.equal(segments.reduce((a, b) => a + b, 0), want.bytes);
  assert.ok(segments.length > 1, `the body came in ${segments.length} chunk(s)`);
  assert.equal(batches.reduce((n, b) => n + b.numRows, 0), want.numRows);
  batches.forEach((b) => b.free());
  reader.free();
  return `${want.bytes} bytes in ${segments.length} chunks, ${bytesCopied} copied`;
});

test('await tableFromIPCAsync(fetch(url)) gives the table tableFromIPC gives', async () => {
  const want = await expected();
  const table = await tableFromIPCAsync(await fetch(URL_));
  assert.equal(table.numRows, want.numRows);
  assert.deepEqual(values(table), want.values);
  table.free();
});

test('a 404 from the server throws, naming the status and the URL', async () => {
  const url = new URL('../data/missing.arrows', location.href).href;
  const response = await fetch(url);
  assert.throws(() => StreamReader.from(response), {
    message: `StreamReader.from expects an OK Response, found HTTP 404 Not Found from ${url}`,
  });
  await assert.rejects(tableFromIPCAsync(await fetch(url)), {
    message: `tableFromIPCAsync expects an OK Response, found HTTP 404 Not Found from ${url}`,
  });
});

test("the TransformStream writer's output, piped into StreamReader.from, reads back equal", async () => {
  const want = await expected();
  const table = await tableFromIPCAsync(await fetch(URL_));
  const batches = table.batches;
  const source = new ReadableStream({
    pull(controller) {
      if (batches.length === 0) controller.close();
      else controller.enqueue(batches.shift());
    },
  });
  const reader = StreamReader.from(source.pipeThrough(StreamWriter.transformStream({ maxChunkBytes: 16384 })));
  const got = [];
  for await (const batch of reader) got.push(batch);
  assert.equal(got.reduce((n, b) => n + b.numRows, 0), want.numRows);
  got.forEach((b) => b.free());
  // And through a Blob, as an app saving the stream to a file would.
  const again = table.batches;
  const encoded = new ReadableStream({
    start(controller) {
      for (const batch of again) controller.enqueue(batch);
      controller.close();
    },
  }).pipeThrough(StreamWriter.transformStream());
  const blob = await new Response(encoded).blob();
  const back = await tableFromIPCAsync(blob);
  assert.deepEqual(values(back), want.values);
  for (const x of [back, reader, table]) x.free();
});
