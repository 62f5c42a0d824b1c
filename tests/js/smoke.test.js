// Smoke tests of the built package (pkg/, linked as node_modules/quiver-arrow by
// pkg-scripts/build.sh), imported by name as a user would.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { tableFromArrays, tableToIPC } from 'apache-arrow';
import * as quiver from 'quiver-arrow';

// A two-batch stream written by apache-arrow, with a non-ASCII column name so that the
// glue's string decoding is exercised.
function twoBatchStream() {
  const batch = () => tableFromArrays({ id: Int32Array.from([1, 2, 3]), naïve: ['a', 'b', 'ç'] });
  return tableToIPC(batch().concat(batch()), 'stream');
}

test('resolves quiver-arrow to the Node build', () => {
  assert.match(import.meta.resolve('quiver-arrow'), /\/node\/index\.js$/);
});

test('exports the reader API', () => {
  for (const name of ['StreamReader', 'RecordBatch', 'Table', 'tableFromIPC', 'memoryStats']) {
    assert.equal(typeof quiver[name], 'function', name);
  }
});

test('StreamReader decodes a stream pushed one byte at a time, as an iterable', () => {
  const bytes = twoBatchStream();
  const reader = new quiver.StreamReader();
  const rows = [];
  for (let i = 0; i < bytes.length; i++) {
    reader.push(bytes.subarray(i, i + 1));
    for (const batch of reader) {
      rows.push(batch.numRows);
      assert.equal(batch.numColumns, 2);
      batch.free();
    }
  }
  reader.finish();
  assert.deepEqual(rows, [3, 3]);
  assert.deepEqual(reader.schema.fields.map((f) => f.name), ['id', 'naïve']);
  assert.equal(reader.stats.bytesPushed, bytes.length);
  reader.free();
});

test('tableFromIPC throws an Error that says what it found', () => {
  assert.throws(() => quiver.tableFromIPC(new Uint8Array([1, 2, 3])), (error) => {
    assert.ok(error instanceof Error);
    assert.ok(error.message.length > 0, 'empty message');
    return true;
  });
  // The module is still usable after the error.
  const table = quiver.tableFromIPC(twoBatchStream());
  assert.equal(table.numRows, 6);
  table.free();
});
