// The Flight client against a gateway whose compressed batches would fill wasm memory,
// shared by Node (tests/js/hostile_memory.test.js) and every browser engine
// (tests/browser/hostile_memory.test.js); the gateway's side is hostile_memory_gateway.mjs.
// A page or file of its own: its module instance ends with over 1 GiB of memory, which
// other tests' shared budget must not meet.
import { EOS_LENGTH, rejects, within } from './flight-checks.js';

export const DICTIONARY_BYTES = 600 << 20;

const bombs = new WeakMap();
/** The schema message and one ZSTD record batch message of 64 MiB of int64 zeros. */
export function bomb(quiver) {
  if (!bombs.has(quiver)) {
    const batch = quiver.batchFromColumns({ z: new BigInt64Array(8 << 20) });
    const bytes = quiver.tableToIPC(batch, { compression: 'zstd' });
    batch.free();
    const view = new DataView(bytes.buffer, bytes.byteOffset);
    const schemaEnd = 8 + view.getInt32(4, true);
    bombs.set(quiver, { schema: bytes.slice(0, schemaEnd), batch: bytes.slice(schemaEnd, bytes.length - EOS_LENGTH) });
  }
  return bombs.get(quiver);
}

/** Registers the tests; `connect(scenario)` connects a FlightClient to the fake gateway. */
export function hostileMemoryTests({ test, assert, quiver, connect }) {
  test('compressed batches past the shared memory budget fail the stream, in one frame or unread', async () => {
    const { schema, batch } = bomb(quiver);
    assert.ok(batch.length < 64 << 10, `${batch.length} bytes on the wire`);
    const client = await connect('bombs');
    try {
      // 17 x 64 MiB in one frame: decompressing them would pass the 1 GiB budget.
      await rejects(within(client.doGet('oneFrame').readAll(), 60_000), 8,
        /decompressed message bodies of one push of 67108864 bytes exceeds the memory the reader may still use/);
      // A frame each, unread: the batches waiting in the queue leave no room for the next.
      const get = client.doGet('frames');
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
}
