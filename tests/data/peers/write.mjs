// Writes the streams of the JS peers' defects that Quiver repairs (src/ipc/reader/repair.rs)
// into this folder, and checks that apache-arrow JS and flechette read them as the values
// below, which tests/peer_defects.rs expects from Quiver.
//
//     node tests/data/peers/write.mjs
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import * as arrow from 'apache-arrow';
import * as fl from '@uwdata/flechette';

const here = new URL('./', import.meta.url);

// apache-arrow JS: a sparse union built with makeBuilder sets each child only at the rows
// that select it, so the string child ends at row 2 and the number child at row 4 of the
// union's 5 rows. (A union nested in a list does not survive Arrow JS's own round trip:
// it reads the strings back empty.)
const union = () =>
  new arrow.SparseUnion([0, 1], [
    new arrow.Field('i', new arrow.Int32(), true),
    new arrow.Field('s', new arrow.Utf8(), true),
  ]);
const valueToChildTypeId = (_builder, value) => (typeof value === 'number' ? 0 : 1);
const build = (options, values) => {
  const builder = arrow.makeBuilder(options);
  for (const value of values) builder.append(value);
  return builder.finish().toVector();
};
const unionRows = ['a', 1, 'bb', 2, 3];
const unionTable = new arrow.Table({
  u: build({ type: union(), valueToChildTypeId }, unionRows),
});
const unionBytes = arrow.tableToIPC(unionTable, 'stream');
const unionRead = arrow.tableFromIPC(unionBytes);
assert.deepEqual([...unionRead.getChild('u')], unionRows);
const unionData = unionRead.getChild('u').data[0];
assert.deepEqual(unionData.children.map((c) => c.length), [5, 3]);
writeFileSync(new URL('arrowjs_sparse_union.arrows', here), unionBytes);

// flechette: the child of a null fixed-size list keeps its values' slots null in its
// bitmap but leaves them out of its null count (1 declared, 4 in the bitmap).
const listValues = [[1, 2, 3], null, [4, null, 6]];
const nestedValues = [[[1, 2], [3, 4]], null, [[5, null], null]];
const listTable = fl.tableFromColumns({
  f: fl.columnFromArray(listValues, fl.fixedSizeList(fl.float32(), 3)),
  g: fl.columnFromArray(nestedValues, fl.fixedSizeList(fl.fixedSizeList(fl.int32(), 2), 2)),
});
const listBytes = fl.tableToIPC(listTable, { format: 'stream' });
const plain = (value) =>
  value == null ? null : typeof value === 'number' ? value : [...value].map(plain);
for (const read of [arrow.tableFromIPC(listBytes), fl.tableFromIPC(listBytes)]) {
  assert.deepEqual([...read.getChild('f')].map(plain), listValues);
  assert.deepEqual([...read.getChild('g')].map(plain), nestedValues);
}
writeFileSync(new URL('flechette_fixed_size_list.arrows', here), listBytes);
