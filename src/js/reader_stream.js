// StreamReader.from and tableFromIPCAsync: a StreamReader fed from a source the platform
// hands over (see sources.js), pushing each segment as it arrives.

import { openSource, readSegments, reasonOf, splitOptions } from './sources.js';

// The loop of each reader whose `for await` has begun and not ended, and its source: freed
// mid-loop (a loop left without return(), say), the reader stops both.
const reading = new WeakMap();
// What each reader made by StreamReader.from reads, until its first `for await`: the
// source, the signal, its limits (for a file, read by tableFromIPC), the name of the function that made it (for errors), and the abort
// listener that cancels the source before then.
const sources = new WeakMap();
// A reader collected before its loop (never freed): its source is cancelled, so that no
// body stays open and locked, and the listener leaves the signal, which may live on.
const dropped = new FinalizationRegistry(({ chunks, signal, abort }) => {
  signal?.removeEventListener('abort', abort);
  chunks.cancel(new Error('a StreamReader was collected before its source was read'));
});

function readerFor(StreamReader, source, options, fn) {
  // The source first: a Response that is not OK says so, whatever the options.
  const chunks = openSource(source, fn);
  let signal, limits, reader;
  try {
    ({ signal, limits } = splitOptions(options, fn));
    reader = new StreamReader(limits);
  } catch (error) {
    chunks.cancel(error);
    throw error;
  }
  // The source is locked from here on: an abort before the first `for await` cancels it
  // at once, as one during the loop does (readSegments listens from then on).
  const abort = () => chunks.cancel(reasonOf(signal));
  const record = { chunks, signal, limits, fn, abort };
  sources.set(reader, record);
  dropped.register(reader, record, record);
  signal?.addEventListener('abort', abort);
  if (signal?.aborted) abort();
  return reader;
}

/** `reader`'s source, which no one else will read, with its abort listener removed. */
function detachSource(reader) {
  const source = sources.get(reader);
  if (source === undefined) return undefined;
  sources.delete(reader);
  dropped.unregister(source);
  source.signal?.removeEventListener('abort', source.abort);
  return source;
}

/** The segments of the source `reader` was made for, to the first caller only. */
function takeSource(reader) {
  const source = detachSource(reader);
  if (source === undefined) {
    throw new Error('for await reads a StreamReader made by StreamReader.from(source), once; this one has no source left to read (push bytes and use for...of instead)');
  }
  return { ...source, segments: readSegments(source.chunks, source.signal, source.fn) };
}

/**
 * `method` of StreamReader made to cancel its source first, so that a reader freed or
 * consumed before or during its `for await` leaves no response body open and locked.
 */
function cancellingSource(method, name) {
  return function (...args) {
    detachSource(this)?.chunks.cancel(new Error(`StreamReader.${name}() was called before its source was read`));
    const loop = reading.get(this);
    if (loop !== undefined) {
      reading.delete(this);
      loop.chunks.cancel(new Error(`StreamReader.${name}() was called while its source was read`));
      // Runs the loop's `finally`, which takes its listener off the signal.
      loop.batches.return().catch(() => {});
    }
    return method.apply(this, args);
  };
}

/**
 * Adds `StreamReader.from(source, options)` and `for await` over what it returns; returns
 * `tableFromIPCAsync`, which the package entries export.
 */
export function addReaderStreams(StreamReader, tableFromIPC) {
  StreamReader.from = (source, options) => readerFor(StreamReader, source, options, 'StreamReader.from');
  const { prototype } = StreamReader;
  prototype.free = cancellingSource(prototype.free, 'free');
  // The glue assigned its own free, which would not cancel the source.
  if (Symbol.dispose) prototype[Symbol.dispose] = prototype.free;
  prototype.intoTable = cancellingSource(prototype.intoTable, 'intoTable');
  // Leaving the loop early cancels the source. The source's end ends the stream with
  // finish(), which throws if it ended inside a message. No batch is handed out once
  // the signal has aborted.
  StreamReader.prototype[Symbol.asyncIterator] = function () {
    const source = takeSource(this);
    const loop = { chunks: source.chunks, batches: batches(this, source) };
    reading.set(this, loop);
    return loop.batches;
  };
  return async function tableFromIPCAsync(source, options) {
    const reader = readerFor(StreamReader, source, options, 'tableFromIPCAsync');
    const { segments, limits } = takeSource(reader);
    try {
      // The first bytes tell an IPC file (its magic) from a stream, maybe over segments.
      const head = [];
      let headBytes = 0;
      for (let next; headBytes < MAGIC.length && !(next = await segments.next()).done;) {
        head.push(next.value);
        headBytes += next.value.length;
      }
      if (startsWithMagic(head)) {
        // A file is read through its footer, at its end: its segments are kept as they
        // come and copied into wasm memory once, by tableFromIPC, never joined here.
        reader.free();
        for await (const segment of segments) head.push(segment);
        return tableFromIPC(head, limits);
      }
      for (const segment of head) reader.push(segment);
      for await (const segment of segments) reader.push(segment);
      // Takes the batches the reader decoded and kept, and consumes it.
      return reader.intoTable();
    } catch (error) {
      reader.free();
      // Cancels the source if the error came before the for await that would have.
      await segments.return();
      throw error;
    }
  };
}

async function* batches(reader, { segments, signal }) {
  try {
    for await (const segment of segments) {
      reader.push(segment);
      for (let batch; !signal?.aborted && (batch = reader.nextBatch()) !== undefined;) yield batch;
    }
    reader.finish();
  } finally {
    reading.delete(reader);
  }
}

// What an IPC file starts with: "ARROW1".
const MAGIC = [0x41, 0x52, 0x52, 0x4f, 0x57, 0x31];

/** Whether the bytes of `segments`, one after the other, start with MAGIC. */
function startsWithMagic(segments) {
  let at = 0;
  for (const segment of segments) {
    for (let i = 0; i < segment.length && at < MAGIC.length; i++, at++) {
      if (segment[i] !== MAGIC[at]) return false;
    }
  }
  return at === MAGIC.length;
}
