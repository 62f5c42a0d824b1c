// StreamReader.from and tableFromIPCAsync: a StreamReader fed from a source the platform
// hands over (see sources.js), pushing each segment as it arrives.

import { openSource, readSegments, splitOptions } from './sources.js';

// What each reader made by StreamReader.from reads, until its first `for await`: the
// source, the signal and the name of the function that made it, for errors.
const sources = new WeakMap();

function readerFor(StreamReader, source, options, fn) {
  const { signal, limits } = splitOptions(options, fn);
  const reader = new StreamReader(limits);
  try {
    sources.set(reader, { chunks: openSource(source, fn), signal, fn });
  } catch (error) {
    reader.free();
    throw error;
  }
  return reader;
}

/** The segments of the source `reader` was made for, to the first caller only. */
function takeSource(reader) {
  const source = sources.get(reader);
  if (source === undefined) {
    throw new Error('for await reads a StreamReader made by StreamReader.from(source), once; this one has no source left to read (push bytes and use for...of instead)');
  }
  sources.delete(reader);
  return { ...source, segments: readSegments(source.chunks, source.signal, source.fn) };
}

/**
 * Adds `StreamReader.from(source, options)` and `for await` over what it returns; returns
 * `tableFromIPCAsync`, which the package entries export.
 */
export function addReaderStreams(StreamReader) {
  StreamReader.from = (source, options) => readerFor(StreamReader, source, options, 'StreamReader.from');
  // Leaving the loop early cancels the source. The source's end ends the stream with
  // finish(), which throws if it ended inside a message. No batch is handed out once
  // the signal has aborted.
  StreamReader.prototype[Symbol.asyncIterator] = async function* batches() {
    const { segments, signal } = takeSource(this);
    for await (const segment of segments) {
      this.push(segment);
      for (let batch; !signal?.aborted && (batch = this.nextBatch()) !== undefined;) yield batch;
    }
    this.finish();
  };
  return async function tableFromIPCAsync(source, options) {
    const reader = readerFor(StreamReader, source, options, 'tableFromIPCAsync');
    try {
      for await (const segment of takeSource(reader).segments) reader.push(segment);
      // Takes the batches the reader decoded and kept, and consumes it.
      return reader.intoTable();
    } catch (error) {
      reader.free();
      throw error;
    }
  };
}
