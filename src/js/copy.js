// Copies pushed bytes into wasm memory through one view of the whole memory, kept between
// calls: a new view per copy, and a subarray of the segment per message part, were a
// third of the reader's JS time on small batches (profiled in Chromium).
//
// Over a resizable buffer (memory.toResizableBuffer(), which the web build switches to)
// a view made without a length tracks the memory as it grows, so it is made once.
// Otherwise growth detaches the old buffer, which leaves the view empty, and it is remade.
// Testing for that instead of comparing with `memory.buffer` saves a getter call per copy;
// with the loop for prefixes below, 7-10% of decoding an uncompressed 100-row batch in
// Chromium and Node (interleaved A/B runs, 2026-12-02).

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
  heapOf(memory);
  if (start === 0) inMemory = segment.buffer === heap.buffer ? segment.byteOffset : -1;
  if (inMemory >= 0) {
    heap.copyWithin(address, inMemory + start, inMemory + start + length);
  } else if (length <= 16) {
    // A message's 4-byte prefix parts: a loop costs less than a subarray to copy from.
    for (let i = 0; i < length; i++) heap[address + i] = segment[start + i];
  } else {
    heap.set(start === 0 && length === segment.length ? segment : segment.subarray(start, start + length), address);
  }
}

/**
 * Copies `length` bytes of `array` from `start` to `address` in `memory`: a part of an IPC
 * file into the reader's buffers. The parts of a file are read at any offset, so the
 * state copyToMemory keeps per push does not apply.
 */
export function copyRange(memory, array, start, length, address) {
  heapOf(memory).set(array.subarray(start, start + length), address);
}

/**
 * Copies `length` bytes at `from` in `memory` to `address`: a part of an IPC file that is
 * itself a view of wasm memory, which growth during the read would detach.
 */
export function copyWithinMemory(memory, from, length, address) {
  heapOf(memory).copyWithin(address, from, from + length);
}

/** The view of the whole of `memory`, made again if growth detached it. */
function heapOf(memory) {
  if (heap.length === 0) heap = new Uint8Array(memory.buffer);
  return heap;
}
