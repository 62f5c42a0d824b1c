// A Node ESM script as a user would write it, run from a folder where only the packed
// quiver-arrow tarball and apache-arrow are installed: the reader, the writer and
// toArrowJS, each checked against apache-arrow.
import assert from 'node:assert/strict';
import * as arrow from 'apache-arrow';
import init, { StreamReader, StreamWriter, tableFromIPC, tableToIPC, toArrowJS } from 'quiver-arrow';

await init(); // does nothing in Node; the same code runs on the web build

const rows = 10_000;
const source = arrow.tableFromArrays({
  x: Int32Array.from({ length: rows }, (_, i) => i),
  s: Array.from({ length: rows }, (_, i) => `s${i}`),
});
const bytes = arrow.tableToIPC(source, 'stream');

// The reader, fed in uneven segments.
const reader = new StreamReader();
let decoded = 0;
for (let at = 0; at < bytes.length; at += 777) {
  reader.push(bytes.subarray(at, at + 777));
  for (const batch of reader) {
    decoded += batch.numRows;
    batch.free();
  }
}
reader.finish();
assert.equal(decoded, rows);
assert.deepEqual(reader.schema.fields.map((f) => f.name), ['x', 's']);
reader.free();

// The writer: whole-table and batch by batch; apache-arrow reads both back.
const table = tableFromIPC(bytes);
const whole = arrow.tableFromIPC(tableToIPC(table));
assert.deepEqual(whole.getChild('x').toArray(), source.getChild('x').toArray());
const writer = StreamWriter.forTable(table);
const parts = table.batches.map((batch) => {
  const chunks = writer.write(batch);
  const part = chunks.toUint8Array().slice();
  chunks.free();
  batch.free();
  return part;
});
const end = writer.finish();
parts.push(end.toUint8Array().slice());
end.free();
writer.free();
const streamed = arrow.tableFromIPC(parts);
assert.equal(streamed.numRows, rows);
assert.equal(streamed.getChild('s').get(rows - 1), `s${rows - 1}`);

// toArrowJS: apache-arrow objects over the decoded table.
const js = toArrowJS(table, arrow);
assert.ok(js instanceof arrow.Table);
assert.equal(js.numRows, rows);
assert.equal(js.getChild('x').get(1234), 1234);
assert.equal(js.getChild('s').get(4321), 's4321');
table.free();

console.log(`ok - Node ${process.version}: reader, writer and toArrowJS with apache-arrow`);
