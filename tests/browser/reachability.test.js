// Reachability of what Quiver hands out, in Chromium over resizable wasm memory, where
// writer chunks are views (tests/js/lib/reachability.js). run.mjs exposes gc().
import { test, assert } from './harness.js';
import * as quiver from 'quiver-arrow';
import * as arrow from 'apache-arrow';
import { reachabilityTests } from '../js/lib/reachability.js';

reachabilityTests({ test, assert, quiver, arrow, gc: globalThis.gc });
