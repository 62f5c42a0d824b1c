// The writer as a TransformStream: Quiver RecordBatches in, the IPC stream's bytes out in
// the writer's right-sized chunks, for `fetch(url, { body, duplex: 'half' })`, a file's
// WritableStream or `new Blob(chunks)`.
//
// Each chunk leaves wasm memory as a copy in an ArrayBuffer of its own, and the Chunks
// are freed at once. A view would have to outlive the writer for as long as the stream's
// reader holds it, and Blob, Response and fetch refuse views of a resizable buffer, which
// wasm memory is in the web build (Chromium 156: "The provided ArrayBufferView value must
// not be resizable"). Where Chunks hand out copies already (fixed-size memory: Node 20,
// WebKit) they are not copied again: every runtime copies each byte out once.

import { describe } from './sources.js';

/**
 * A TransformStream that writes the batches written to it with a `StreamWriter` made by
 * `StreamWriter.forBatch(first batch, options)`. Each batch becomes the stream's, which
 * frees it once written. Closing the stream writes the end-of-stream marker.
 */
export function writerStream({ StreamWriter, RecordBatch }, options) {
  let writer;
  // The batches written and not yet transformed, which a stream that fails or is
  // cancelled drops from its queue: freed then, not left to the collector. The writable
  // side's `size` sees every chunk as it is written, before it is queued.
  const queued = new Set();
  let ended = false;
  const release = () => {
    writer?.free();
    writer = undefined;
    ended = true;
    for (const batch of queued) if (batch instanceof RecordBatch) batch.free();
    queued.clear();
  };
  const enqueue = (chunks, controller) => {
    try {
      for (const bytes of chunks.toArray()) controller.enqueue(bytes.buffer.resizable ? bytes.slice() : bytes);
    } finally {
      chunks.free();
    }
  };
  return new TransformStream({
    transform(batch, controller) {
      queued.delete(batch);
      if (!(batch instanceof RecordBatch)) {
        release();
        throw new Error(`StreamWriter.transformStream expects Quiver RecordBatches, found ${describe(batch)} (fromArrowJS converts apache-arrow ones)`);
      }
      try {
        writer ??= StreamWriter.forBatch(batch, options);
        enqueue(writer.write(batch), controller);
      } catch (error) {
        release();
        throw error;
      } finally {
        batch.free();
      }
    },
    flush(controller) {
      // Every write accepted before close() has been transformed: what is still queued
      // was refused (written after close()), and stays its caller's.
      queued.clear();
      if (writer === undefined) {
        throw new Error('StreamWriter.transformStream was closed before any batch: the stream takes its schema from the first batch');
      }
      try {
        enqueue(writer.finish(), controller);
      } finally {
        release();
      }
    },
    // Where the runtime calls it (readable cancelled, writable aborted); elsewhere the
    // collector frees the writer and the batches still queued.
    cancel: release,
  }, {
    highWaterMark: 1,
    size(batch) {
      // A write to a stream that has ended is refused: that batch stays the caller's.
      if (!ended) queued.add(batch);
      return 1;
    },
  });
}
