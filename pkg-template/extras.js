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

/** Makes a StreamReader iterable: `for (const batch of reader)` drains nextBatch(). */
export function addProtocols({ StreamReader }) {
  StreamReader.prototype[Symbol.iterator] = function* batches() {
    for (let batch = this.nextBatch(); batch !== undefined; batch = this.nextBatch()) {
      yield batch;
    }
  };
}
