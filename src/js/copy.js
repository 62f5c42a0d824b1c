// Copies pushed bytes into wasm memory through one view of the whole memory, kept between
// calls: a new view per copy, and a subarray of the segment per message part, were a
// third of the reader's JS time on small batches (profiled in Chromium).
//
// Over a resizable buffer (memory.toResizableBuffer(), which the web build switches to)
// a view made without a length tracks the memory as it grows, so it is made once.
// Otherwise memory.buffer is a new ArrayBuffer after each growth, and the view is remade.

let heap = new Uint8Array(0);
// Where the segment being pushed starts in wasm memory, when it is a view of wasm memory
// itself (a writer's chunk, say); otherwise -1. Such a segment is copied by offset, since
// memory growth during the push (a body allocated) detaches it outside resizable memory.
let inMemory = -1;

/**
 * Copies `length` bytes of `segment` from `start` to `address` in `memory`. The decoder's
 * first call for each push has `start` 0.
 */
export function copyToMemory(memory, segment, start, length, address) {
  if (heap.buffer !== memory.buffer) heap = new Uint8Array(memory.buffer);
  if (start === 0) inMemory = segment.buffer === heap.buffer ? segment.byteOffset : -1;
  if (inMemory >= 0) {
    heap.copyWithin(address, inMemory + start, inMemory + start + length);
  } else {
    heap.set(start === 0 && length === segment.length ? segment : segment.subarray(start, start + length), address);
  }
}
