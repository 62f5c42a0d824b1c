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
// checks it and throws rather than read freed memory. `values`, which is no getter, is
// retired by the owner's free() instead (handed_out.js).

import { handedOut, renew, retire } from './handed_out.js';

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
 * batch was freed when nobody freed it. A batch's or table's columns are made once per
 * key and kept by it (handed_out.js), which its free() and memory growth then reach.
 */
export function keepOwners({ RecordBatch, Table, Chunks }) {
  const viewsOwned = (value, chunks) => {
    for (const view of Array.isArray(value) ? value : [value]) {
      if (view.buffer.resizable) view[OWNER] = chunks;
    }
    return value;
  };
  handOutOnce(RecordBatch.prototype, 'column', (key) => key);
  handOutOnce(RecordBatch.prototype, 'columns', () => EVERY_COLUMN);
  // One chunked column per table and key, as a table spans many batch columns.
  handOutOnce(Table.prototype, 'getChild', (key) => key);
  for (const { prototype } of [RecordBatch, Table]) {
    const free = prototype.free;
    prototype.free = function () {
      try {
        retire(this);
      } finally {
        free.call(this);
      }
    };
    // The glue assigned its own free, which would not retire the columns.
    if (Symbol.dispose) prototype[Symbol.dispose] = prototype.free;
  }
  // Absent from the decode-only build. Outside resizable memory chunks are copies.
  if (Chunks) wrapResults(Chunks.prototype, ['chunk', 'toArray'], viewsOwned);
}

// The key under which `columns()` keeps its array.
const EVERY_COLUMN = Symbol('everyColumn');

/**
 * Replaces method `name` of `proto`, which makes a column (or an array of them) of its
 * object, by one that makes it once per `keyOf(key)` and keeps it for the object, each
 * column keeping the object reachable. Kept in a WeakMap keyed by the object, not where
 * Rust holds a reference, which would keep both alive forever.
 */
function handOutOnce(proto, name, keyOf) {
  const make = proto[name];
  proto[name] = function (key) {
    // A freed object (the glue zeroes its pointer) goes to the glue, which throws.
    if (this.__wbg_ptr === 0) return make.call(this, key);
    const columns = handedOut(this);
    let value = columns.get(keyOf(key));
    if (value === undefined) {
      value = make.call(this, key);
      for (const column of Array.isArray(value) ? value : [value]) column[OWNER] = this;
      renew(value);
      columns.set(keyOf(key), value);
    }
    // An array is the caller's to change: a copy of the kept one.
    return Array.isArray(value) ? value.slice() : value;
  };
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
