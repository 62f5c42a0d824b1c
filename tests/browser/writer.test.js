// The writer in each engine: over resizable wasm memory (Chromium, Firefox) chunk(i) is a
// view with no copy, over fixed-size memory (WebKit) a copy (tests/js/lib/writer.js).
import { test, assert } from './harness.js';
import * as quiver from 'quiver-arrow';
import * as arrow from 'apache-arrow';
import { writerTests } from '../js/lib/writer.js';

writerTests({ test, assert, quiver, arrow });
