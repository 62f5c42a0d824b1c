// Lifetime checks of columns and toArrowJS results, shared by Node
// (tests/js/memory.test.js) and Chromium (tests/browser/memory.test.js): values held
// across 64 MiB of memory growth, freeing 1,000 batches back to the baseline, and the
// errors for freed batches, missing columns and types Arrow JS cannot represent.
import { normalize } from './columns.js';

/** A stream of `batches` batches of `rows` rows (int32 with nulls, utf8 from `prefix`, float64). */
function smallStream(arrow, batches, rows, prefix = 'row') {
  const batch = (b) => arrow.tableFromArrays({
    i32: Int32Array.from({ length: rows }, (_, i) => b * rows + i),
    f64: Float64Array.from({ length: rows }, (_, i) => i / 4),
    str: Array.from({ length: rows }, (_, i) => (i % 7 === 3 ? null : `${prefix} ${b}:${i}`)),
  });
  let table = batch(0);
  for (let b = 1; b < batches; b++) table = table.concat(batch(b));
  return arrow.tableToIPC(table, 'stream');
}

/** 64 MiB of int64 in 8 batches, so that decoding it grows wasm memory. */
function bigStream(arrow) {
  const batch = () => arrow.tableFromArrays({ x: new BigInt64Array(1 << 20).fill(7n) });
  let table = batch();
  for (let b = 1; b < 8; b++) table = table.concat(batch());
  return arrow.tableToIPC(table, 'stream');
}

/** One batch of a struct column and a dictionary column, whose columns have parts. */
function nestedStream(arrow) {
  const struct = new arrow.Struct([new arrow.Field('a', new arrow.Float64())]);
  const dictionary = new arrow.Dictionary(new arrow.Utf8(), new arrow.Int32());
  return arrow.tableToIPC(arrow.tableFromArrays({
    st: arrow.vectorFromArray([{ a: 1 }, { a: 2 }], struct),
    d: arrow.vectorFromArray(['x', 'y'], dictionary),
  }), 'stream');
}

/**
 * Makes wasm memory grow by allocating more than it holds, in one piece; returns that
 * batch, to free. Memory freed earlier is reused first, so a smaller one might not.
 */
function growMemory(quiver) {
  const before = quiver.memoryStats().wasmMemoryBytes;
  const batch = quiver.batchFromColumns({ fill: new Uint8Array(before) });
  if (quiver.memoryStats().wasmMemoryBytes === before) throw new Error('wasm memory did not grow');
  return batch;
}

/** Every column's values, normalized, of an Arrow JS table. */
function arrowValues(arrow, arrowTable, fields) {
  return fields.map((field, k) => [...arrowTable.getChildAt(k)].map((v) => normalize(arrow, v, field)));
}

// The views of a column that a held column must hand out again after growth.
const VIEWS = ['values', 'offsets', 'sizes'];

/** A column and every column made from it (children, dictionary), depth first. */
function columnTree(column) {
  const dictionary = column.dictionary;
  return [column, ...column.children.flatMap(columnTree), ...(dictionary ? columnTree(dictionary) : [])];
}

/** Registers the tests; `names` lists streams (in expected.json) to hold across growth. */
export function memoryTests({ test, assert, quiver, arrow, expected, read, names }) {
  test('held columns and toArrowJS tables read every value right after 64 MiB of growth', async () => {
    const held = [];
    for (const name of names) {
      const table = quiver.tableFromIPC(await read(name));
      const fields = Array.from({ length: table.numColumns }, (_, k) => table.getChild(k).field);
      const convertible = !fields.some((f) => /"(RunEndEncoded|ListView|LargeListView)"/.test(JSON.stringify(f)));
      const converted = convertible ? quiver.toArrowJS(table, arrow) : undefined;
      // Not read before the growth: its string bytes are first copied after it.
      const convertedLater = convertible ? quiver.toArrowJS(table, arrow) : undefined;
      const batches = table.batches;
      const columns = batches.map((b) => b.columns());
      // Children and dictionaries too: growth must reach their `values`, which no getter checks.
      const trees = columns.map((cs) => cs.map(columnTree));
      const treeLengths = trees.map((ts) => ts.map((t) => t.map((c) => c.values?.length)));
      const views = columns.map((cs) => cs.map((c) => VIEWS.map((key) => c[key])));
      const lengths = views.map((vs) => vs.map((v) => v.map((view) => view?.length)));
      held.push({ name, table, fields, converted, convertedLater, batches, columns, trees, treeLengths, views, lengths,
        arrowBefore: converted && arrowValues(arrow, converted, fields) });
    }
    const before = quiver.memoryStats().wasmMemoryBytes;
    const big = quiver.tableFromIPC(bigStream(arrow));
    const after = quiver.memoryStats().wasmMemoryBytes;
    assert.ok(after - before >= 64 << 20, `wasm memory grew by ${after - before} bytes only`);
    try {
      for (const { name, table, fields, converted, convertedLater, batches, columns, trees, treeLengths, views, lengths, arrowBefore } of held) {
        const want = expected[name];
        batches.forEach((batch, b) => {
          columns[b].forEach((column, k) => {
            // Before any other accessor, which could make `values` again on its own.
            trees[b][k].forEach((part, p) => {
              const length = treeLengths[b][k][p];
              if (length === undefined) return;
              assert.equal(part.values.length, length, `${name}: values.length of part ${p} of column ${k} after growth`);
              assert.ok(part.values.buffer.byteLength >= after, `${name}: part ${p} of column ${k} kept a stale values`);
            });
            assert.deepEqual(column.toArray({ typed: false }), want[b].columns[k].values, `${name} batch ${b} column ${k}`);
            VIEWS.forEach((key, v) => {
              const view = column[key];
              const old = views[b][k][v];
              const length = lengths[b][k][v];
              if (view === undefined) return;
              // A view kept from before growth is detached (empty) on a fixed-size buffer,
              // so the getter re-derives it; on a resizable buffer it is still the one.
              assert.equal(view.length, length, `${name}: ${key}.length after growth`);
              assert.ok(view.buffer.byteLength >= after, `${name}: the ${key} getter returned a stale view`);
              if (old.buffer.resizable) assert.equal(view, old);
              else if (length > 0) assert.equal(old.length, 0);
            });
          });
        });
        fields.forEach((_, k) => {
          const all = want.flatMap((batch) => batch.columns[k].values);
          assert.deepEqual(table.getChild(k).toArray({ typed: false }), all, `${name} getChild(${k})`);
        });
        if (converted) {
          assert.deepEqual(arrowValues(arrow, converted, fields), arrowBefore, `${name}: toArrowJS`);
          assert.deepEqual(arrowValues(arrow, convertedLater, fields), arrowBefore, `${name}: toArrowJS, first read after growth`);
        }
      }
    } finally {
      big.free();
      for (const { table, batches } of held) {
        batches.forEach((b) => b.free());
        table.free();
      }
    }
  });

  test('decoding and freeing 1,000 batches returns liveBytes to the baseline', () => {
    const bytes = smallStream(arrow, 1000, 20);
    const cycle = () => {
      const reader = new quiver.StreamReader();
      reader.push(bytes);
      let batches = 0;
      for (let batch = reader.nextBatch(); batch; batch = reader.nextBatch()) {
        const [i32, , str] = batch.columns();
        assert.equal(i32.values.length, 20);
        assert.equal(str.toArray({ typed: false }).length, 20);
        quiver.toArrowJS(batch, arrow, { zeroCopy: false });
        batch.free();
        batches++;
      }
      reader.finish();
      reader.free();
      return batches;
    };
    cycle(); // the allocator's own first-use growth is not a leak
    const baseline = quiver.memoryStats().liveBytes;
    assert.equal(cycle(), 1000);
    const live = quiver.memoryStats().liveBytes;
    assert.ok(Math.abs(live - baseline) <= 4096, `liveBytes ${live} vs baseline ${baseline}`);
  });

  test('a freed batch\'s columns throw instead of reading freed memory', () => {
    const table = quiver.tableFromIPC(smallStream(arrow, 1, 5));
    const [batch] = table.batches;
    const [i32, , str] = batch.columns();
    // Every accessor used once first, so that what it keeps (readers, bitmaps) is built.
    for (const column of [i32, str]) {
      assert.equal(column.get(3), column === i32 ? 3 : null);
      assert.equal(column.isValid(3), column === i32);
      assert.equal(column.toArray({ typed: false }).length, 5);
      assert.equal([...column].length, 5);
    }
    const rows = table.getChild('str');
    assert.equal(rows.get(4), 'row 0:4');
    const validBefore = [0, 1, 2, 3, 4].map((i) => str.isValid(i));
    batch.free();
    table.free();
    const freed = { message: "this column's RecordBatch was freed; keep the batch (or table) alive while you read its columns" };
    for (const column of [i32, str]) {
      // `values` is a data property: what it holds now throws on any use.
      assert.throws(() => column.values[0], freed);
      assert.throws(() => column.values.length, freed);
      assert.throws(() => Array.from(column.values), freed);
      assert.throws(() => column.validity, freed);
      assert.throws(() => column.get(0), freed);
      assert.throws(() => column.toArray({ typed: false }), freed);
      assert.throws(() => column.toArray(), freed);
      assert.throws(() => [...column], freed);
    }
    assert.throws(() => rows.get(4), freed);
    assert.throws(() => rows.toArray(), freed);
    // isValid reads no wasm memory: the column's own copy of its bitmap answers still.
    assert.deepEqual([0, 1, 2, 3, 4].map((i) => str.isValid(i)), validBefore);
  });

  test('a batch or table hands out each column once, and its free or dispose retires them', () => {
    const freed = /RecordBatch was freed/;
    // WebKitGTK 2.50 has no Symbol.dispose.
    for (const release of Symbol.dispose ? ['free', Symbol.dispose] : ['free']) {
      const table = quiver.tableFromIPC(smallStream(arrow, 2, 5));
      const [batch] = table.batches;
      const i32 = batch.column('i32');
      assert.equal(batch.column('i32'), i32);
      const columns = batch.columns();
      assert.deepEqual(batch.columns(), columns);
      assert.notEqual(batch.columns(), columns, 'columns() gives a new array each call');
      columns.pop();
      assert.equal(batch.columns().length, 3, 'changing the array changes no later call');
      const chunked = table.getChild('f64');
      assert.equal(table.getChild('f64'), chunked);
      assert.equal(i32.values[4], 4);
      assert.equal(chunked.chunks[0].values[1], 0.25);
      batch[release]();
      assert.throws(() => i32.values[0], freed);
      assert.throws(() => columns[1].values.length, freed);
      assert.equal(chunked.chunks[0].values[1], 0.25, 'the table was not freed');
      table[release]();
      for (const chunk of chunked.chunks) assert.throws(() => chunk.values[0], freed);
    }
  });

  test('freeing a batch retires the columns made from its columns too', () => {
    const freed = /RecordBatch was freed/;
    const table = quiver.tableFromIPC(nestedStream(arrow));
    const [batch] = table.batches;
    const child = batch.column('st').children[0];
    const dictionary = batch.column('d').dictionary;
    assert.equal(batch.column('d').dictionary, dictionary, 'the dictionary is made once');
    assert.deepEqual(Array.from(child.values), [1, 2]);
    assert.ok(dictionary.values.length > 0);
    batch.free();
    assert.throws(() => child.values[0], freed);
    assert.throws(() => dictionary.values[0], freed);
    table.free();
  });

  test('a column that cannot be retired leaves none of the others reading freed memory', () => {
    const freed = /RecordBatch was freed/;
    const table = quiver.tableFromIPC(smallStream(arrow, 2, 5));
    const [batch] = table.batches;
    const columns = batch.columns();
    const chunked = table.getChild('f64');
    // A frozen column's `values` cannot be assigned the freed stand-in.
    Object.freeze(columns[0]);
    Object.freeze(chunked.chunks[0]);
    assert.throws(() => batch.free(), TypeError);
    assert.throws(() => columns[1].values[0], freed);
    assert.throws(() => columns[2].values[0], freed);
    assert.throws(() => table.free(), TypeError);
    assert.throws(() => chunked.chunks[1].values[0], freed);
    batch.free();
    table.free();

    const nested = quiver.tableFromIPC(nestedStream(arrow));
    const [parent] = nested.batches;
    const struct = parent.column('st');
    const child = struct.children[0];
    const dictionaryColumn = parent.column('d');
    const dictionary = dictionaryColumn.dictionary;
    Object.freeze(struct);
    Object.freeze(dictionaryColumn);
    assert.throws(() => parent.free(), TypeError);
    assert.throws(() => child.values[0], freed);
    assert.throws(() => dictionary.values[0], freed);
    nested.free();
  });

  test('memory growth remakes the values of live batches\' columns, and leaves freed ones retired', () => {
    const table = quiver.tableFromIPC(smallStream(arrow, 2, 5));
    const [live, gone] = table.batches;
    const kept = live.column('f64');
    const dropped = gone.column('f64');
    gone.free();
    const fill = growMemory(quiver);
    try {
      assert.ok(kept.values.buffer.byteLength >= quiver.memoryStats().wasmMemoryBytes, 'a stale values');
      assert.deepEqual(Array.from(kept.values), [0, 0.25, 0.5, 0.75, 1]);
      assert.throws(() => dropped.values[0], /RecordBatch was freed/);
    } finally {
      fill.free();
      live.free();
      table.free();
    }
  });

  test('memory grows with room to spare: 384 MiB held a MiB at a time grows it a few times', () => {
    // Without the reserve (a quarter of memory's size, up to 64 MiB) each allocation past
    // what earlier tests freed would grow memory once more.
    const held = [];
    let growths = 0;
    try {
      for (let i = 0; i < 384; i++) {
        const before = quiver.memoryStats().wasmMemoryBytes;
        held.push(quiver.batchFromColumns({ x: new Uint8Array(1 << 20) }));
        if (quiver.memoryStats().wasmMemoryBytes !== before) growths++;
      }
      assert.ok(growths >= 1, 'memory never grew: the test proves nothing');
      assert.ok(growths <= 48, `memory grew ${growths} times`);
    } finally {
      for (const batch of held) batch.free();
    }
  });

  test('accessors used before memory grows read the right values after it', () => {
    const table = quiver.tableFromIPC(smallStream(arrow, 2, 50));
    const i32 = table.getChild('i32');
    const [, , str] = table.batches[1].columns();
    const want = { ints: i32.toArray({ typed: false }), strings: str.toArray({ typed: false }), valid: str.toArray({ typed: false }).map((v) => v !== null) };
    want.withOptions = want.strings;
    const read = () => ({
      ints: Array.from({ length: i32.length }, (_, i) => i32.get(i)),
      // A value option set's reader is kept apart from the default one, and rebuilt too.
      withOptions: Array.from({ length: str.length }, (_, i) => str.get(i, { useMap: true })),
      strings: [...str],
      valid: Array.from({ length: str.length }, (_, i) => str.isValid(i)),
    });
    assert.deepEqual(read(), want);
    // Memory freed by earlier tests is reused first: decode until memory grows.
    const bigs = [];
    const before = quiver.memoryStats().wasmMemoryBytes;
    while (bigs.length < 8 && quiver.memoryStats().wasmMemoryBytes === before) bigs.push(quiver.tableFromIPC(bigStream(arrow)));
    try {
      assert.ok(quiver.memoryStats().wasmMemoryBytes > before, 'wasm memory did not grow');
      // Over a fixed-length buffer the views these accessors kept have detached by now.
      assert.deepEqual(read(), want);
      assert.deepEqual(i32.toArray({ typed: false }), want.ints);
      assert.deepEqual(i32.toArray(), Int32Array.from(want.ints));
      assert.deepEqual(table.getChild('i32').toArray(), Int32Array.from(want.ints));
      assert.deepEqual(table.toArray().map((row) => row.i32), want.ints);
    } finally {
      for (const big of bigs) big.free();
      table.free();
    }
  });

  test('isValid reads no view, and no padding bit of its bitmap as a row', () => {
    const table = quiver.tableFromIPC(smallStream(arrow, 1, 5));
    const [batch] = table.batches;
    const [i32, , str] = batch.columns();
    const strValid = str.toArray({ typed: false }).map((v) => v !== null);
    assert.ok(strValid.includes(false) && strValid.includes(true));
    // Each would throw if isValid read a view of the column.
    const noGetter = () => {
      throw new Error('isValid read a view');
    };
    for (const column of [i32, str]) {
      for (const view of ['validity', 'values']) Object.defineProperty(column, view, { get: noGetter, configurable: true });
    }
    assert.deepEqual([0, 1, 2, 3, 4].map((i) => i32.isValid(i)), [true, true, true, true, true]);
    assert.deepEqual([0, 1, 2, 3, 4].map((i) => str.isValid(i)), strValid);
    // isValid does not check its row (as in flechette), but the padding bits past the last
    // row, and the bytes past the bitmap, never read as valid.
    for (const outside of [5, 7, 8, 64, -1, -9]) assert.equal(str.isValid(outside), false, `str row ${outside}`);
    for (const bad of [5, -1, 1.5, '1', NaN]) {
      const message = `row ${bad} is out of range: column "i32" has 5 rows`;
      assert.throws(() => table.getChild('i32').isValid(bad), { name: 'RangeError', message });
      assert.throws(() => i32.get(bad), { name: 'RangeError', message });
      assert.throws(() => table.getChild('i32').get(bad), { name: 'RangeError', message });
    }
    for (const column of [i32, str]) for (const view of ['validity', 'values']) delete column[view];
    batch.free();
    table.free();
  });

  test('isValid reads a bitmap that starts mid-byte, and no padding bit as a row', () => {
    // Row 3 is null, and the padding bits after row 4 are set.
    const data = arrow.makeData({
      type: new arrow.Int32(), length: 5, nullCount: 1,
      nullBitmap: Uint8Array.of(0xf7), data: Int32Array.of(0, 1, 2, 3, 4),
    });
    const padded = quiver.tableFromIPC(arrow.tableToIPC(new arrow.Table({ x: arrow.makeVector(data) }), 'stream'));
    const [x] = padded.batches[0].columns();
    const rows = [0, 1, 2, 3, 4, 5, 6, 7];
    assert.deepEqual(rows.map((i) => x.isValid(i)), [true, true, true, false, true, false, false, false]);
    // A slice from row 3 keeps its bitmap's bit offset through fromArrowJS.
    const ints = arrow.vectorFromArray([0, null, 2, 3, null, 5, 6, null, 8, 9], new arrow.Int32());
    const sliced = quiver.fromArrowJS(new arrow.Table({ x: ints.slice(3) }));
    const [y] = sliced.batches[0].columns();
    assert.equal(y.validityBitOffset, 3);
    assert.deepEqual(rows.map((i) => y.isValid(i)), [true, false, true, true, false, true, true, false]);
    padded.free();
    sliced.free();
  });

  test('toArray() copies numbers without nulls into a typed array, and nothing else', () => {
    const table = quiver.tableFromIPC(smallStream(arrow, 2, 5));
    const [batch] = table.batches;
    const [i32, f64, str] = batch.columns();
    const ints = i32.toArray();
    assert.ok(ints instanceof Int32Array && ints.buffer !== i32.values.buffer, 'a copy in an Int32Array');
    assert.deepEqual(ints, Int32Array.of(0, 1, 2, 3, 4));
    assert.deepEqual(i32.toArray({ typed: true }), ints, 'typed: true is the default');
    assert.deepEqual(f64.toArray(), Float64Array.of(0, 0.25, 0.5, 0.75, 1));
    assert.deepEqual(str.toArray(), ['row 0:0', 'row 0:1', 'row 0:2', null, 'row 0:4'], 'strings stay a JS array');
    assert.deepEqual(i32.toArray({ typed: false }), [0, 1, 2, 3, 4], 'a JS array with typed: false');
    assert.deepEqual(table.getChild('i32').toArray(), Int32Array.from({ length: 10 }, (_, i) => i));
    assert.deepEqual(table.getChild('i32').toArray({ typed: false }), Array.from({ length: 10 }, (_, i) => i));
    for (const typed of ['yes', 1, null]) {
      const message = `option typed must be a boolean, found ${typed === 'yes' ? '"yes"' : typed === 1 ? 'number' : 'null'}`;
      assert.throws(() => i32.toArray({ typed }), { name: 'TypeError', message });
      assert.throws(() => table.getChild('i32').toArray({ typed }), { name: 'TypeError', message });
    }
    batch.free();
    table.free();
  });

  test('a freed object says so when used, and freeing it again does nothing', () => {
    const message = 'quiver-arrow: this object was freed (by free() or the end of its `using` block) and cannot be used any more';
    const usedAfterFree = { message };
    const table = quiver.tableFromIPC(smallStream(arrow, 2, 5));
    const [batch] = table.batches;
    const reader = new quiver.StreamReader();
    for (const x of [batch, table, reader]) {
      x.free();
      x.free();
      x[Symbol.dispose]?.(); // what the end of a `using` block calls
    }
    assert.throws(() => batch.numRows, usedAfterFree);
    assert.throws(() => batch.column('i32'), usedAfterFree);
    assert.throws(() => table.getChild('i32'), usedAfterFree);
    assert.throws(() => reader.push(new Uint8Array(8)), usedAfterFree);
    assert.throws(() => quiver.toArrowJS(table, arrow), usedAfterFree);
    // Errors of the module's own keep their words.
    assert.throws(() => quiver.tableFromIPC(new Uint8Array([1, 2, 3])), (e) => e.message !== message);
    const again = quiver.tableFromIPC(smallStream(arrow, 1, 5));
    assert.equal(again.numRows, 5, 'the module still works');
    again.free();
  });

  test('isValid is true on every row of a column without nulls, short or long', () => {
    // Ones shared up to 64 KiB of bits, grown as longer columns come; longer ones own theirs.
    const lengths = [10, 100_000, 600_000, 10];
    const batches = lengths.map((n) => quiver.batchFromColumns({ x: new Int8Array(n) }));
    const columns = batches.map((b) => b.column('x'));
    for (const [k, column] of columns.entries()) {
      assert.equal(column.nullCount, 0);
      const rows = [0, 7, 8, lengths[k] - 1];
      assert.deepEqual(rows.map((i) => column.isValid(i)), rows.map(() => true), `${lengths[k]} rows`);
    }
    assert.equal(columns[0].isValid(9), true, 'a short column still answers after longer ones');
    for (const batch of batches) batch.free();
  });

  test('a freed table\'s chunked columns throw too', () => {
    const table = quiver.tableFromIPC(smallStream(arrow, 2, 5));
    const column = table.getChild('i32');
    assert.deepEqual(column.toArray({ typed: false }), [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    // The typed path, once before the free, so that what it keeps is built.
    assert.deepEqual(column.toArray(), Int32Array.from({ length: 10 }, (_, i) => i));
    table.free();
    assert.throws(() => column.get(7), /this column's RecordBatch was freed/);
    assert.throws(() => column.toArray(), /this column's RecordBatch was freed/);
    assert.throws(() => column.toArray({ typed: false }), /this column's RecordBatch was freed/);
  });

  test('a missing column names the available ones', () => {
    const table = quiver.tableFromIPC(smallStream(arrow, 1, 5));
    const [batch] = table.batches;
    assert.throws(() => batch.column('missing'),
      { message: 'no column named "missing" in this batch; the columns are: i32, f64, str' });
    assert.throws(() => batch.column(3),
      { message: 'no column at index 3 in this batch; the columns are: i32, f64, str' });
    assert.throws(() => table.getChild('nope'),
      { message: 'no column named "nope" in this table; the columns are: i32, f64, str' });
    batch.free();
    table.free();
  });

  test('toArrowJS refuses what Arrow JS cannot represent, naming the field and type', async () => {
    for (const [name, type] of [['list_view', 'ListView'], ['large_list_view', 'LargeListView']]) {
      const views = quiver.tableFromIPC(await read(`${name}.none.arrows`));
      assert.throws(() => quiver.toArrowJS(views, arrow), {
        message: `toArrowJS: field "${name}" has type ${type}, which apache-arrow JS cannot represent`,
      });
      views.free();
    }
    const table = quiver.tableFromIPC(await read('run_end_encoded.none.arrows'));
    assert.throws(() => quiver.toArrowJS(table, arrow), {
      message: 'toArrowJS: field "run_end_encoded" has type RunEndEncoded, which apache-arrow JS cannot represent',
    });
    assert.throws(() => quiver.toArrowJS({}, arrow), /expects a quiver RecordBatch or Table, found Object/);
    assert.throws(() => quiver.toArrowJS(table, {}), /expects the apache-arrow module/);
    assert.throws(() => quiver.toArrowJS(table, arrow, { zeroCopy: 'yes' }), /zeroCopy must be a boolean/);
    table.free();
  });

  test('toArrowJS shares wasm memory where it is resizable or zeroCopy is set, and copies otherwise', () => {
    const table = quiver.tableFromIPC(smallStream(arrow, 1, 5));
    const [batch] = table.batches;
    const memory = batch.column('f64').values.buffer;
    const dataOf = (t) => t.getChild('f64').data[0].values.buffer;
    assert.equal(dataOf(quiver.toArrowJS(table, arrow)) === memory, memory.resizable === true);
    assert.equal(dataOf(quiver.toArrowJS(batch, arrow, { zeroCopy: true })), memory);
    assert.notEqual(dataOf(quiver.toArrowJS(table, arrow, { zeroCopy: false })), memory);
    // Arrow JS decodes strings with TextDecoder, which refuses resizable buffers: there the
    // UTF-8 bytes are copied out when first read, and not before.
    // (tableFromArrays encodes strings as a dictionary: these are its values.)
    const str = quiver.toArrowJS(table, arrow).getChild('str').data[0].dictionary.data[0];
    const lazy = memory.resizable === true;
    assert.equal(typeof Object.getOwnPropertyDescriptor(str, 'values').get, lazy ? 'function' : 'undefined');
    assert.deepEqual(str.values.subarray(0, 7), new TextEncoder().encode('row 0:0'));
    assert.equal(Object.getOwnPropertyDescriptor(str, 'values').get, undefined);
    assert.equal(str.values.buffer.resizable, false);
    // The result holds its own share of the buffers: freeing the source leaves it valid.
    const shared = quiver.toArrowJS(batch, arrow, { zeroCopy: true });
    // A copy's strings are copied at once too, not when first read from freed memory.
    const copied = quiver.toArrowJS(batch, arrow, { zeroCopy: false });
    const strings = [...arrow.tableFromIPC(smallStream(arrow, 1, 5)).getChild('str')];
    assert.equal(Object.getOwnPropertyDescriptor(copied.getChild('str').data[0].dictionary.data[0], 'values').get, undefined);
    batch.free();
    table.free();
    // What the allocator puts where the freed strings were.
    const reuse = quiver.tableFromIPC(smallStream(arrow, 1, 5, 'XYZ'));
    assert.deepEqual([...shared.getChild('f64')], [0, 0.25, 0.5, 0.75, 1]);
    assert.deepEqual([...copied.getChild('str')], strings);
    reuse.free();
  });
}
