// The Flight client in headless Chromium, with the browser's own WebSocket, against the
// processes run.mjs started (pyarrow Flight servers behind quiver-gateway; see
// tests/js/lib/flight-env.mjs). The cases are shared with the Node run.
import { test, assert } from './harness.js';
import * as quiver from 'quiver-arrow';
import { flightCases } from '../js/lib/flight-cases.js';

const env = { ...window.__flightEnv, saw: (line, ms) => window.__flightSaw(line, ms) };
flightCases({ test, assert, quiver, env });
