// Column checks shared by the Node tests (tests/js/columns.test.js) and the browser tests
// (tests/browser/columns.test.js): for every stream that tests/data/expected.py describes,
// Quiver's views and toArray() equal what pyarrow read, toArray() equals apache-arrow
// JS's own decode, and toArrowJS() equals it value by value.
//
// `test` and `assert` are node:test/node:assert or the browser harness's, which share
// their shape; `read(name)` resolves to the bytes of a stream.

/** expected.json's tagged values back to JS values. */
export function parseExpected(text) {
  return JSON.parse(text, (_, v) => {
    if (v === null || typeof v !== 'object' || Array.isArray(v)) return v;
    if ('$bigint' in v) return BigInt(v.$bigint);
    if ('$bytes' in v) return Uint8Array.from(v.$bytes.match(/../g) ?? [], (h) => parseInt(h, 16));
    if ('$number' in v) return Number(v.$number);
    return v;
  });
}

// Arrow JS cannot decode these (no codec registered; no run-end encoded or list view type).
const ARROW_JS_CANNOT = [/\.lz4\.arrows$/, /\.zstd\.arrows$/, /run_end_encoded\./, /list_view/];

/**
 * An Arrow JS value in the representation that src/js/readers.js documents, for a field
 * descriptor of BatchLayout.types: decimals to bigint, intervals to numbers or objects,
 * Vectors to arrays, StructRow to objects, MapRow to [key, value] pairs.
 */
export function normalize(arrow, value, field) {
  if (value === null || value === undefined) return null;
  const type = field?.type;
  const child = (i) => field?.children?.[i];
  switch (type?.id) {
    case 'Decimal': {
      // From the words: Arrow JS 21.2's own BN toString() gives "-0" for decimal256.
      const words = [...value].reverse().reduce((acc, w) => (acc << 32n) | BigInt(w), 0n);
      return BigInt.asIntN(type.bitWidth, words);
    }
    case 'Interval': {
      if (type.unit === 'YEAR_MONTH') return 12 * value[0] + value[1];
      if (type.unit === 'DAY_TIME') return { days: value[0], milliseconds: value[1] };
      const wide = new BigInt64Array(Int32Array.from(value).buffer);
      return { months: value[0], days: value[1], nanoseconds: wide[1] };
    }
    case 'Binary': case 'LargeBinary': case 'BinaryView': case 'FixedSizeBinary':
      return Uint8Array.from(value);
    case 'List': case 'LargeList': case 'FixedSizeList':
      return [...value].map((v) => normalize(arrow, v, child(0)));
    case 'Map': {
      const [key, item] = child(0).children;
      return [...value].map(([k, v]) => [normalize(arrow, k, key), normalize(arrow, v, item)]);
    }
    case 'Struct': {
      // From the row's entries in order, so that of duplicate names the last wins, as in
      // Arrow JS's toJSON() and in Quiver.
      const row = {};
      [...value].forEach(([name, v], k) => { row[name] = normalize(arrow, v, field.children[k]); });
      return row;
    }
    case 'Dictionary':
      return normalize(arrow, value, child(0));
    case 'Union': {
      // The child is not known from the value alone: pick by shape.
      return normalize(arrow, value, field.children.find((f) => shapeFits(arrow, value, f)));
    }
    default:
      return value;
  }
}

function shapeFits(arrow, value, field) {
  const id = field.type.id;
  if (value instanceof arrow.Vector) return ['List', 'LargeList', 'FixedSizeList'].includes(id);
  if (value instanceof arrow.StructRow) return id === 'Struct';
  if (value instanceof arrow.MapRow) return id === 'Map';
  if (value instanceof Uint8Array) return id.includes('Binary');
  return false;
}

/** Registers the column tests for every stream in `expected`. */
export function columnTests({ test, assert, quiver, arrow, expected, read }) {
  for (const [name, batches] of Object.entries(expected)) {
    // null: pyarrow cannot read the stream (see expected.py); Arrow JS still can.
    if (batches !== null) test(`views and toArray() equal pyarrow: ${name}`, async () => {
      const table = quiver.tableFromIPC(await read(name));
      try {
        const ours = table.batches;
        assert.equal(ours.length, batches.length, 'batch count');
        batches.forEach((want, b) => {
          const batch = ours[b];
          assert.equal(batch.numRows, want.numRows);
          want.columns.forEach((wantColumn, k) => checkColumn(assert, batch.column(k), wantColumn, `${name} batch ${b}`));
          batch.free();
        });
        for (let k = 0; k < table.numColumns; k++) {
          const all = batches.flatMap((batch) => batch.columns[k].values);
          const valid = batches.flatMap((batch) => batch.columns[k].valid);
          const column = table.getChild(k);
          assert.deepEqual(column.toArray({ typed: false }), all, `${name}: getChild(${k}).toArray()`);
          assert.deepEqual([...column], all, `${name}: getChild(${k}) iteration`);
          // Backwards, so that each row's chunk is not the one the row before was in.
          for (let i = all.length - 1; i >= 0; i--) {
            assert.deepEqual(column.get(i), all[i], `${name}: getChild(${k}).get(${i})`);
            assert.equal(column.isValid(i), valid[i], `${name}: getChild(${k}).isValid(${i})`);
          }
        }
        const rows = table.toArray();
        assert.equal(rows.length, table.numRows);
        const names = batches[0]?.columns.map((c) => c.name) ?? [];
        if (new Set(names).size === names.length) {
          const want = batches.flatMap((batch) => Array.from({ length: batch.numRows }, (_, i) =>
            Object.fromEntries(batch.columns.map((c) => [c.name, c.values[i]]))));
          assert.deepEqual(rows, want, `${name}: table.toArray()`);
        }
      } finally {
        table.free();
      }
    });

    if (ARROW_JS_CANNOT.some((re) => re.test(name))) continue;
    test(`toArray() and toArrowJS() equal apache-arrow JS: ${name}`, async () => {
      const bytes = await read(name);
      const theirs = arrow.tableFromIPC(bytes);
      const table = quiver.tableFromIPC(bytes);
      try {
        const fields = Array.from({ length: table.numColumns }, (_, k) => table.getChild(k).field);
        const copied = quiver.toArrowJS(table, arrow, { zeroCopy: false });
        const viewed = quiver.toArrowJS(table, arrow, { zeroCopy: true });
        fields.forEach((field, k) => {
          const want = [...theirs.getChildAt(k)].map((v) => normalize(arrow, v, field));
          assert.deepEqual(table.getChild(k).toArray({ typed: false }), want, `${name} column ${field.name}: toArray()`);
          for (const [how, converted] of [['copied', copied], ['viewed', viewed]]) {
            assert.equal(String(converted.schema.fields[k].type), String(theirs.schema.fields[k].type));
            assert.equal(converted.schema.fields[k].type.isOrdered, theirs.schema.fields[k].type.isOrdered);
            assert.deepEqual(sorted(converted.schema.fields[k].metadata), sorted(theirs.schema.fields[k].metadata));
            const got = [...converted.getChildAt(k)].map((v) => normalize(arrow, v, field));
            assert.deepEqual(got, want, `${name} column ${field.name}: toArrowJS (${how})`);
            assert.equal(converted.getChildAt(k).nullCount, theirs.getChildAt(k).nullCount);
          }
        });
        assert.equal(copied.numRows, theirs.numRows);
        assert.deepEqual(sorted(viewed.schema.metadata), sorted(theirs.schema.metadata), `${name}: schema metadata`);
      } finally {
        table.free();
      }
    });
  }

  test('toArrowJS keeps whether a dictionary is ordered', () => {
    const type = new arrow.Dictionary(new arrow.Utf8(), new arrow.Int32(), 0, true);
    const bytes = arrow.tableToIPC(new arrow.Table({ d: arrow.vectorFromArray(['b', 'a', 'b'], type) }), 'stream');
    const table = quiver.tableFromIPC(bytes);
    try {
      for (const zeroCopy of [false, true]) {
        const converted = quiver.toArrowJS(table, arrow, { zeroCopy });
        assert.equal(converted.schema.fields[0].type.isOrdered, true);
        assert.deepEqual([...converted.getChild('d')], ['b', 'a', 'b']);
      }
    } finally {
      table.free();
    }
  });

  test('a struct field named __proto__ is a value of the row, not its prototype', () => {
    const int32 = (...values) => arrow.makeData({ type: new arrow.Int32(), data: Int32Array.from(values) });
    const fields = ['__proto__', 'a'].map((name) => new arrow.Field(name, new arrow.Int32()));
    const struct = arrow.makeData({ type: new arrow.Struct(fields), length: 2, nullCount: 0, children: [int32(7, 8), int32(1, 2)] });
    const table = quiver.tableFromIPC(arrow.tableToIPC(new arrow.Table({ s: arrow.makeVector(struct) }), 'stream'));
    try {
      const column = table.getChild('s');
      for (const [how, row] of [['get', column.get(0)], ['toArray', column.toArray()[0]], ['table.toArray', table.toArray()[0].s]]) {
        assert.equal(Object.getPrototypeOf(row), Object.prototype, how);
        assert.deepEqual(Object.entries(row), [['__proto__', 7], ['a', 1]], how);
      }
    } finally {
      table.free();
    }
  });

  test('bitmap copies made at once stay apart: long nullable batches', () => {
    // getChild and batch.columns() copy the bitmaps of the columns they make into one
    // array (column.js, bitmapRoom); here each batch and column has nulls in other rows.
    const batches = [1000, 3, 700, 513].map((length, b) => {
      const ints = Array.from({ length }, (_, i) => (i % (b + 2) === 0 ? null : i));
      const strings = ints.map((v, i) => (v === null || i % 3 === 0 ? null : 'a'));
      return arrow.tableFromArrays({
        x: arrow.vectorFromArray(ints, new arrow.Int32()),
        s: arrow.vectorFromArray(strings, new arrow.Utf8()),
      }).batches[0];
    });
    const bytes = arrow.tableToIPC(new arrow.Table(batches), 'stream');
    const theirs = arrow.tableFromIPC(bytes);
    const table = quiver.tableFromIPC(bytes);
    try {
      const validOf = (column) => Array.from({ length: column.length }, (_, i) => column.isValid(i));
      for (const name of ['x', 's']) {
        const want = validOf(theirs.getChild(name));
        assert.deepEqual(table.getChild(name).chunks.flatMap(validOf), want, `getChild(${name}) chunks`);
        const perBatch = table.batches.flatMap((batch) => {
          const valid = validOf(batch.columns()[name === 'x' ? 0 : 1]);
          batch.free();
          return valid;
        });
        assert.deepEqual(perBatch, want, `batch.columns() ${name}`);
      }
    } finally {
      table.free();
    }
  });
}

/** A metadata Map's entries by key (a map: its order carries no meaning). */
const sorted = (metadata) => [...metadata].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));

function checkColumn(assert, column, want, where) {
  const at = `${where} column ${want.name}`;
  assert.equal(column.name, want.name);
  assert.equal(column.length, want.values.length, `${at}: length`);
  assert.equal(column.nullCount, want.valid.filter((v) => !v).length, `${at}: nullCount`);
  assert.deepEqual(want.valid.map((_, i) => column.isValid(i)), want.valid, `${at}: isValid`);
  assert.deepEqual(column.toArray({ typed: false }), want.values, `${at}: toArray({ typed: false })`);
  want.values.forEach((v, i) => assert.deepEqual(column.get(i), v, `${at}: get(${i})`));
  assert.deepEqual([...column], want.values, `${at}: iteration`);
  const typed = column.toArray();
  const { id, bitWidth } = column.type;
  const direct = ['Int', 'Time', 'Duration'].includes(id) || (id === 'Float' && bitWidth !== 16);
  assert.equal(ArrayBuffer.isView(typed), direct && column.nullCount === 0, `${at}: toArray() typed or not`);
  if (ArrayBuffer.isView(typed)) {
    assert.equal(typed.constructor, column.values.constructor, `${at}: toArray() class`);
    assert.notEqual(typed.buffer, column.values.buffer, `${at}: toArray() is a copy`);
    assert.deepEqual(Array.from(typed), want.values, `${at}: toArray()`);
  } else {
    assert.deepEqual(typed, want.values, `${at}: toArray()`);
  }
  // The raw views: validity bits and fixed-width values where pyarrow gives the same value.
  const { validity, validityBitOffset } = column;
  if (validity !== null) {
    want.valid.forEach((valid, i) => {
      const j = validityBitOffset + i;
      assert.equal(((validity[j >> 3] >> (j & 7)) & 1) === 1, valid, `${at}: validity bit ${i}`);
    });
  }
  if (column.type.id === 'Int' || (column.type.id === 'Float' && column.type.bitWidth > 16)) {
    const { values } = column;
    assert.equal(values.length, want.values.length, `${at}: values.length`);
    want.values.forEach((v, i) => v !== null && assert.equal(values[i], v, `${at}: values[${i}]`));
  }
  if (LISTS.includes(column.type.id)) checkItems(assert, column, want, at);
  checkChildren(assert, column, at);
}

const LISTS = ['List', 'LargeList', 'ListView', 'LargeListView'];

/** Each valid row's items, read from `offsets` (and a list view's `sizes`) in the child. */
function checkItems(assert, column, want, at) {
  const { offsets, sizes } = column;
  const view = column.type.id.endsWith('View');
  assert.equal(offsets.length, view ? column.length : column.length + 1, `${at}: offsets.length`);
  assert.equal(sizes?.length, view ? column.length : undefined, `${at}: sizes.length`);
  const items = column.children[0].toArray({ typed: false });
  want.values.forEach((v, i) => {
    if (v === null) return;
    const first = Number(offsets[i]);
    const end = view ? first + Number(sizes[i]) : Number(offsets[i + 1]);
    assert.deepEqual(items.slice(first, end), v, `${at}: row ${i} from offsets${view ? ' and sizes' : ''}`);
  });
}

/** Every descendant column reads, and has the name its field gives: `children` never throws. */
function checkChildren(assert, column, at) {
  const fields = column.type.id === 'Dictionary' ? [] : column.field.children;
  const { children } = column;
  assert.deepEqual(children.map((c) => c.name), fields.map((f) => f.name), `${at}: children`);
  for (const child of children) {
    child.toArray({ typed: false });
    checkChildren(assert, child, `${at}.${child.name}`);
  }
  if (column.dictionary !== undefined) checkChildren(assert, column.dictionary, `${at} dictionary`);
}
