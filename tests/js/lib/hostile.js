// A fake gateway for the Flight client's tests against gateways that break the protocol
// (tests/js/hostile_*.test.js), with the `ws` package as both ends, and their helpers.
import { after, before } from 'node:test';
import assert from 'node:assert/strict';
import { WebSocket, WebSocketServer } from 'ws';

const SUBPROTOCOL = 'quiver-flight.v1';
export const HELLO = {
  type: 'hello', version: 1, maxSegmentBytes: 1 << 20, creditWindow: 8 << 20, maxStreams: 64, maxMessageBytes: 256 << 20,
};
export const EOS_LENGTH = 8;

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
 * Serves `scenarios` (what the gateway does once connected, by the URL path) for the
 * test file, and returns `connect(scenario, options)` for a FlightClient of `quiver`.
 */
export function fakeGateway(quiver, scenarios) {
  let server;
  let base;
  before(async () => {
    server = new WebSocketServer({
      host: '127.0.0.1',
      port: 0,
      handleProtocols: (protocols) => (protocols.has(SUBPROTOCOL) ? SUBPROTOCOL : false),
    });
    server.on('connection', (ws, request) => scenarios[request.url.slice(1)](ws));
    await new Promise((resolve) => server.on('listening', resolve));
    base = `ws://127.0.0.1:${server.address().port}/`;
  });
  after(() => server.close());
  return (scenario, options) => quiver.FlightClient.connect(base + scenario, { WebSocket, ...options });
}

/** Asserts that `promise` rejects with a FlightError of `code` whose message matches. */
export async function rejects(promise, code, message) {
  await assert.rejects(promise, (error) => {
    assert.equal(error.code, code, `code ${error.code}: ${error.message}`);
    assert.match(error.message, message);
    return true;
  });
}

/** `promise`, or a rejection after `ms`: a hang fails the test instead of the run. */
export function within(promise, ms = 5000) {
  let timer;
  const late = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`still pending after ${ms} ms`)), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}
