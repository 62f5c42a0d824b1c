// fromArrowJS and batchFromColumns in Node 20 (tests/js/lib/from_js.js), on the pyarrow
// streams that tests/data/expected.py writes to tests/data/types (test.sh runs it first).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import * as arrow from 'apache-arrow';
import * as quiver from 'quiver-arrow';
import { fromJsTests } from './lib/from_js.js';

const read = async (name) => new Uint8Array(await readFile(new URL(`../data/types/${name}`, import.meta.url)));

fromJsTests({ test, assert, quiver, arrow, read });
