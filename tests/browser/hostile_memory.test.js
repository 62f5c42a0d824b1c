// The memory-budget tests (tests/js/lib/hostile_memory.js) in each engine, with the
// browser's own WebSocket, against the fake gateway the runner started in Node. run.mjs
// puts its address in the page; under run_engine.mjs the page asks its report endpoint.
import { test, assert } from './harness.js';
import * as quiver from 'quiver-arrow';
import { hostileMemoryTests } from '../js/lib/hostile_memory.js';

const report = new URLSearchParams(location.search).get('report');
const base = report ? (await (await fetch(`${report}hostileGateway`)).json()).base : window.__hostileGateway;
const connect = (scenario) => quiver.FlightClient.connect(base + scenario);
hostileMemoryTests({ test, assert, quiver, connect });
