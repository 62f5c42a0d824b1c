// Reachability of what Quiver hands out, in each engine (tests/js/lib/reachability.js).
// gc() in Chromium (run.mjs passes --expose-gc); Firefox and WebKit give a page no way to
// force a collection, so there the tests allocate until one happens.
import { test, assert } from './harness.js';
import * as quiver from 'quiver-arrow';
import * as arrow from 'apache-arrow';
import { reachabilityTests } from '../js/lib/reachability.js';

reachabilityTests({ test, assert, quiver, arrow, gc: globalThis.gc });
