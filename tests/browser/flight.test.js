// The Flight client in each engine, with the browser's own WebSocket, against the
// processes the runner started (pyarrow Flight servers behind quiver-gateway; see
// tests/js/lib/flight-env.mjs). The cases are shared with the Node run. run.mjs puts the
// servers' addresses in the page; under run_engine.mjs the page asks its report endpoint.
import { test, assert } from './harness.js';
import * as quiver from 'quiver-arrow';
import { flightCases } from '../js/lib/flight-cases.js';

const report = new URLSearchParams(location.search).get('report');
const env = report
  ? {
    ...await (await fetch(`${report}flightEnv`)).json(),
    saw: async (line, ms) => (await fetch(`${report}saw?${new URLSearchParams({ line, ms })}`)).json(),
  }
  : { ...window.__flightEnv, saw: (line, ms) => window.__flightSaw(line, ms) };
flightCases({ test, assert, quiver, env });
