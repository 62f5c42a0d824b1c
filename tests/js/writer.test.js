// The writer in Node 20, whose wasm memory cannot be made resizable, so chunk(i) copies
// (tests/js/lib/writer.js).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as arrow from 'apache-arrow';
import * as quiver from 'quiver-arrow';
import { writerTests } from './lib/writer.js';

writerTests({ test, assert, quiver, arrow });
