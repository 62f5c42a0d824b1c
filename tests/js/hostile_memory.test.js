// The Flight client against a gateway whose compressed batches would fill wasm memory
// (tests/js/lib/hostile.js). A file of its own: its module instance ends with over 1 GiB
// of memory, which the other hostile tests' shared budget must not meet.
import { test } from 'node:test';
import assert from 'node:assert/strict';
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
};

const connect = fakeGateway(quiver, scenarios);

test('compressed batches past the shared memory budget fail the stream, in one frame or unread', async () => {
  const client = await connect('bombs');
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
  client.close();
});

