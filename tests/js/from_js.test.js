// fromArrowJS and batchFromColumns in Node 20 (tests/js/lib/from_js.js), on the pyarrow
// streams that tests/data/expected.py writes to tests/data/types (test.sh runs it first).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import * as arrow from 'apache-arrow';
import * as quiver from 'quiver-arrow';
import { fromJsTests } from './lib/from_js.js';

const read = async (name) => new Uint8Array(await readFile(new URL(`../data/types/${name}`, import.meta.url)));

fromJsTests({ test, assert, quiver, arrow, read });

test('fromArrowJS takes types nested 64 deep and refuses 65, naming the field', () => {
  // One row: a list of lists ... of an int32, `depth` types in all.
  const type = (depth) => (depth === 1 ? new arrow.Int32() : new arrow.List(new arrow.Field('item', type(depth - 1), true)));
  const value = (depth) => (depth === 1 ? 7 : [value(depth - 1)]);
  const table = (depth) => new arrow.Table({ deep: arrow.vectorFromArray([value(depth)], type(depth)) });
  const ok = quiver.fromArrowJS(table(64));
  assert.equal(ok.numRows, 1);
  assert.equal(ok.schema.fields[0].name, 'deep');
  ok.free();
  assert.throws(() => quiver.fromArrowJS(table(65)),
    { message: 'fromArrowJS: field "deep": types nest deeper than 64 levels' });
  // The module still works.
  const again = quiver.fromArrowJS(table(2));
  assert.equal(again.numRows, 1);
  again.free();
});
