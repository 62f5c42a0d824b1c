// Lifetime of columns and toArrowJS results in each engine (tests/js/lib/memory.js).
// Chromium and Firefox have memory.toResizableBuffer(): views and zero-copy Arrow JS
// tables survive growth. WebKit has not: views are re-derived after growth, and
// toArrowJS copies. The first test checks which path the engine took.
import { test, assert } from './harness.js';
import * as quiver from 'quiver-arrow';
import * as arrow from 'apache-arrow';
import { memoryTests } from '../js/lib/memory.js';
import { dataFiles } from './data.js';

/** The path each engine should take; the web build picks one by feature detection. */
const EXPECTED_PATH = { chromium: 'resizable', firefox: 'resizable', webkit: 'fixed-size' };

test('wasm memory takes the path feature detection picks, the one this engine supports', () => {
  const engine = new URLSearchParams(location.search).get('engine');
  const batch = quiver.batchFromColumns({ x: new Float64Array(4) });
  const path = batch.column('x').values.buffer.resizable === true ? 'resizable' : 'fixed-size';
  batch.free();
  const detected = typeof WebAssembly.Memory.prototype.toResizableBuffer === 'function' ? 'resizable' : 'fixed-size';
  assert.equal(path, detected, `toResizableBuffer ${detected === 'resizable' ? 'exists' : 'is missing'}, yet memory is ${path}`);
  assert.equal(path, EXPECTED_PATH[engine], `expected ${EXPECTED_PATH[engine]} memory in ${engine}, found ${path}`);
  return `memory: ${path}`;
});

const { expected, read } = await dataFiles();
const names = Object.keys(expected)
  .filter((n) => expected[n] !== null && (n.endsWith('.none.arrows') || n.startsWith('gold/')));
memoryTests({ test, assert, quiver, arrow, expected, read, names });
