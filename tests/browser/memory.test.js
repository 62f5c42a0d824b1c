// Lifetime of columns and toArrowJS results in each engine (tests/js/lib/memory.js).
// Chromium and Firefox have memory.toResizableBuffer(): views and zero-copy Arrow JS
// tables survive growth. WebKit has not: views are re-derived after growth, and
// toArrowJS copies. The runners load this module a second time with
// `init({ resizableMemory: false })` (?memory=fixed), which takes WebKit's path in every
// engine. The first test checks which path the engine took.
import { test, assert } from './harness.js';
import * as quiver from 'quiver-arrow';
import * as arrow from 'apache-arrow';
import { memoryTests } from '../js/lib/memory.js';
import { dataFiles } from './data.js';

/** The path each engine should take; the web build picks one by feature detection. */
const EXPECTED_PATH = { chromium: 'resizable', firefox: 'resizable', webkit: 'fixed-size' };

test('wasm memory takes the path that init() chose, the one this engine supports', () => {
  const params = new URLSearchParams(location.search);
  const engine = params.get('engine');
  const batch = quiver.batchFromColumns({ x: new Float64Array(4) });
  const path = batch.column('x').values.buffer.resizable === true ? 'resizable' : 'fixed-size';
  batch.free();
  if (params.get('memory') === 'fixed') {
    assert.equal(path, 'fixed-size', `init({ resizableMemory: false }) left memory ${path}`);
    return 'memory: fixed-size, as init() was asked';
  }
  const detected = typeof WebAssembly.Memory.prototype.toResizableBuffer === 'function' ? 'resizable' : 'fixed-size';
  assert.equal(path, detected, `toResizableBuffer ${detected === 'resizable' ? 'exists' : 'is missing'}, yet memory is ${path}`);
  assert.equal(path, EXPECTED_PATH[engine], `expected ${EXPECTED_PATH[engine]} memory in ${engine}, found ${path}`);
  return `memory: ${path}`;
});

test('a later init() may repeat the kind of memory chosen, and throws if it asks for the other', async () => {
  const { default: init, initSync } = await import('quiver-arrow');
  const resizable = new URLSearchParams(location.search).get('memory') !== 'fixed';
  const kindOfMemory = () => {
    const batch = quiver.batchFromColumns({ x: new Float64Array(4) });
    const kind = batch.column('x').values.buffer.resizable;
    batch.free();
    return kind;
  };
  const before = kindOfMemory();
  const instance = await init();
  assert.equal(await init({ resizableMemory: resizable }), instance);
  const chosen = `quiver-arrow: init() already ran with resizableMemory: ${resizable}; ` +
    'memory keeps the kind the first call chose';
  await assert.rejects(init({ resizableMemory: !resizable }), { message: chosen });
  assert.throws(() => initSync({ module: new Uint8Array(0), resizableMemory: !resizable }), { message: chosen });
  await assert.rejects(init({ resizableMemory: 'no' }), {
    name: 'TypeError',
    message: "quiver-arrow: init()'s resizableMemory must be a boolean, not string",
  });
  assert.equal(kindOfMemory(), before, 'the refused calls changed the kind of memory');
});

const { expected, read } = await dataFiles();
const names = Object.keys(expected)
  .filter((n) => expected[n] !== null && (n.endsWith('.none.arrows') || n.startsWith('gold/')));
memoryTests({ test, assert, quiver, arrow, expected, read, names });
