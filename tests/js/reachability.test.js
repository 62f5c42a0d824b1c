// Reachability of what Quiver hands out, in Node 20 (tests/js/lib/reachability.js).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import * as arrow from 'apache-arrow';
import * as quiver from 'quiver-arrow';
import { reachabilityTests } from './lib/reachability.js';

setFlagsFromString('--expose-gc');
reachabilityTests({ test, assert, quiver, arrow, gc: runInNewContext('gc') });
