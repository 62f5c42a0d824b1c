// Smoke tests of the web build in each engine: init, resizable memory where the engine
// has it (Chromium, Firefox) and the fixed-size fallback where not (WebKit), the glue's
// string decoding on that memory, and a decode through the iterator protocol.
import { test, assert } from './harness.js';
import init, { StreamReader, tableFromIPC } from 'quiver-arrow';
import { tableFromArrays, tableToIPC } from 'apache-arrow';

function twoBatchStream() {
  const batch = () => tableFromArrays({ id: Int32Array.from([1, 2, 3]), naïve: ['a', 'b', 'ç'] });
  return tableToIPC(batch().concat(batch()), 'stream');
}

test('init() switches wasm memory to a resizable buffer where the engine can, and a second init is harmless', async () => {
  const wasm = await init();
  const resizable = typeof WebAssembly.Memory.prototype.toResizableBuffer === 'function';
  assert.equal(wasm.memory.buffer.resizable === true, resizable);
  const buffer = wasm.memory.buffer;
  const before = buffer.byteLength;
  wasm.memory.grow(1);
  if (resizable) {
    // Growth keeps the same buffer, so views made earlier stay attached.
    assert.equal(wasm.memory.buffer, buffer);
    assert.equal(buffer.byteLength, before + 65536);
  } else {
    // Growth detaches the old buffer: views are re-derived (src/js/views.js).
    assert.notEqual(wasm.memory.buffer, buffer);
    assert.equal(buffer.byteLength, 0);
    assert.equal(wasm.memory.buffer.byteLength, before + 65536);
  }
  return resizable ? 'resizable' : 'fixed-size';
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

test('the engine has wasm SIMD, which the build needs; reports resizable memory and `using`', () => {
  // A function that splats 0 into a v128 (i32x4.splat) and drops it.
  const simdModule = new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0, 1, 4, 1, 96, 0, 0, 3, 2, 1, 0,
    10, 9, 1, 7, 0, 65, 0, 253, 17, 26, 11]);
  assert.ok(WebAssembly.validate(simdModule), 'wasm SIMD validates (init() loaded a SIMD build)');
  let using = true;
  try {
    // Compiled, not run: an engine without `using` throws a SyntaxError here.
    new Function('{ using x = null; }');
  } catch {
    using = false;
  }
  const resizable = typeof WebAssembly.Memory.prototype.toResizableBuffer === 'function';
  return `SIMD yes, resizable memory ${resizable ? 'yes' : 'no'}, \`using\` ${using ? 'yes' : 'no'}`;
});
