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

/** Sets `token.freed` (called by Rust when a batch or table is dropped). */
export function markFreed(token) {
  token.freed = true;
}
