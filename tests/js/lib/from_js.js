// fromArrowJS and batchFromColumns through the built package, shared by Node
// (tests/js/from_js.test.js) and Chromium (tests/browser/from_js.test.js): every type of
// the pyarrow streams in tests/data/types round-trips Arrow JS -> Quiver -> IPC -> Arrow
// JS, each buffer byte is copied once, and bad input gives errors naming the column.

/** The types Arrow JS reads and fromArrowJS takes (tests/data/types/<name>.none.arrows). */
export const SUPPORTED = [
  'null', 'bool', 'int8', 'int16', 'int32', 'int64', 'uint8', 'uint16', 'uint32', 'uint64',
  'float32', 'float64', 'decimal128', 'decimal256', 'date32', 'date64', 'time32_ms',
  'time64_us', 'timestamp_ns', 'timestamp_tz', 'duration', 'interval', 'binary',
  'large_binary', 'utf8', 'large_utf8', 'fixed_size_binary', 'list', 'large_list',
  'fixed_size_list', 'struct', 'map', 'dictionary',
];

const json = (value) => JSON.stringify(value, (_, v) => (typeof v === 'bigint' ? `${v}n` : v));

/** Schema (names, types, nullability) and every row, as comparable strings. */
function shape(table) {
  return {
    fields: table.schema.fields.map((f) => `${f.name}: ${f.type} ${f.nullable}`),
    rows: json(table.toArray()),
    numRows: table.numRows,
  };
}

function error(fn) {
  try {
    fn();
  } catch (e) {
    return e.message;
  }
  throw new Error('expected an error');
}

export function fromJsTests({ test, assert, quiver, arrow, read }) {
  const roundTrip = (source) => {
    const imported = quiver.fromArrowJS(source);
    try {
      return arrow.tableFromIPC(quiver.tableToIPC(imported));
    } finally {
      imported.free();
    }
  };

  test('exports fromArrowJS, batchFromColumns and importStats', () => {
    for (const name of ['fromArrowJS', 'batchFromColumns', 'importStats']) {
      assert.equal(typeof quiver[name], 'function', name);
    }
  });

  test('every supported type round-trips from Arrow JS through the writer', async () => {
    for (const name of SUPPORTED) {
      const table = arrow.tableFromIPC(await read(`${name}.none.arrows`));
      assert.deepEqual(shape(roundTrip(table)), shape(table), name);
      for (const batch of table.batches) {
        assert.deepEqual(shape(roundTrip(batch)), shape(new arrow.Table([batch])), `${name} batch`);
      }
    }
  });

  test('tables built by tableFromArrays round-trip, sliced ones too', () => {
    const table = arrow.tableFromArrays({
      i: Int32Array.from({ length: 100 }, (_, i) => i),
      n: Array.from({ length: 100 }, (_, i) => (i % 7 === 0 ? null : i * 1.5)),
      s: Array.from({ length: 100 }, (_, i) => (i % 5 === 0 ? null : `é${i}`)),
      b: Array.from({ length: 100 }, (_, i) => (i % 3 === 0 ? null : i % 2 === 0)),
      d: Array.from({ length: 100 }, (_, i) => ['x', 'y', null][i % 3]),
      l: Array.from({ length: 100 }, (_, i) => (i % 4 === 0 ? null : [i, i + 1])),
    });
    assert.deepEqual(shape(roundTrip(table)), shape(table));
    const sliced = table.slice(13, 77);
    assert.deepEqual(shape(roundTrip(sliced)), shape(sliced));
    // No rows from past row 0: the strings' one offset is past the first value byte.
    const empty = table.slice(13, 13);
    assert.deepEqual(shape(roundTrip(empty)), shape(empty));
    const binary = new arrow.Table({ x: arrow.vectorFromArray([Uint8Array.of(1, 2), Uint8Array.of(3)], new arrow.Binary()) });
    assert.equal(roundTrip(binary.slice(1, 1)).numRows, 0);
    const result = quiver.fromArrowJS(table);
    assert.equal(result.constructor.name, 'Table');
    result.free();
    const batch = quiver.fromArrowJS(table.batches[0]);
    assert.equal(batch.constructor.name, 'RecordBatch');
    assert.equal(batch.numRows, 100);
    batch.free();
  });

  test('a dictionary keeps whether it is ordered', () => {
    for (const isOrdered of [true, false]) {
      const type = new arrow.Dictionary(new arrow.Utf8(), new arrow.Int32(), 0, isOrdered);
      const table = new arrow.Table({ d: arrow.vectorFromArray(['b', 'a', 'b'], type) });
      assert.equal(roundTrip(table).schema.fields[0].type.isOrdered, isOrdered);
    }
  });

  test('a sliced list copies its child up to the slice\'s last row, not after it', () => {
    const lists = arrow.vectorFromArray(
      Array.from({ length: 1000 }, (_, i) => Array.from({ length: 10 }, (_, j) => i * 10 + j)),
      new arrow.List(new arrow.Field('item', new arrow.Int32())),
    );
    const table = new arrow.Table({ l: lists }).slice(0, 2);
    const before = quiver.importStats().bytesCopied;
    const imported = quiver.fromArrowJS(table);
    // Offsets 12 bytes, the child's 20 values 80.
    assert.equal(quiver.importStats().bytesCopied - before, 12 + 80);
    const back = arrow.tableFromIPC(quiver.tableToIPC(imported));
    imported.free();
    assert.deepEqual(back.getChild('l').toArray().map((l) => [...l]), [[...Array(10).keys()], [...Array(10).keys()].map((j) => 10 + j)]);
  });

  test('each buffer byte is copied once: bytes copied equal the payload', () => {
    const table = arrow.tableFromArrays({
      i: Int32Array.from([1, 2, 3]), // 12 bytes
      x: BigInt64Array.from([1n, 2n, 3n]), // 24
      s: ['ab', null, 'c'], // dictionary-encoded by tableFromArrays
    });
    const before = quiver.importStats();
    quiver.fromArrowJS(table).free();
    const after = quiver.importStats();
    // s: validity 1 + indices 12, then its dictionary ['ab', 'c']: offsets 12 + values 3.
    assert.equal(after.bytesCopied - before.bytesCopied, 12 + 24 + 1 + 12 + 12 + 3);
    assert.equal(after.batches - before.batches, 1);
  });

  test('unsupported types and inputs are errors naming the field and the type', () => {
    const union = arrow.makeData({
      type: new arrow.SparseUnion([0], [new arrow.Field('a', new arrow.Int32())]),
      length: 1,
      typeIds: Int8Array.from([0]),
      children: [arrow.makeData({ type: new arrow.Int32(), length: 1, data: Int32Array.from([1]) })],
    });
    const table = new arrow.Table({ u: arrow.makeVector(union) });
    assert.equal(
      error(() => quiver.fromArrowJS(table)),
      'unsupported: field "u": type Union<Int32> is not supported',
    );
    // A Time whose width is not its unit's: refused rather than read at the wrong width.
    const time = arrow.makeData({
      type: new arrow.Time(arrow.TimeUnit.MILLISECOND, 64),
      length: 2,
      data: BigInt64Array.from([1000n, 2000n]),
    });
    const timeTable = new arrow.Table({ t: arrow.makeVector(time) });
    assert.match(error(() => quiver.fromArrowJS(timeTable)), /^unsupported: field "t": type Time.* is not supported$/);
    assert.equal(
      error(() => quiver.fromArrowJS([1, 2])),
      'fromArrowJS expects an apache-arrow RecordBatch or Table, found an array',
    );
  });

  test('batchFromColumns builds typed, string, boolean and null columns', () => {
    const batch = quiver.batchFromColumns({
      id: BigInt64Array.from([1n, 2n, 3n]),
      i: Int32Array.from([7, 8, 9]),
      x: Float64Array.from([0.5, 1.5, 2.5]),
      name: ['a', null, 'c😀'],
      flag: [true, false, null],
      n: [1.25, null, 3],
      big: [null, 5n, -6n],
      none: [null, null, null],
    });
    const table = arrow.tableFromIPC(quiver.tableToIPC(batch));
    batch.free();
    assert.deepEqual(table.schema.fields.map((f) => `${f.name}: ${f.type}`), [
      'id: Int64', 'i: Int32', 'x: Float64', 'name: Utf8', 'flag: Bool', 'n: Float64',
      'big: Int64', 'none: Null',
    ]);
    assert.equal(json(table.toArray()), json([
      { id: 1n, i: 7, x: 0.5, name: 'a', flag: true, n: 1.25, big: null, none: null },
      { id: 2n, i: 8, x: 1.5, name: null, flag: false, n: null, big: 5n, none: null },
      { id: 3n, i: 9, x: 2.5, name: 'c😀', flag: null, n: 3, big: -6n, none: null },
    ]));
  });

  test('strings read back as TextDecoder reads their bytes: short or long, ASCII or not', () => {
    // Up to 32 bytes, ASCII is read in JS; the rest, and anything longer, by TextDecoder.
    const x = (n) => 'x'.repeat(n);
    const strings = ['', 'a', 'nul\0byte', '\x7f', x(31), x(32), x(33), x(100), 'é', `${x(30)}é`, `${x(31)}é`,
      `é${x(31)}`, '日本語', '😀', `${x(40)}😀`, null];
    const want = strings.map((s) => (s === null ? null : new TextDecoder().decode(new TextEncoder().encode(s))));
    const utf8 = quiver.batchFromColumns({ s: strings });
    assert.deepEqual(utf8.column('s').toArray(), want, 'utf8');
    assert.deepEqual(strings.map((_, i) => utf8.column('s').get(i)), want, 'utf8 get');
    utf8.free();
    const large = quiver.fromArrowJS(arrow.tableFromArrays({ s: arrow.vectorFromArray(strings, new arrow.LargeUtf8()) }));
    assert.equal(large.getChild('s').type.id, 'LargeUtf8');
    assert.deepEqual(large.getChild('s').toArray(), want, 'large utf8');
    large.free();
  });

  test('batchFromColumns copies each byte once, strings encoded in place', () => {
    const names = Array.from({ length: 1000 }, (_, i) => (i % 10 === 0 ? null : `名前${i}\ud800`));
    const before = quiver.importStats().bytesCopied;
    const batch = quiver.batchFromColumns({ i: Int32Array.from(names, (_, i) => i), names });
    const copied = quiver.importStats().bytesCopied - before;
    const encoder = new TextEncoder();
    const utf8 = names.reduce((n, s) => n + (s === null ? 0 : encoder.encode(s).length), 0);
    assert.equal(copied, 4000 + 125 + 4004 + utf8);
    const back = arrow.tableFromIPC(quiver.tableToIPC(batch));
    batch.free();
    assert.deepEqual(back.getChild('names').toArray(), names.map((s) => (s === null ? null : s.replace('\ud800', '\ufffd'))));
  });

  test('batchFromColumns errors name the column', () => {
    assert.equal(
      error(() => quiver.batchFromColumns({ a: Int32Array.from([1, 2]), b: ['x'] })),
      'batchFromColumns: column "b" has 1 rows, expected 2 like column "a"',
    );
    assert.equal(
      error(() => quiver.batchFromColumns({ a: ['x', 1] })),
      'batchFromColumns: column "a": entry 1 is a number, expected a string like the column\'s first value, or null',
    );
    assert.equal(
      error(() => quiver.batchFromColumns({ a: [{}] })),
      'batchFromColumns: column "a": entry 0 is Object; supported entries are strings, booleans, numbers, bigints and null',
    );
    assert.equal(
      error(() => quiver.batchFromColumns({ a: 'abc' })),
      'batchFromColumns: column "a": expected a typed array or an array of strings, booleans, numbers or bigints, found string',
    );
    for (const view of [new Uint8ClampedArray(2), new DataView(new ArrayBuffer(2))]) {
      assert.equal(
        error(() => quiver.batchFromColumns({ a: view })),
        `batchFromColumns: column "a": a ${view.constructor.name} has no Arrow type here; pass an Int8Array to BigInt64Array, a Uint8Array to BigUint64Array, a Float32Array or a Float64Array`,
      );
    }
    assert.equal(
      error(() => quiver.batchFromColumns(null)),
      'batchFromColumns expects an object of columns ({ name: column }), found null',
    );
    // A Map may have keys of any kind; a column's name is a string.
    assert.equal(
      error(() => quiver.batchFromColumns(new Map([[1, Int32Array.of(1)]]))),
      'batchFromColumns expects column names that are strings, found number 1',
    );
    assert.equal(
      error(() => quiver.batchFromColumns(new Map([[Symbol('a'), Int32Array.of(1)]]))),
      'batchFromColumns expects column names that are strings, found symbol Symbol(a)',
    );
  });
}
