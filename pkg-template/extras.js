// What wasm-bindgen does not generate, shared by the web and Node entries.

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
}

// The key under which a column, or a writer chunk's view of wasm memory, holds the object
// that owns its memory; src/js/owner.js sets it under the same name. A property, not a
// WeakMap entry, which cost several times more per object, mostly in the collector.
const OWNER = Symbol.for('quiver-arrow.owner');

/**
 * Makes what batches, tables and writer chunks hand out keep them reachable. The garbage
 * collector frees a Quiver object it finds unreachable (wasm-bindgen's
 * FinalizationRegistry), and the allocator reuses that memory: a column, or a view of
 * wasm memory, still in use after its owner was dropped would then read other data, or
 * throw that its batch was freed when nobody freed it.
 */
function keepOwners({ RecordBatch, Table, Chunks }) {
  // Each of `value` (one or an array) keeps `owner` reachable.
  const owned = (value, owner) => {
    for (const column of Array.isArray(value) ? value : [value]) column[OWNER] = owner;
    return value;
  };
  const viewsOwned = (value, chunks) => {
    for (const view of Array.isArray(value) ? value : [value]) {
      if (view.buffer.resizable) view[OWNER] = chunks;
    }
    return value;
  };
  wrapResults(RecordBatch.prototype, ['column', 'columns'], owned);
  // One chunked column per table and key, as a table spans many batch columns. Cached
  // here, by the table object, so that the column holding the table does not keep it
  // alive forever (a cache where Rust holds a reference would).
  const getChild = Table.prototype.getChild;
  const chunked = new WeakMap();
  Table.prototype.getChild = function (key) {
    let columns = chunked.get(this);
    if (columns === undefined) chunked.set(this, (columns = new Map()));
    let column = columns.get(key);
    // A freed table (the glue zeroes its pointer) goes to the glue, which throws.
    if (column === undefined || this.__wbg_ptr === 0) {
      column = owned(getChild.call(this, key), this);
      columns.set(key, column);
    }
    return column;
  };
  // Absent from the decode-only build. Outside resizable memory chunks are copies.
  if (Chunks) wrapResults(Chunks.prototype, ['chunk', 'toArray'], viewsOwned);
}

/** Replaces each method `names` of `proto` by one that returns `then(result, this)`. */
function wrapResults(proto, names, then) {
  for (const name of names) {
    const method = proto[name];
    proto[name] = function (...args) {
      return then(method.apply(this, args), this);
    };
  }
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

/**
 * Makes a StreamReader iterable (`for (const batch of reader)` drains nextBatch()), a
 * FlightStream async-iterable, and adds FlightClient.doPut, which the glue cannot
 * generate: it takes a Table or an array of batches without taking them from the caller.
 */
export function addProtocols({ StreamReader, FlightStream, FlightClient, ...classes }) {
  keepOwners(classes);
  StreamReader.prototype[Symbol.iterator] = function* batches() {
    for (let batch = this.nextBatch(); batch !== undefined; batch = this.nextBatch()) {
      yield batch;
    }
  };
  // Absent from the decode-only build.
  if (FlightStream) {
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
  if (FlightClient) {
    FlightClient.prototype.doPut = async function doPut(descriptor, data) {
      // A Table's `batches` are new handles, freed here; an array's batches stay the caller's.
      const owned = !Array.isArray(data);
      const batches = owned ? data?.batches : data;
      if (!Array.isArray(batches) || !batches.every((b) => b instanceof classes.RecordBatch)) {
        throw new Error('doPut expects a Quiver Table or an array of Quiver RecordBatches (fromArrowJS converts apache-arrow ones)');
      }
      const put = this.startPut(descriptor);
      try {
        for (const batch of batches) await put.write(batch);
        return await put.finish();
      } catch (error) {
        put.cancel();
        throw error;
      } finally {
        put.free();
        if (owned) for (const batch of batches) batch.free();
      }
    };
  }
}
