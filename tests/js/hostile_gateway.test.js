// The Flight client against a gateway that breaks the protocol (Node, with the `ws`
// package as both ends): each call must fail with a clear error, never hang, trap or
// end as if the data were whole, and the module must keep working afterwards.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { WebSocket, WebSocketServer } from 'ws';
import * as quiver from 'quiver-arrow';

const SUBPROTOCOL = 'quiver-flight.v1';
const HELLO = {
  type: 'hello', version: 1, maxSegmentBytes: 1 << 20, creditWindow: 8 << 20, maxStreams: 64, maxMessageBytes: 256 << 20,
};
const EOS_LENGTH = 8;

/** A frame: stream id, kind 0 (data), flags first+last, no app_metadata, then `ipc`. */
function dataFrame(stream, ipc) {
  const frame = Buffer.alloc(12 + ipc.length);
  frame.writeUInt32LE(stream, 0);
  frame[5] = 0b11;
  Buffer.from(ipc.buffer, ipc.byteOffset, ipc.length).copy(frame, 12);
  return frame;
}

const ok = (stream) => JSON.stringify({ type: 'status', stream, code: 0, name: 'OK', message: '', details: '' });

/** A valid IPC stream of one 3-row batch, and its first message (the schema) alone. */
function stream() {
  const batch = quiver.batchFromColumns({ x: Float64Array.of(1, 2, 3) });
  const bytes = quiver.tableToIPC(batch);
  batch.free();
  const schemaEnd = 8 + new DataView(bytes.buffer, bytes.byteOffset).getInt32(4, true);
  return { bytes, schema: bytes.subarray(0, schemaEnd) };
}

// What the fake gateway does after its hello, by the URL path the test connects to.
const scenarios = {
  // Accepts the socket and never says hello.
  silent: () => {},
  // A protocol this client does not speak.
  version2: (ws) => ws.send(JSON.stringify({ ...HELLO, version: 2 })),
  // Limits that would make a DoPut send empty frames forever.
  zeroSegment: (ws) => ws.send(JSON.stringify({ ...HELLO, maxSegmentBytes: 0 })),
  // Limits may not change once requests run on them.
  secondHello: (ws) => {
    ws.send(JSON.stringify(HELLO));
    ws.once('message', () => ws.send(JSON.stringify(HELLO)));
  },
  // The schema, then more bytes than the 4096 of credit the DoGet opened with.
  pastCredit: (ws) => {
    ws.send(JSON.stringify(HELLO));
    ws.once('message', (text) => {
      const { stream: id, credit } = JSON.parse(text);
      assert.equal(credit, 4096);
      const { schema } = stream();
      ws.send(dataFrame(id, schema));
      ws.send(dataFrame(id, new Uint8Array(4096 - schema.length + 1)));
    });
  },
  // Every message but the end-of-stream marker, then OK.
  noEndOfStream: (ws) => {
    ws.send(JSON.stringify(HELLO));
    ws.once('message', (text) => {
      const { stream: id } = JSON.parse(text);
      const { bytes } = stream();
      ws.send(dataFrame(id, bytes.subarray(0, bytes.length - EOS_LENGTH)));
      ws.send(ok(id));
    });
  },
  // A whole stream: the control case.
  whole: (ws) => {
    ws.send(JSON.stringify(HELLO));
    ws.once('message', (text) => {
      const { stream: id } = JSON.parse(text);
      ws.send(dataFrame(id, stream().bytes));
      ws.send(ok(id));
    });
  },
};

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

const connect = (scenario, options) => quiver.FlightClient.connect(base + scenario, { WebSocket, ...options });

async function rejects(promise, code, message) {
  await assert.rejects(promise, (error) => {
    assert.equal(error.code, code, `code ${error.code}: ${error.message}`);
    assert.match(error.message, message);
    return true;
  });
}

test('a gateway that never says hello: connect gives up when its signal aborts', async () => {
  const started = performance.now();
  await rejects(connect('silent', { signal: AbortSignal.timeout(200) }), 1, /connect was aborted before the gateway's hello/);
  assert.ok(performance.now() - started < 5000);
  await rejects(connect('silent', { signal: AbortSignal.abort() }), 1, /connect was aborted/);
  await assert.rejects(connect('silent', { signal: 'soon' }), { message: /signal must be an AbortSignal/ });
});

test('a hello of another protocol version is refused', async () => {
  await rejects(connect('version2'), 13, /this client speaks protocol version 1, the gateway 2/);
});

test('hello with maxSegmentBytes 0 is refused: a DoPut would send empty frames forever', async () => {
  await rejects(connect('zeroSegment'), 13, /hello: maxSegmentBytes must be at least 1, found 0/);
});

test('a second hello breaks the protocol: the open call fails', async () => {
  const client = await connect('secondHello');
  await rejects(client.listFlights(), 13, /the gateway broke the protocol: control message is not valid: a second hello/);
  client.close();
});

test('bytes beyond the granted credit break the protocol instead of filling memory', async () => {
  const client = await connect('pastCredit');
  await rejects(client.doGet('t', { creditWindow: 4096 }).readAll(), 13,
    /exceeds the remaining credit of \d+ bytes/);
  client.close();
});

test('OK before the end-of-stream marker is data loss, not a whole stream', async () => {
  const client = await connect('noEndOfStream');
  await rejects(client.doGet('t').readAll(), 15, /before its end-of-stream marker: the data is incomplete/);
  client.close();
});

test('a gateway that keeps the protocol still reads, and the module still works', async () => {
  const client = await connect('whole');
  const table = await client.doGet('t').readAll();
  assert.deepEqual(table.getChild('x').toArray(), [1, 2, 3]);
  table.free();
  client.close();
  const again = quiver.tableFromIPC(stream().bytes);
  assert.equal(again.numRows, 3);
  again.free();
});
