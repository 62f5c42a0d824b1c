// What keeps wasm memory that JS reads from being freed under it, and what says it was.
//
// The garbage collector frees a batch, table or writer chunk whose JS object it finds
// unreachable (wasm-bindgen's FinalizationRegistry), and the allocator then reuses that
// memory. So a column keeps its owner reachable (`column[OWNER]`: the batch or table
// object, or the parent column), and every view keeps its column reachable
// (`view[OWNER]`): a view in use never reads memory the collector freed under it. Neither
// link may be stored where Rust holds a reference, or the owner could never be collected.
// The links are properties, not WeakMap entries: a WeakMap entry per view cost more than
// a whole small batch's decode in Node, mostly in the collector.
//
// Freeing: Rust sets `token.freed` when a batch or table is dropped; every column getter
// checks it and throws rather than read freed memory.

/** The key under which a column, or a view of wasm memory, holds what owns its memory. */
export const OWNER = Symbol.for('quiver-arrow.owner');

/** Keeps `owner` reachable for as long as `view` is; returns `view`. */
export function keepAlive(view, owner) {
  if (view != null) view[OWNER] = owner;
  return view;
}

/**
 * A batch's or table's token, made with `freed` so that a freed token keeps its shape:
 * the getters' `token.freed` read then sees one shape, not two, once any batch was freed.
 */
export function newToken() {
  return { freed: false };
}

/** Sets `token.freed` (called by Rust when a batch or table is dropped). */
export function markFreed(token) {
  token.freed = true;
}

/**
 * Makes what batches, tables and writer chunks hand out keep them reachable (the package
 * entries call it on the glue's classes), so that a column, or a view of wasm memory,
 * still in use after its owner was dropped never reads other data, or throws that its
 * batch was freed when nobody freed it.
 */
export function keepOwners({ RecordBatch, Table, Chunks }) {
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
