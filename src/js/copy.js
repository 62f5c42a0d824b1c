// Copies pushed bytes into wasm memory through one view of the whole memory, kept between
// calls: a new view per copy, and a subarray of the segment per message part, were a
// third of the reader's JS time on small batches (profiled in Chromium).
//
// Over a resizable buffer (memory.toResizableBuffer(), which the web build switches to)
// a view made without a length tracks the memory as it grows, so it is made once.
// Otherwise memory.buffer is a new ArrayBuffer after each growth, and the view is remade.

let heap = new Uint8Array(0);

/** Copies `length` bytes of `segment` from `start` to `address` in `memory`. */
export function copyToMemory(memory, segment, start, length, address) {
  if (heap.buffer !== memory.buffer) heap = new Uint8Array(memory.buffer);
  const part = start === 0 && length === segment.length ? segment : segment.subarray(start, start + length);
  heap.set(part, address);
}
