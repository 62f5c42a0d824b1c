// Value options of get/toArray (useDate, useBigInt, useDecimal, useMap) through the built
// package, shared by Node (tests/js/value_options.test.js) and Chromium
// (tests/browser/value_options.test.js): each option on each type it converts, in lists,
// structs and maps, on a column, a chunked column, a batch and a table; the defaults as
// before; the unsafe-integer RangeError; and the TypeError of a bad option.

const MAX = 2n ** 53n - 1n;

/** A table of two equal batches of 3 rows, one column per case, written by Arrow JS. */
function makeTable(arrow, quiver) {
  const { makeData, makeVector, Field } = arrow;
  const f = (name, type, nullable = true) => new Field(name, type, nullable);
  const data = (type, values, nullBitmap) => makeData({ type, length: 3, data: values, nullBitmap });
  const oddNull = Uint8Array.of(0b101);
  const int64 = data(new arrow.Int64(), BigInt64Array.of(1n, 0n, -MAX), oddNull);
  const day = data(new arrow.DateDay(), Int32Array.of(0, 1, -1));
  const ts = data(new arrow.TimestampMicrosecond(), BigInt64Array.of(0n, 1500n, -1000n), oddNull);
  const keys = arrow.vectorFromArray(['a', 'b', 'c'], new arrow.Utf8()).data[0];
  const entries = makeData({
    type: new arrow.Struct([f('key', new arrow.Utf8(), false), f('value', new arrow.Int64())]),
    length: 3,
    children: [keys, data(new arrow.Int64(), BigInt64Array.of(1n, 2n, 3n))],
  });
  const items = makeData({ type: new arrow.TimestampMillisecond(), length: 3, data: BigInt64Array.of(0n, 1000n, 86400000n) });
  const ints = data(new arrow.Int64(), BigInt64Array.of(1n, 2n, 3n));
  const word = ~0 >>> 0;
  const columns = {
    i64: int64,
    u64: data(new arrow.Uint64(), BigUint64Array.of(0n, MAX, 5n)),
    t64: data(new arrow.TimeMicrosecond(), BigInt64Array.of(1n, 2n, 3n)),
    t32: data(new arrow.TimeMillisecond(), Int32Array.of(1, 2, 3)),
    dur: data(new arrow.Duration(arrow.TimeUnit.MILLISECOND), BigInt64Array.of(5n, -6n, 7n)),
    i32: data(new arrow.Int32(), Int32Array.of(1, 2, 3)),
    day,
    ts,
    dec: data(new arrow.Decimal(2, 9, 128), Uint32Array.of(12345, 0, 0, 0, 0xfffffffb, word, word, word, 100, 0, 0, 0)),
    dec0: data(new arrow.Decimal(0, 9, 128), Uint32Array.of(7, 0, 0, 0, 0xfffffff9, word, word, word, 0, 0, 0, 0)),
    map: makeData({
      type: new arrow.Map_(f('entries', entries.type, false)),
      length: 3,
      valueOffsets: Int32Array.of(0, 2, 3, 3),
      nullBitmap: Uint8Array.of(0b011),
      child: entries,
    }),
    list: makeData({
      type: new arrow.List(f('item', items.type)),
      length: 3,
      valueOffsets: Int32Array.of(0, 2, 2, 3),
      child: items,
    }),
    ints: makeData({
      type: new arrow.List(f('item', ints.type, false)),
      length: 3,
      valueOffsets: Int32Array.of(0, 2, 2, 3),
      child: ints,
    }),
    pairs: makeData({
      type: new arrow.FixedSizeList(2, f('item', ints.type, false)),
      length: 3,
      child: makeData({ type: ints.type, length: 6, data: BigInt64Array.of(1n, 2n, 3n, 4n, 5n, 6n) }),
    }),
    dict: makeData({
      type: new arrow.Dictionary(items.type, new arrow.Int32()),
      length: 3,
      data: Int32Array.of(2, 0, 2),
      dictionary: makeVector(items),
    }),
    union: makeData({
      type: new arrow.DenseUnion([0, 1], [f('when', items.type), f('n', ints.type)]),
      length: 3,
      typeIds: Int8Array.of(0, 1, 0),
      valueOffsets: Int32Array.of(2, 0, 0),
      children: [items, ints],
    }),
    struct: makeData({
      type: new arrow.Struct([f('when', day.type), f('n', int64.type)]),
      length: 3,
      children: [day, int64],
    }),
  };
  const once = new arrow.Table(Object.fromEntries(Object.entries(columns).map(([k, v]) => [k, makeVector(v)])));
  return quiver.tableFromIPC(arrow.tableToIPC(once.concat(once), 'stream'));
}

/** Row values of each column, without options (DEFAULTS) and with each option. */
const DAY = 86400000;
const DEFAULTS = {
  i64: [1n, null, -MAX],
  u64: [0n, MAX, 5n],
  t64: [1n, 2n, 3n],
  t32: [1, 2, 3],
  dur: [5n, -6n, 7n],
  i32: [1, 2, 3],
  day: [0, DAY, -DAY],
  ts: [0, null, -1],
  dec: [12345n, -5n, 100n],
  dec0: [7n, -7n, 0n],
  map: [[['a', 1n], ['b', 2n]], [['c', 3n]], null],
  list: [[0, 1000], [], [DAY]],
  ints: [[1n, 2n], [], [3n]],
  pairs: [[1n, 2n], [3n, 4n], [5n, 6n]],
  dict: [DAY, 0, DAY],
  union: [DAY, 1n, 0],
  struct: [{ when: 0, n: 1n }, { when: DAY, n: null }, { when: -DAY, n: -MAX }],
};
const date = (ms) => (ms === null ? null : new Date(ms));
const CONVERTED = {
  useDate: {
    day: DEFAULTS.day.map(date),
    ts: DEFAULTS.ts.map(date),
    list: DEFAULTS.list.map((l) => l.map(date)),
    dict: DEFAULTS.dict.map(date),
    union: [date(DAY), 1n, date(0)],
    struct: DEFAULTS.struct.map(({ when, n }) => ({ when: date(when), n })),
  },
  useBigInt: {
    i64: [1, null, -Number(MAX)],
    u64: [0, Number(MAX), 5],
    t64: [1, 2, 3],
    dur: [5, -6, 7],
    map: [[['a', 1], ['b', 2]], [['c', 3]], null],
    ints: [[1, 2], [], [3]],
    pairs: [[1, 2], [3, 4], [5, 6]],
    union: [DAY, 1, 0],
    struct: [{ when: 0, n: 1 }, { when: DAY, n: null }, { when: -DAY, n: -Number(MAX) }],
  },
  useDecimalNumber: { dec: [123.45, -0.05, 1], dec0: [7, -7, 0] },
  useDecimalString: { dec: ['123.45', '-0.05', '1.00'], dec0: ['7', '-7', '0'] },
  useMap: { map: [new Map([['a', 1n], ['b', 2n]]), new Map([['c', 3n]]), null] },
};
const OPTIONS = {
  useDate: { useDate: true },
  useBigInt: { useBigInt: false },
  useDecimalNumber: { useDecimal: 'number' },
  useDecimalString: { useDecimal: 'string' },
  useMap: { useMap: true },
};

function thrown(fn) {
  try {
    fn();
  } catch (e) {
    return `${e.name}: ${e.message}`;
  }
  return 'no error';
}

export function valueOptionTests({ test, assert, quiver, arrow }) {
  const table = makeTable(arrow, quiver);
  const names = Object.keys(DEFAULTS);
  const twice = (values) => [...values, ...values];
  // toArray's values as a JS array: a column without nulls may come as a typed array.
  const plain = (values) => (ArrayBuffer.isView(values) ? Array.from(values) : values);

  test('without options, and with the defaults spelled out, values are as before', () => {
    const defaults = { useDate: false, useBigInt: true, useDecimal: 'bigint', useMap: false };
    for (const name of names) {
      const column = table.getChild(name);
      for (const options of [undefined, {}, defaults]) {
        assert.deepEqual(plain(column.toArray(options)), twice(DEFAULTS[name]), name);
        assert.deepEqual(plain(column.chunks[1].toArray(options)), DEFAULTS[name], name);
        assert.deepEqual([0, 1, 2, 3, 4, 5].map((i) => column.get(i, options)), twice(DEFAULTS[name]), name);
      }
    }
  });

  for (const [option, converted] of Object.entries(CONVERTED)) {
    const options = OPTIONS[option];
    test(`${JSON.stringify(options)} converts ${Object.keys(converted).join(', ')} and leaves the rest`, () => {
      for (const name of names) {
        const want = converted[name] ?? DEFAULTS[name];
        const column = table.getChild(name);
        assert.deepEqual(plain(column.toArray(options)), twice(want), `${name} chunked toArray`);
        assert.deepEqual([0, 1, 2, 3, 4, 5].map((i) => column.get(i, options)), twice(want), `${name} chunked get`);
        assert.deepEqual(plain(column.chunks[1].toArray(options)), want, `${name} toArray`);
        assert.deepEqual([0, 1, 2].map((i) => column.chunks[0].get(i, options)), want, `${name} get`);
        // The option's reader is kept apart from the default one.
        assert.deepEqual(column.chunks[0].toArray({ typed: false }), DEFAULTS[name], `${name} default after`);
      }
      const rows = [0, 1, 2].map((i) => Object.fromEntries(names.map((n) => [n, (converted[n] ?? DEFAULTS[n])[i]])));
      assert.deepEqual(table.toArray(options), twice(rows), 'table.toArray');
      const batch = table.batches[0];
      try {
        assert.deepEqual(batch.toArray(options), rows, 'batch.toArray');
      } finally {
        batch.free();
      }
    });
  }

  test('options combine, nested values too', () => {
    const options = { useDate: true, useBigInt: false, useMap: true, useDecimal: 'string' };
    assert.deepEqual(table.getChild('struct').get(2, options), { when: new Date(-DAY), n: -Number(MAX) });
    assert.deepEqual(table.getChild('map').get(0, options), new Map([['a', 1], ['b', 2]]));
    assert.deepEqual(table.getChild('dec').get(4, options), '-0.05');
  });

  test('typed toArray gives a typed array only where the options leave the values as stored', () => {
    const column = table.getChild('u64');
    assert.ok(column.toArray() instanceof BigUint64Array);
    assert.deepEqual(column.toArray({ typed: false }), twice(DEFAULTS.u64));
    assert.deepEqual(column.toArray({ useBigInt: false }), twice(CONVERTED.useBigInt.u64));
    assert.deepEqual(column.chunks[0].toArray({ typed: true, useBigInt: false }), CONVERTED.useBigInt.u64);
    assert.ok(table.getChild('t32').chunks[0].toArray({ useBigInt: false }) instanceof Int32Array);
  });

  test('useBigInt: false throws a RangeError naming the column and row beyond 2^53 - 1', () => {
    const unsafe = quiver.batchFromColumns({ big: BigInt64Array.of(MAX, MAX + 1n, -MAX - 1n), ubig: BigUint64Array.of(0n, 0n, 2n ** 64n - 1n) });
    try {
      const big = unsafe.column('big');
      assert.equal(big.get(0, { useBigInt: false }), Number(MAX));
      const message = (row, value) => `RangeError: column "big" row ${row} holds ${value}, beyond `
        + 'Number.MAX_SAFE_INTEGER (2^53 - 1): read it with useBigInt: true';
      assert.equal(thrown(() => big.get(1, { useBigInt: false })), message(1, MAX + 1n));
      assert.equal(thrown(() => big.get(2, { useBigInt: false })), message(2, -MAX - 1n));
      assert.equal(thrown(() => big.toArray({ useBigInt: false })), message(1, MAX + 1n));
      assert.equal(thrown(() => unsafe.toArray({ useBigInt: false })), message(1, MAX + 1n));
      assert.equal(thrown(() => unsafe.column('ubig').get(2, { useBigInt: false })),
        `RangeError: column "ubig" row 2 holds ${2n ** 64n - 1n}, beyond Number.MAX_SAFE_INTEGER (2^53 - 1): read it with useBigInt: true`);
      assert.deepEqual(big.toArray({ typed: false }), [MAX, MAX + 1n, -MAX - 1n]);
    } finally {
      unsafe.free();
    }
  });

  test('one options object, changed between calls, is read as it is at each call', () => {
    const column = table.getChild('i64');
    const options = { useBigInt: true };
    assert.equal(column.get(0, options), 1n);
    options.useBigInt = false;
    assert.equal(column.get(0, options), 1);
    options.useBigInt = 'no';
    assert.equal(thrown(() => column.get(0, options)), 'TypeError: option useBigInt must be a boolean, found "no"');
    delete options.useBigInt;
    assert.equal(column.get(0, options), 1n);
  });

  test('a bad option is a TypeError naming it and what it takes', () => {
    const column = table.getChild('ts');
    const cases = [
      [{ useDates: true }, 'TypeError: unknown option "useDates": expected useDate, useBigInt, useDecimal, useMap'],
      [{ useDate: 1 }, 'TypeError: option useDate must be a boolean, found number'],
      [{ useBigInt: 'no' }, 'TypeError: option useBigInt must be a boolean, found "no"'],
      [{ useMap: null }, 'TypeError: option useMap must be a boolean, found null'],
      [{ useDecimal: 'float' }, 'TypeError: option useDecimal must be "bigint", "number" or "string", found "float"'],
      [{ useDecimal: true }, 'TypeError: option useDecimal must be "bigint", "number" or "string", found boolean'],
      [true, 'TypeError: options must be an object, found boolean'],
    ];
    const batch = table.batches[0];
    try {
      for (const [options, message] of cases) {
        assert.equal(thrown(() => column.get(0, options)), message);
        assert.equal(thrown(() => column.chunks[0].get(0, options)), message);
        assert.equal(thrown(() => table.toArray(options)), message);
        assert.equal(thrown(() => batch.toArray(options)), message);
        const typed = message.replace('useDecimal, useMap', 'useDecimal, useMap, typed');
        assert.equal(thrown(() => column.toArray(options)), typed);
        assert.equal(thrown(() => column.chunks[0].toArray(options)), typed);
      }
      assert.equal(thrown(() => table.toArray({ typed: true })),
        'TypeError: unknown option "typed": expected useDate, useBigInt, useDecimal, useMap');
      // An object that toArray took with `typed` is still refused by get.
      const toArrayOptions = { typed: false };
      column.toArray(toArrayOptions);
      assert.equal(thrown(() => column.get(0, toArrayOptions)),
        'TypeError: unknown option "typed": expected useDate, useBigInt, useDecimal, useMap');
      // The batch still reads after a refused call.
      assert.equal(batch.toArray().length, 3);
    } finally {
      batch.free();
    }
  });
}
