// apache-arrow JS's sparse unions built with makeBuilder, whose children end at the last
// row that selects them, read in Quiver as Arrow JS reads them: a union column, a union in
// a struct, and a dictionary of union values (src/ipc/reader/repair.rs pads the children).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as arrow from 'apache-arrow';
import * as quiver from 'quiver-arrow';

const union = () =>
  new arrow.SparseUnion([0, 1], [
    new arrow.Field('i', new arrow.Int32(), true),
    new arrow.Field('s', new arrow.Utf8(), true),
  ]);
const valueToChildTypeId = (_builder, value) => (typeof value === 'number' ? 0 : 1);
const values = ['a', 1, 'bb', null, 2, 3, 'c', 4];

function vector(options, rows, setUp = () => {}) {
  const builder = arrow.makeBuilder(options);
  setUp(builder);
  for (const value of rows) builder.append(value);
  return builder.finish().toVector();
}

/** The lengths of the union's children in what Arrow JS wrote, read back. */
function childLengths(data) {
  return data.children.map((child) => child.length);
}

/** Each row as Arrow JS reads it, in Quiver's representation (structs as objects). */
function plain(value) {
  return value instanceof arrow.StructRow ? value.toJSON() : value;
}

function check(table, column, unionOf) {
  const bytes = arrow.tableToIPC(table, 'stream');
  const theirs = arrow.tableFromIPC(bytes).getChild(column);
  // The defect: Arrow JS's own reader holds children shorter than the union.
  const union = unionOf(theirs.data[0]);
  assert.ok(Math.min(...childLengths(union)) < union.length, `${childLengths(union)} of ${union.length}`);
  const ours = quiver.tableFromIPC(bytes);
  try {
    assert.deepEqual(ours.getChild(column).toArray({ typed: false }), [...theirs].map(plain));
  } finally {
    ours.free();
  }
}

test('a sparse union column reads as Arrow JS reads it', () => {
  const u = vector({ type: union(), valueToChildTypeId }, values);
  check(new arrow.Table({ u }), 'u', (data) => data);
});

test('a sparse union in a struct reads as Arrow JS reads it', () => {
  const type = new arrow.Struct([new arrow.Field('u', union(), true)]);
  const rows = values.map((u) => ({ u }));
  const t = vector({ type, children: { u: { valueToChildTypeId } } }, rows);
  check(new arrow.Table({ t }), 't', (data) => data.children[0]);
});

test('a dictionary of sparse union values reads as Arrow JS reads it', () => {
  const type = new arrow.Dictionary(union(), new arrow.Int32());
  // The dictionary builder makes its values' builder without the options.
  const d = vector({ type }, values, (builder) => {
    builder.dictionary._valueToChildTypeId = valueToChildTypeId;
  });
  check(new arrow.Table({ d }), 'd', (data) => data.dictionary.data[0]);
});
