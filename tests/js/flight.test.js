// The Flight client in Node 20, which has no global WebSocket: the `ws` package's class is
// passed to FlightClient.connect. Real processes on 127.0.0.1: pyarrow Flight servers and
// quiver-gateway, started here and stopped after (see lib/flight-env.mjs).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { WebSocket } from 'ws';
import * as quiver from 'quiver-arrow';
import { startFlightEnv } from './lib/flight-env.mjs';
import { flightCases } from './lib/flight-cases.js';

// A browser on another site: the strict gateway must refuse its Origin.
class ForeignWebSocket extends WebSocket {
  constructor(url, protocols) {
    super(url, protocols, { origin: 'http://evil.example' });
  }
}

const env = {};
before(async () => Object.assign(env, await startFlightEnv()), { timeout: 300_000 });
after(() => env.stop?.());

test('Node 20 has no global WebSocket: connect() says so unless given one', async () => {
  if (globalThis.WebSocket) return;
  await assert.rejects(quiver.FlightClient.connect(env.gateway), (error) => {
    assert.equal(error.code, 14);
    assert.match(error.message, /cannot open a WebSocket/);
    return true;
  });
});

flightCases({ test, assert, quiver, env, WebSocket, ForeignWebSocket });
