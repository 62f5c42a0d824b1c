// IPC files in the browser: openFile reads one batch of a 256 MiB File built in the page
// without reading the rest of it, counting what it read. (A 1 GiB File built in the page
// fails to read in headless Chromium here, "The requested file could not be read": its
// blob storage limit. file_input.test.js reads a 1 GiB File backed by a file on disk.)
import { test, assert } from './harness.js';
import { FileWriter, batchFromColumns, messageSize, openFile } from 'quiver-arrow';

test('openFile reads one batch of a 256 MiB File, not the File', async () => {
  // 32 batches of 2^20 doubles (8 MiB each), each write's chunks copied into a Blob.
  const batch = batchFromColumns({ x: Float64Array.from({ length: 1 << 20 }, (_, i) => i) });
  const writer = FileWriter.forBatch(batch);
  const parts = [];
  for (let i = 0; i < 32; i++) {
    const chunks = writer.write(batch);
    // Chromium's chunks are views of resizable wasm memory, which Blob refuses: copy.
    parts.push(new Blob(chunks.toArray().map((c) => c.slice())));
    chunks.free();
  }
  const end = writer.finish();
  parts.push(new Blob(end.toArray().map((c) => c.slice())));
  end.free();
  writer.free();
  const file = new File(parts, 'big.arrow');
  assert.ok(file.size > 1 << 28, `${file.size} bytes`);

  const opened = await openFile(file);
  assert.equal(opened.numBatches, 32);
  const last = await opened.batch(31);
  const column = last.column('x').values;
  assert.equal(column[(1 << 20) - 1], (1 << 20) - 1);
  const message = messageSize(batch);
  assert.ok(opened.bytesRead < 2 * message, `read ${opened.bytesRead} bytes for a ${message}-byte batch`);
  const read = opened.bytesRead;
  last.free();
  opened.free();
  batch.free();
  return `${read} of ${file.size} bytes read for batch 31 (its message: ${message})`;
});
