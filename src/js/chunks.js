// Chunks of the writer as Uint8Arrays, built from (address, length) pairs in one call.
//
// Over a resizable buffer (memory.toResizableBuffer(), which the web build switches to)
// a view never detaches, so it is returned as is: no copy, valid until the Chunks are
// freed. Elsewhere (Node 20) a view would read as empty after the next memory growth,
// with no error, so a copy is returned instead.

function bytes(buffer, address, length) {
  const view = new Uint8Array(buffer, address, length);
  return buffer.resizable ? view : view.slice();
}

/** One chunk. */
export function chunkBytes(memory, address, length) {
  return bytes(memory.buffer, address, length);
}

/** Every chunk, from `table` = [address0, length0, address1, length1, ...]. */
export function chunkArray(memory, table) {
  const buffer = memory.buffer;
  const out = new Array(table.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = bytes(buffer, table[2 * i], table[2 * i + 1]);
  return out;
}
