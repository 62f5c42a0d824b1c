// The Flight client against a gateway whose compressed batches would fill wasm memory
// (tests/js/lib/hostile.js). A file of its own: its module instance ends with over 1 GiB
// of memory, which the other hostile tests' shared budget must not meet.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import * as quiver from 'quiver-arrow';
import { dataFrame, EOS_LENGTH, fakeGateway, HELLO, rejects, within } from './lib/hostile.js';

let bombMessages;
/** The schema message and one ZSTD record batch message of 64 MiB of int64 zeros. */
function bomb() {
  if (bombMessages === undefined) {
    const batch = quiver.batchFromColumns({ z: new BigInt64Array(8 << 20) });
    const bytes = quiver.tableToIPC(batch, { compression: 'zstd' });
    batch.free();
    const view = new DataView(bytes.buffer, bytes.byteOffset);
    const schemaEnd = 8 + view.getInt32(4, true);
    bombMessages = { schema: bytes.slice(0, schemaEnd), batch: bytes.slice(schemaEnd, bytes.length - EOS_LENGTH) };
    assert.ok(bombMessages.batch.length < 64 << 10, `${bombMessages.batch.length} bytes on the wire`);
  }
  return bombMessages;
}

const DICTIONARY_BYTES = 600 << 20;
let dictionaryStream;
/**
 * A stream whose one dictionary holds 600 MiB of int64 zeros, ZSTD-compressed by pyarrow
 * (about 20 KB; Quiver's ruzstd would take seconds to compress it), then a one-row batch,
 * without the end-of-stream marker.
 */
function dictionary() {
  const python = fileURLToPath(new URL('../../.venv/bin/python', import.meta.url));
  dictionaryStream ??= execFileSync(python, ['-c', `
import sys
import pyarrow as pa
zeros = pa.py_buffer(bytearray(${DICTIONARY_BYTES}))
values = pa.Array.from_buffers(pa.int64(), ${DICTIONARY_BYTES / 8}, [None, zeros])
column = pa.DictionaryArray.from_arrays(pa.array([0], pa.int32()), values)
batch = pa.record_batch([column], names=["d"])
sink = pa.BufferOutputStream()
with pa.ipc.new_stream(sink, batch.schema, options=pa.ipc.IpcWriteOptions(compression="zstd")) as w:
    w.write_batch(batch)
sys.stdout.buffer.write(sink.getvalue()[:-${EOS_LENGTH}])
`]);
  return dictionaryStream;
}

const scenarios = {
  // The schema, then 17 ZSTD batches of 64 MiB of zeros, a few KB each on the wire: in
  // one frame to the DoGet of ticket "oneFrame", in a frame each otherwise.
  bombs: (ws) => {
    ws.send(JSON.stringify(HELLO));
    const { schema, batch } = bomb();
    ws.on('message', (text) => {
      const { type, stream: id, ticket } = JSON.parse(text);
      if (type !== 'doGet') return;
      ws.send(dataFrame(id, schema));
      const batches = Array(17).fill(batch);
      if (Buffer.from(ticket, 'base64').toString() === 'oneFrame') {
        ws.send(dataFrame(id, Buffer.concat(batches)));
      } else {
        for (const b of batches) ws.send(dataFrame(id, b));
      }
    });
  },
  // Every DoGet: the 600 MiB dictionary and its batch, and the stream stays open.
  dictionaries: (ws) => {
    ws.send(JSON.stringify(HELLO));
    ws.on('message', (text) => {
      const { type, stream: id } = JSON.parse(text);
      if (type === 'doGet') ws.send(dataFrame(id, dictionary()));
    });
  },
};

const connect = fakeGateway(quiver, scenarios);

test('compressed batches past the shared memory budget fail the stream, in one frame or unread', async () => {
  const client = await connect('bombs');
  try {
    // 17 x 64 MiB in one frame: decompressing them would pass the 1 GiB budget.
    await rejects(within(client.doGet('oneFrame').readAll(), 60_000), 8,
      /decompressed message bodies of one push of 67108864 bytes exceeds the memory the reader may still use/);
    // A frame each, unread: the batches waiting in the queue leave no room for the next.
    const get = client.doGet('frames');
    const { schema, batch } = bomb();
    const started = performance.now();
    while (get.stats.ipcBytesReceived < schema.length + 16 * batch.length) {
      assert.ok(performance.now() - started < 60_000, `received ${get.stats.ipcBytesReceived} bytes`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    let read = 0;
    const readAll = async () => {
      for (let b = await get.next(); b !== undefined; b = await get.next()) {
        read++;
        b.free();
      }
    };
    await rejects(within(readAll(), 60_000), 8,
      /of one push of 67108864 bytes exceeds the memory the reader may still use = \d+ bytes/);
    assert.ok(read < 17, `read ${read} batches`);
  } finally {
    client.close();
  }
});


test('the dictionaries an open DoGet keeps count against the budget all DoGets share', async () => {
  const client = await connect('dictionaries');
  try {
    const batch = await within(client.doGet('first').next(), 60_000);
    batch.free();
    // The first stream keeps its 600 MiB dictionary for batches still to come, so a second
    // may decompress at most what is left of the 1 GiB budget: less than its dictionary.
    const second = client.doGet('second').readAll();
    const error = await within(second, 60_000).then(() => assert.fail('the second DoGet ended'), (e) => e);
    assert.equal(error.code, 8, error.message);
    const left = Number(/exceeds the memory the reader may still use = (\d+) bytes/.exec(error.message)?.[1]);
    assert.ok(left <= (1 << 30) - DICTIONARY_BYTES, `the second stream could still use ${left} bytes`);
  } finally {
    client.close();
  }
});
