// What wasm-bindgen does not generate, which the web and Node entries of the package add
// to its glue. The package's extras.js re-exports it (pkg-scripts/build.sh).

import { followGrowth } from './handed_out.js';
import { keepOwners } from './owner.js';
import { addReaderStreams } from './reader_stream.js';
import { writerStream } from './writer_stream.js';
import { FlightSqlClient, renewFlightEndpoint } from './sql.js';

/**
 * Switches wasm memory to a resizable ArrayBuffer where the runtime can
 * (`WebAssembly.Memory.prototype.toResizableBuffer`: Chromium 156 yes, Node 20 no).
 * Views over a resizable buffer follow memory growth instead of detaching. The glue's
 * TextDecoder call is patched at build time to copy such views first, since decode()
 * refuses them (pkg-scripts/patch-glue.mjs).
 */
export function growable(memory) {
  if (typeof memory.toResizableBuffer === 'function' && !memory.buffer.resizable) {
    memory.toResizableBuffer();
  }
  if (memory.buffer.resizable) followGrowth();
}

/**
 * The error Flight calls reject with: `code` is the Flight status code, `codeName` its
 * name (`'UNAUTHENTICATED'`), `details` gRPC's status details. The module creates them;
 * `instanceof FlightError` recognises them.
 */
export class FlightError extends Error {
  static [Symbol.hasInstance](error) {
    return error instanceof Error && error.name === 'FlightError' && typeof error.code === 'number';
  }
}

// The glue's ArrowFile class, for openFile; set by addProtocols.
let ArrowFileClass;
// What each open file reads its bytes with: (start, end) => Promise<Uint8Array>.
const readers = new WeakMap();

/** Reads byte ranges of a Uint8Array (a view, no copy) or of a Blob (only that slice). */
function rangeReader(source) {
  if (source instanceof Uint8Array) {
    // A view of wasm memory itself is made again for each read: reading a batch may grow
    // memory, which detaches the view where memory is not resizable.
    const address = ArrowFileClass.memoryAddress(source);
    if (address !== undefined) {
      const read = async (start, end) => ArrowFileClass.memoryView(address + start, end - start);
      return { size: source.length, read };
    }
    return { size: source.length, read: async (start, end) => source.subarray(start, end) };
  }
  if (typeof Blob !== 'undefined' && source instanceof Blob) {
    const read = async (start, end) => new Uint8Array(await source.slice(start, end).arrayBuffer());
    return { size: source.size, read };
  }
  throw new Error('openFile expects a Uint8Array or a Blob (a File is one)');
}

/**
 * Opens an Arrow IPC file for random access: reads its last 10 bytes and its footer, and
 * nothing else until `batch(i)` asks.
 */
export async function openFile(source, options) {
  const { size, read } = rangeReader(source);
  const tail = await read(Math.max(0, size - 10), size);
  const [start, end] = ArrowFileClass.footerRange(tail, size, options);
  const file = ArrowFileClass.open(await read(start, end), size, options);
  readers.set(file, read);
  return file;
}

/**
 * What the glue cannot generate, and which the entries add to it:
 * - StreamReader: `for (const batch of reader)` drains nextBatch(); `StreamReader.from`
 *   reads a Response, ReadableStream, Blob or async iterable (`for await`);
 * - FlightStream: `next()` (readChunk() without app_metadata) and `for await`;
 * - FlightClient.doPut takes a Table or an array of batches without taking them from the
 *   caller;
 * - StreamWriter.transformStream: the writer as a TransformStream;
 * - FlightClient.sql: the Flight SQL calls, and FlightClient.renewFlightEndpoint (sql.js).
 *
 * Returns the functions the entries export: `tableFromIPCAsync`.
 */
export function addProtocols({ StreamReader, FlightStream, FlightClient, ArrowFile, ...classes }) {
  keepOwners(classes);
  ArrowFileClass = ArrowFile;
  // Reads the ranges batch i needs (the dictionaries the first time, then its block) and
  // decodes them.
  ArrowFile.prototype.batch = async function batch(index) {
    // Checked here: wasm-bindgen would make 1.5, NaN or undefined a batch index, and
    // 2 ** 32 + 1 batch 1.
    if (!Number.isInteger(index) || index < 0 || index > 0xffffffff) {
      const shown = typeof index === 'string' ? JSON.stringify(index) : String(index);
      throw new RangeError(`expected a batch index, a whole number from 0, found ${shown}`);
    }
    const flat = this.ranges(index);
    // readBatch takes them in file order, where a dictionary delta may follow the batch.
    const ranges = [];
    for (let i = 0; i < flat.length; i += 2) ranges.push([flat[i], flat[i + 1]]);
    ranges.sort(([a], [b]) => a - b);
    const read = readers.get(this);
    const parts = await Promise.all(ranges.map(([start, end]) => read(start, end)));
    return this.readBatch(index, ranges.map(([start]) => start), parts);
  };
  StreamReader.prototype[Symbol.iterator] = function* batches() {
    for (let batch = this.nextBatch(); batch !== undefined; batch = this.nextBatch()) {
      yield batch;
    }
  };
  const tableFromIPCAsync = addReaderStreams(StreamReader, classes.tableFromIPC);
  // Absent from the decode-only build.
  if (FlightStream) {
    // readChunk() without the app_metadata: what the wasm module would do in more code.
    FlightStream.prototype.next = async function next() {
      for (;;) {
        const chunk = await this.readChunk();
        if (chunk === undefined || chunk.data) return chunk?.data;
      }
    };
    // Leaving the loop early (break, throw) cancels the rest of the stream.
    FlightStream.prototype[Symbol.asyncIterator] = async function* batches() {
      let ended = false;
      try {
        for (let batch = await this.next(); batch !== undefined; batch = await this.next()) {
          yield batch;
        }
        ended = true;
      } finally {
        if (!ended) this.cancel();
      }
    };
  }
  // Absent from the decode-only build, as is FlightClient.
  if (classes.StreamWriter) {
    classes.StreamWriter.transformStream = (options) => writerStream(classes, options);
  }
  if (FlightClient) {
    FlightClient.prototype.doPut = async function doPut(descriptor, data, options) {
      const signal = options?.signal;
      if (signal !== undefined && typeof signal?.addEventListener !== 'function') {
        throw new TypeError('option signal must be an AbortSignal');
      }
      // A Table's `batches` are new handles, freed here; an array's batches stay the caller's.
      const owned = !Array.isArray(data);
      const batches = owned ? data?.batches : data;
      if (!Array.isArray(batches) || !batches.every((b) => b instanceof classes.RecordBatch)) {
        throw new Error('doPut expects a Quiver Table or an array of Quiver RecordBatches (fromArrowJS converts apache-arrow ones)');
      }
      let put;
      // Cancelling the upload makes its pending write() or finish() reject with CANCELLED.
      const abort = () => put.cancel();
      try {
        // Throws on a bad descriptor: the batches taken from a Table are freed below.
        put = this.startPut(descriptor);
        signal?.addEventListener('abort', abort);
        if (signal?.aborted) abort();
        for (const batch of batches) await put.write(batch);
        return await put.finish();
      } catch (error) {
        put?.cancel();
        throw error;
      } finally {
        signal?.removeEventListener('abort', abort);
        put?.free();
        if (owned) for (const batch of batches) batch.free();
      }
    };
    FlightClient.prototype.renewFlightEndpoint = function renew(endpoint, options) {
      return renewFlightEndpoint(this, endpoint, options);
    };
    Object.defineProperty(FlightClient.prototype, 'sql', {
      get() {
        return new FlightSqlClient(this, { StreamReader, batchFromColumns: classes.batchFromColumns });
      },
    });
  }
  return { tableFromIPCAsync };
}
