// A fake gateway for the Flight client's tests against gateways that break the protocol
// (tests/js/hostile_*.test.js, tests/browser/hostile_memory.test.js), with the `ws`
// package as the server and, in Node, as the client, and their helpers.
import { after, before } from 'node:test';
import { WebSocket, WebSocketServer } from 'ws';
import { EOS_LENGTH, rejects, within } from './flight-checks.js';

export { EOS_LENGTH, rejects, within };

const SUBPROTOCOL = 'quiver-flight.v1';
export const HELLO = {
  type: 'hello', version: 1, maxSegmentBytes: 1 << 20, creditWindow: 8 << 20, maxStreams: 64, maxMessageBytes: 256 << 20,
};

/** A frame: stream id, kind 0 (data), flags first+last, no app_metadata, then `ipc`. */
export function dataFrame(stream, ipc) {
  const frame = Buffer.alloc(12 + ipc.length);
  frame.writeUInt32LE(stream, 0);
  frame[5] = 0b11;
  Buffer.from(ipc.buffer, ipc.byteOffset, ipc.length).copy(frame, 12);
  return frame;
}

export const ok = (stream) => JSON.stringify({ type: 'status', stream, code: 0, name: 'OK', message: '', details: '' });

/**
 * Serves `scenarios` (what the gateway does once connected, by the URL path) on a free
 * port. Returns `{ base, close }`; `base` + a scenario's name is its URL.
 */
export async function startFakeGateway(scenarios) {
  const server = new WebSocketServer({
    host: '127.0.0.1',
    port: 0,
    handleProtocols: (protocols) => (protocols.has(SUBPROTOCOL) ? SUBPROTOCOL : false),
  });
  server.on('connection', (ws, request) => scenarios[request.url.slice(1)](ws));
  await new Promise((resolve) => server.on('listening', resolve));
  return {
    base: `ws://127.0.0.1:${server.address().port}/`,
    close: () => {
      for (const client of server.clients) client.terminate();
      server.close();
    },
  };
}

/**
 * Serves `scenarios` for the test file, and returns `connect(scenario, options)` for a
 * FlightClient of `quiver`.
 */
export function fakeGateway(quiver, scenarios) {
  let gateway;
  before(async () => {
    gateway = await startFakeGateway(scenarios);
  });
  after(() => gateway.close());
  return (scenario, options) => quiver.FlightClient.connect(gateway.base + scenario, { WebSocket, ...options });
}
