// The Flight client against a gateway that breaks the protocol (Node, with the `ws`
// package as both ends): each call must fail with a clear error, never hang, trap or
// end as if the data were whole, and the module must keep working afterwards.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as arrow from 'apache-arrow';
import * as quiver from 'quiver-arrow';
import { dataFrame, EOS_LENGTH, fakeGateway, HELLO, ok, rejects, within } from './lib/hostile.js';

/** A valid IPC stream of one 3-row batch, and its first message (the schema) alone. */
function stream() {
  const batch = quiver.batchFromColumns({ x: Float64Array.of(1, 2, 3) });
  const bytes = quiver.tableToIPC(batch);
  batch.free();
  const schemaEnd = 8 + new DataView(bytes.buffer, bytes.byteOffset).getInt32(4, true);
  return { bytes, schema: bytes.subarray(0, schemaEnd) };
}

const DECLARED_BODY = 200 << 20;

/** A whole-message frame of `kind` (0 data, 1 metadata) with `meta` as app_metadata. */
function frameWith(stream, kind, meta, ipc) {
  const frame = Buffer.alloc(12 + Buffer.byteLength(meta) + ipc.length);
  frame.writeUInt32LE(stream, 0);
  frame[4] = kind;
  frame[5] = 0b11;
  frame.writeUInt32LE(frame.write(meta, 12), 8);
  Buffer.from(ipc.buffer, ipc.byteOffset, ipc.length).copy(frame, frame.length - ipc.length);
  return frame;
}

/**
 * The schema, then the header of a record batch message whose metadata declares a
 * DECLARED_BODY-byte body: the decoder allocates that much as the header arrives.
 */
function hugeBodyHeader() {
  const { bytes, schema } = stream();
  const batchStart = schema.length;
  const metadataLength = new DataView(bytes.buffer, bytes.byteOffset).getInt32(batchStart + 4, true);
  const header = bytes.slice(batchStart, batchStart + 8 + metadataLength);
  const bodyLength = bytes.length - EOS_LENGTH - header.length - batchStart;
  // bodyLength is an int64 in the flatbuffer (so is the one buffer's length, the same).
  const view = new DataView(header.buffer);
  let patched = 0;
  for (let at = 8; at + 8 <= header.length; at += 4) {
    if (view.getBigInt64(at, true) === BigInt(bodyLength)) {
      view.setBigInt64(at, BigInt(DECLARED_BODY), true);
      patched++;
    }
  }
  assert.ok(patched > 0, 'found the declared body length in the metadata');
  return { schema, header };
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
  // A dictionary-encoded stream whose every message carries app_metadata, and a
  // metadata frame: one message per frame, as the gateway sends them.
  dictionaryMetadata: (ws) => {
    ws.send(JSON.stringify(HELLO));
    ws.on('message', (text) => {
      const { type, stream: id } = JSON.parse(text);
      if (type !== 'doGet') return;
      const table = quiver.fromArrowJS(arrow.tableFromArrays({ s: ['a', 'b', 'a'] }));
      const [batch] = table.batches;
      const writer = quiver.StreamWriter.forBatch(batch);
      const chunks = writer.write(batch);
      assert.equal(chunks.count, 3, 'schema, dictionary, record batch');
      ['of the schema', 'of the dictionary', 'of the batch'].forEach((meta, i) => {
        ws.send(frameWith(id, 0, meta, chunks.chunk(i)));
      });
      ws.send(frameWith(id, 1, 'alone', new Uint8Array()));
      ws.send(frameWith(id, 0, '', writer.finish().chunk(0)));
      ws.send(ok(id));
      for (const x of [table, batch, writer, chunks]) x.free();
    });
  },
  // The schema, then more bytes than the 4096 of credit the DoGet opened with (more than
  // the window itself, so even a grant of the schema's bytes back cannot cover them).
  pastCredit: (ws) => {
    ws.send(JSON.stringify(HELLO));
    ws.once('message', (text) => {
      const { stream: id, credit } = JSON.parse(text);
      assert.equal(credit, 4096);
      const { schema } = stream();
      ws.send(dataFrame(id, schema));
      ws.send(dataFrame(id, new Uint8Array(4096 + 1)));
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
  // To every DoGet, a schema and a message that declares a huge body it never sends.
  hugeBodies: (ws) => {
    ws.send(JSON.stringify(HELLO));
    const { schema, header } = hugeBodyHeader();
    ws.on('message', (text) => {
      const { type, stream: id } = JSON.parse(text);
      if (type !== 'doGet') return;
      ws.send(dataFrame(id, schema));
      ws.send(dataFrame(id, header));
    });
  },
  // To a DoPut, 64 bytes of credit, then OK at once: the rest was never sent.
  earlyPutOk: (ws) => {
    ws.send(JSON.stringify(HELLO));
    ws.once('message', (text) => {
      const { stream: id } = JSON.parse(text);
      ws.send(JSON.stringify({ type: 'credit', stream: id, bytes: 64 }));
      ws.once('message', () => ws.send(ok(id)));
    });
  },
  // The schema, then nothing, whatever the client says (a cancel included).
  ignoresCancel: (ws) => {
    ws.send(JSON.stringify(HELLO));
    ws.once('message', (text) => ws.send(dataFrame(JSON.parse(text).stream, stream().schema)));
  },
  // All but the end-of-stream marker, which needs more credit than is left: sent once
  // the client grants some (after it consumed the batch), then OK.
  creditStall: (ws) => {
    ws.send(JSON.stringify(HELLO));
    const { bytes } = stream();
    ws.on('message', (text) => {
      const message = JSON.parse(text);
      if (message.type === 'doGet') {
        assert.equal(message.credit, bytes.length - EOS_LENGTH + 4);
        ws.send(dataFrame(message.stream, bytes.subarray(0, bytes.length - EOS_LENGTH)));
      } else if (message.type === 'credit') {
        ws.send(dataFrame(message.stream, bytes.subarray(bytes.length - EOS_LENGTH)));
        ws.send(ok(message.stream));
      }
    });
  },
  // Ticket "a" is a stream of float64 x, any other a stream of utf8 x.
  mixedSchemas: (ws) => {
    ws.send(JSON.stringify(HELLO));
    ws.on('message', (text) => {
      const { type, stream: id, ticket } = JSON.parse(text);
      if (type !== 'doGet') return;
      const x = Buffer.from(ticket, 'base64').toString() === 'a' ? Float64Array.of(1, 2) : ['p', 'q'];
      const batch = quiver.batchFromColumns({ x });
      ws.send(dataFrame(id, quiver.tableToIPC(batch)));
      batch.free();
      ws.send(ok(id));
    });
  },
  // A prepared statement whose dataset schema is no IPC schema; closes are recorded.
  badPreparedSchema: (ws) => {
    ws.send(JSON.stringify(HELLO));
    ws.on('message', (text) => {
      const { type, stream: id, action, body } = JSON.parse(text);
      if (type !== 'doAction') return;
      const closed = action === 'sql.closePreparedStatement';
      if (closed) closes.push(JSON.parse(Buffer.from(body, 'base64').toString()).handle);
      const answer = closed ? {} : { handle: 'AQI=', datasetSchema: Buffer.from('not a schema!!!!').toString('base64'), parameterSchema: '' };
      ws.send(JSON.stringify({ type: 'result', stream: id, body: Buffer.from(JSON.stringify(answer)).toString('base64') }));
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

const connect = fakeGateway(quiver, scenarios);
// The handles of the prepared statements a badPreparedSchema gateway was asked to close.
const closes = [];

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

test('a prepared statement whose schema Quiver refuses is closed, not left open', async () => {
  const client = await connect('badPreparedSchema');
  await assert.rejects(client.sql.prepare('SELECT 1'), { message: /continuation|metadata|IPC/ });
  try {
    for (const started = performance.now(); closes.length === 0 && performance.now() - started < 5000;) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    assert.deepEqual(closes, ['AQI=']);
  } finally {
    client.close();
  }
});

test('a DoPut that the server ends with OK before everything was sent is data loss', async () => {
  const client = await connect('earlyPutOk');
  const batch = quiver.batchFromColumns({ x: new Float64Array(1000) });
  const put = client.startPut({ path: ['early'] });
  const writes = [put.write(batch), put.write(batch)];
  await rejects(within(put.finish()), 15, /ended with OK before all of it was sent/);
  for (const write of writes) await rejects(within(write), 15, /before all of it was sent/);
  put.free();
  batch.free();
  client.close();
});

test('cancel() ends a stream at once, even if the gateway never answers it', async () => {
  const client = await connect('ignoresCancel');
  const get = client.doGet('t');
  const next = get.next();
  get.cancel();
  await rejects(within(next), 1, /cancelled by the client/);
  await rejects(within(get.next()), 1, /cancelled by the client/);
  client.close();
});

test('credit is granted once every batch is consumed, even below a step: no deadlock', async () => {
  const client = await connect('creditStall');
  const { bytes } = stream();
  // A window just short of the whole stream: the marker waits for a grant smaller than
  // the window, which was the grant step.
  const table = await within(client.doGet('t', { creditWindow: bytes.length - EOS_LENGTH + 4 }).readAll());
  assert.deepEqual(table.getChild('x').toArray({ typed: false }), [1, 2, 3]);
  table.free();
  client.close();
});

test('fetchAll refuses endpoints whose columns differ instead of mixing their types', async () => {
  const client = await connect('mixedSchemas');
  await rejects(within(client.fetchAll({ endpoints: [{ ticket: 'a' }, { ticket: 'b' }] }, { ordered: true })), 3,
    /endpoint 1 has the columns \(x: Utf8\), another endpoint \(x: Float64 not null\): they cannot form one table/);
  client.close();
});

test('OK before the end-of-stream marker is data loss, not a whole stream', async () => {
  const client = await connect('noEndOfStream');
  await rejects(client.doGet('t').readAll(), 15, /before its end-of-stream marker: the data is incomplete/);
  client.close();
});

test('the crafted header declares its huge body', () => {
  const { schema, header } = hugeBodyHeader();
  const reader = new quiver.StreamReader();
  reader.push(schema);
  reader.push(header);
  assert.throws(() => reader.finish(), new RegExp(`message body.*${DECLARED_BODY}`));
  reader.free();
});

test('bodies declared and never sent are held to a budget shared by all DoGets, and freed', async () => {
  const live = () => quiver.memoryStats().liveBytes;
  const before = live();
  for (let round = 0; round < 2; round++) {
    const client = await connect('hugeBodies');
    // Five bodies of 200 MiB fit the 1 GiB budget; they wait for bytes that never come.
    const waiting = Array.from({ length: 5 }, () => client.doGet('t').next().catch((e) => e));
    // The sixth would bring it to 1200 MiB: its stream fails, and frees its body.
    await rejects(client.doGet('t').next(), 8,
      /this DoGet holds 2097\d{5} bytes \(messages still arriving, dictionaries, batches not yet read\), which brings this module's open DoGets to 12582\d{5} bytes, over their limit of 1073741824/);
    // Less a mebibyte: earlier tests' ended streams, still counted in `before`, may be
    // collected meanwhile (a few kilobytes each). One body is 200 MiB.
    const held = live() - before;
    assert.ok(held >= 5 * DECLARED_BODY - (1 << 20), `the five waiting streams hold their bodies: ${held} bytes`);
    // Closing ends the five (the second round shows their share of the budget came back).
    client.close();
    for (const error of await Promise.all(waiting)) assert.match(error.message, /CANCELLED: the client closed the connection/);
    assert.ok(live() - before < DECLARED_BODY, `freed: ${live() - before} bytes still live`);
  }
});

test('a gateway that keeps the protocol still reads, and the module still works', async () => {
  const client = await connect('whole');
  const table = await client.doGet('t').readAll();
  assert.deepEqual(table.getChild('x').toArray({ typed: false }), [1, 2, 3]);
  table.free();
  client.close();
  const again = quiver.tableFromIPC(stream().bytes);
  assert.equal(again.numRows, 3);
  again.free();
});

test('app_metadata of the schema and of a dictionary comes from readChunk alone, in order', async () => {
  const client = await connect('dictionaryMetadata');
  const stream = client.doGet('t');
  const seen = [];
  for (let c = await stream.readChunk(); c !== undefined; c = await stream.readChunk()) {
    seen.push([c.data?.numRows ?? null, c.appMetadata && new TextDecoder().decode(c.appMetadata)]);
    c.data?.free();
  }
  assert.deepEqual(seen, [[null, 'of the schema'], [null, 'of the dictionary'], [3, 'of the batch'], [null, 'alone']]);
  // next() and for await skip app_metadata, and the chunks that have nothing else.
  const rows = [];
  for await (const batch of client.doGet('t')) {
    rows.push(batch.numRows);
    batch.free();
  }
  assert.deepEqual(rows, [3]);
  client.close();
});
