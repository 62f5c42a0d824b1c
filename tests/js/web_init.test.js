// The web build before and after init(): a call before it throws an Error that says to
// call init() (patch-glue.mjs), and a second init() or initSync() is harmless. The web
// build runs in Node too when given the module's bytes, so this needs no browser.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import init, { initSync, memoryStats, StreamReader, tableFromIPC } from 'quiver-arrow/web';

const bytes = readFileSync(new URL(import.meta.resolve('quiver-arrow/quiver_bg.wasm')));
const NOT_INITIALISED = {
  name: 'Error',
  message:
    'quiver-arrow: the web build is not initialised; call `await init()` ' +
    '(or `initSync({ module })`) once before using anything else from it',
};

test('every kind of export used before init() throws an Error saying to call init()', () => {
  assert.throws(() => new StreamReader(), NOT_INITIALISED);
  assert.throws(() => tableFromIPC(new Uint8Array(8)), NOT_INITIALISED);
  assert.throws(() => memoryStats(), NOT_INITIALISED);
});

test('a second init() and an initSync() after it return the same instance', async () => {
  const [first, concurrent] = await Promise.all([
    init({ module_or_path: bytes }),
    init({ module_or_path: bytes }),
  ]);
  assert.equal(concurrent, first);
  assert.equal(await init({ module_or_path: bytes }), first);
  assert.equal(initSync({ module: bytes }), first);
  const reader = new StreamReader();
  assert.equal(reader.nextBatch(), undefined);
  reader.free();
  assert.equal(typeof memoryStats().liveBytes, 'number');
});
