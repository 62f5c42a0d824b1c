// fromArrowJS and batchFromColumns in each engine, over the web build's memory
// (resizable in Chromium and Firefox, fixed-size in WebKit; tests/js/lib/from_js.js).
import { test, assert } from './harness.js';
import * as quiver from 'quiver-arrow';
import * as arrow from 'apache-arrow';
import { fromJsTests } from '../js/lib/from_js.js';

const read = async (name) => {
  const response = await fetch(new URL(`../data/types/${name}`, import.meta.url));
  if (!response.ok) throw new Error(`tests/data/types/${name}: ${response.status}`);
  return new Uint8Array(await response.arrayBuffer());
};

fromJsTests({ test, assert, quiver, arrow, read });
