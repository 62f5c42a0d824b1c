// The gateway side of the memory-budget tests (tests/js/lib/hostile_memory.js): what the
// fake gateway (tests/js/lib/hostile.js) sends, in Node, to a client in Node or a browser.
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { dataFrame, EOS_LENGTH, HELLO } from './hostile.js';
import { bomb, DICTIONARY_BYTES } from './hostile_memory.js';

let dictionaryStream;
/**
 * A stream whose one dictionary holds 600 MiB of int64 zeros, ZSTD-compressed by pyarrow
 * (about 20 KB; Quiver's ruzstd would take seconds to compress it), then a one-row batch,
 * without the end-of-stream marker.
 */
function dictionary() {
  const python = fileURLToPath(new URL('../../../.venv/bin/python', import.meta.url));
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

/** The scenarios, by name; `quiver` (the Node build) compresses the bomb. */
export function hostileMemoryScenarios(quiver) {
  return {
    // The schema, then 17 ZSTD batches of 64 MiB of zeros, a few KB each on the wire: in
    // one frame to the DoGet of ticket "oneFrame", in a frame each otherwise.
    bombs: (ws) => {
      ws.send(JSON.stringify(HELLO));
      const { schema, batch } = bomb(quiver);
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
}
