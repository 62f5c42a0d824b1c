// The memory-budget tests (tests/js/lib/hostile_memory.js) in Node, against the fake
// gateway in this process.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as quiver from 'quiver-arrow';
import { fakeGateway } from './lib/hostile.js';
import { hostileMemoryTests } from './lib/hostile_memory.js';
import { hostileMemoryScenarios } from './lib/hostile_memory_gateway.mjs';

const connect = fakeGateway(quiver, hostileMemoryScenarios(quiver));
hostileMemoryTests({ test, assert, quiver, connect });
