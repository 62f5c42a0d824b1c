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

// Node only: the demo gateway refuses the browser tests' page origin. Its DoPut stores the
// FlightData as it came and its DoGet `put=NAME` replays it, so what arrives is what the
// client sent, through the gateway both ways.
test('batch metadata goes up with DoPut and comes back with DoGet', async () => {
  const client = await quiver.FlightClient.connect(env.strictGateway, { WebSocket });
  const batch = quiver.batchFromColumns({ x: Int32Array.of(1, 2, 3) });
  try {
    batch.metadata = { page: '1', note: 'ünïcode ✓' };
    const name = `metadata-${Date.now()}`;
    await client.doPut({ path: [name] }, [batch]);
    const table = await client.doGet(`put=${name}`).readAll();
    const [back] = table.batches;
    assert.deepEqual(back.metadata, { page: '1', note: 'ünïcode ✓' });
    assert.deepEqual(table.getChild('x').toArray({ typed: false }), [1, 2, 3]);
    back.free();
    table.free();
  } finally {
    batch.free();
    client.close();
  }
});

// The demo replays a metadata-only FlightData as a metadata frame.
test('app_metadata sent alone with DoPut comes back from DoGet as a chunk without data', async () => {
  const client = await quiver.FlightClient.connect(env.strictGateway, { WebSocket });
  const batch = quiver.batchFromColumns({ x: Int32Array.of(1, 2, 3) });
  try {
    const name = `chunks-${Date.now()}`;
    const put = client.startPut({ path: [name] });
    await put.write(batch, new TextEncoder().encode('with x'));
    await put.writeMetadata(new TextEncoder().encode('alone'));
    await put.finish();
    put.free();
    const stream = client.doGet(`put=${name}`);
    const seen = [];
    for (let c = await stream.readChunk(); c !== undefined; c = await stream.readChunk()) {
      seen.push([c.data?.numRows ?? null, c.appMetadata && new TextDecoder().decode(c.appMetadata)]);
      c.data?.free();
    }
    assert.deepEqual(seen, [[3, 'with x'], [null, 'alone']]);
  } finally {
    batch.free();
    client.close();
  }
});
