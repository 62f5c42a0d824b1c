// Lifetime of columns and toArrowJS results in Chromium, where wasm memory is a resizable
// buffer: views and zero-copy Arrow JS tables survive growth (tests/js/lib/memory.js).
import { test, assert } from './harness.js';
import * as quiver from 'quiver-arrow';
import * as arrow from 'apache-arrow';
import { memoryTests } from '../js/lib/memory.js';
import { dataFiles } from './data.js';

const { expected, read } = await dataFiles();
const names = Object.keys(expected)
  .filter((n) => expected[n] !== null && (n.endsWith('.none.arrows') || n.startsWith('gold/')));
memoryTests({ test, assert, quiver, arrow, expected, read, names });
