// Column views, toArray() and toArrowJS() in each engine (over resizable wasm memory in
// Chromium and Firefox, fixed-size in WebKit) against pyarrow and apache-arrow JS (tests/js/lib/columns.js). Reads the streams that
// `.venv/bin/python tests/data/expected.py` writes to tests/data/types.
import { test, assert } from './harness.js';
import * as quiver from 'quiver-arrow';
import * as arrow from 'apache-arrow';
import { columnTests, parseExpected } from '../js/lib/columns.js';
import { dataFiles } from './data.js';

const { expected, read } = await dataFiles();
columnTests({ test, assert, quiver, arrow, expected, read });
