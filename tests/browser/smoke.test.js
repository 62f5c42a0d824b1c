// Smoke tests of the web build in Chromium: init, resizable memory, the glue's string
// decoding on that memory, and a decode through the iterator protocol.
import { test, assert } from './harness.js';
import init, { StreamReader, tableFromIPC } from 'quiver-arrow';
import { tableFromArrays, tableToIPC } from 'apache-arrow';

function twoBatchStream() {
  const batch = () => tableFromArrays({ id: Int32Array.from([1, 2, 3]), naïve: ['a', 'b', 'ç'] });
  return tableToIPC(batch().concat(batch()), 'stream');
}

test('init() switches wasm memory to a resizable buffer, and a second init is harmless', async () => {
  const wasm = await init();
  assert.equal(typeof WebAssembly.Memory.prototype.toResizableBuffer, 'function');
  assert.equal(wasm.memory.buffer.resizable, true);
  // Growth keeps the same buffer, so views made earlier stay attached.
  const buffer = wasm.memory.buffer;
  const before = buffer.byteLength;
  wasm.memory.grow(1);
  assert.equal(wasm.memory.buffer, buffer);
  assert.equal(buffer.byteLength, before + 65536);
});

test('strings decode from resizable memory (the TextDecoder glue patch)', () => {
  // Unpatched, TextDecoder.decode throws "must not be resizable" on these strings.
  const table = tableFromIPC(twoBatchStream());
  assert.deepEqual(table.schema.fields.map((f) => f.name), ['id', 'naïve']);
  table.free();
  assert.throws(() => tableFromIPC(new Uint8Array([1, 2, 3])), (e) => e instanceof Error && e.message.length > 0);
});

test('StreamReader decodes segments through the iterator protocol', () => {
  const bytes = twoBatchStream();
  const reader = new StreamReader();
  const rows = [];
  for (let i = 0; i < bytes.length; i += 7) {
    reader.push(bytes.subarray(i, i + 7));
    for (const batch of reader) {
      rows.push(batch.numRows);
      batch.free();
    }
  }
  reader.finish();
  assert.deepEqual(rows, [3, 3]);
  assert.equal(reader.stats.bytesPushed, bytes.length);
  reader.free();
});
