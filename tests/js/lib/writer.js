// The writer through the built package, shared by Node (tests/js/writer.test.js) and
// Chromium (tests/browser/writer.test.js): round trips read by apache-arrow, the chunk
// tables in one crossing, views that stay right across memory growth (views over the
// resizable memory of the web build, copies in Node 20), allocations per write, freeing
// back to the baseline, grown dictionaries sent whole or as deltas, and clear errors.

/** `batches` batches of `rows` rows: int64, int32 with 10% nulls, float64, 16-byte utf8. */
function stream(arrow, batches, rows) {
  const batch = (b) => arrow.tableFromArrays({
    id: BigInt64Array.from({ length: rows }, (_, i) => BigInt(b * rows + i)),
    n: Array.from({ length: rows }, (_, i) => (i % 10 === 0 ? null : i)),
    x: Float64Array.from({ length: rows }, (_, i) => i / 3),
    s: Array.from({ length: rows }, (_, i) => String(b * rows + i).padStart(16, '0')),
  });
  let table = batch(0);
  for (let b = 1; b < batches; b++) table = table.concat(batch(b));
  return arrow.tableToIPC(table, 'stream');
}

/** Every chunk of `chunks` joined, through `chunk(i)` and the offsets table. */
function joined(chunks) {
  const out = new Uint8Array(chunks.byteLength);
  const offsets = chunks.offsets();
  for (let i = 0; i < chunks.count; i++) out.set(chunks.chunk(i), offsets[i]);
  return out;
}

/** `parts` joined into one Uint8Array. */
export function concat(parts) {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

export function writerTests({ test, assert, quiver, arrow }) {
  test('exports the writer API', () => {
    for (const name of ['StreamWriter', 'Chunks', 'messageSize', 'tableToIPC']) {
      assert.equal(typeof quiver[name], 'function', name);
    }
  });

  test('batches written in chunks read back in apache-arrow, with every codec', () => {
    const source = stream(arrow, 3, 500);
    const table = quiver.tableFromIPC(source);
    const want = arrow.tableFromIPC(source);
    for (const compression of [null, 'lz4', 'zstd']) {
      const writer = quiver.StreamWriter.forTable(table, { compression });
      const parts = [];
      for (const batch of table.batches) {
        const chunks = writer.write(batch);
        parts.push(joined(chunks));
        chunks.free();
        batch.free();
      }
      const end = writer.finish();
      parts.push(end.toUint8Array());
      end.free();
      writer.free();
      const bytes = concat(parts);
      const again = quiver.tableFromIPC(bytes);
      assert.equal(again.numRows, 1500);
      again.free();
      if (compression === null) {
        const got = arrow.tableFromIPC(bytes);
        for (const name of ['id', 'n', 'x', 's']) {
          assert.deepEqual(got.getChild(name).toArray(), want.getChild(name).toArray(), name);
        }
      }
    }
    table.free();
  });

  test('one crossing gives all lengths and offsets; chunks split at maxChunkBytes', () => {
    const table = quiver.tableFromIPC(stream(arrow, 1, 100));
    const [batch] = table.batches;
    const size = quiver.messageSize(batch);
    const writer = quiver.StreamWriter.forBatch(batch, { maxChunkBytes: 61 });
    const sizes = writer.messageSizes(batch);
    assert.equal(sizes.recordBatch, size);
    // apache-arrow's tableFromArrays dictionary-encodes strings: one dictionary message.
    assert.equal(sizes.dictionaries.length, 1);
    const chunks = writer.write(batch);
    const lengths = chunks.lengths();
    assert.ok(lengths instanceof Uint32Array);
    assert.equal(lengths.length, chunks.count);
    assert.equal(lengths.reduce((a, b) => a + b, 0), chunks.byteLength);
    assert.equal(chunks.byteLength, sizes.schema + sizes.dictionaries[0] + size);
    assert.ok(lengths.every((n) => n <= 61));
    const whole = quiver.StreamWriter.forBatch(batch);
    const one = whole.write(batch);
    assert.deepEqual(Array.from(one.lengths()), [sizes.schema, sizes.dictionaries[0], size]);
    assert.deepEqual(joined(chunks), one.toUint8Array());
    const all = chunks.toArray();
    assert.equal(all.length, chunks.count);
    all.forEach((bytes, i) => assert.deepEqual(bytes, chunks.chunk(i), `toArray()[${i}]`));
    for (const x of [chunks, one, writer, whole, batch, table]) x.free();
  });

  test('a chunk read after 64 MiB of memory growth has the right bytes', () => {
    const table = quiver.tableFromIPC(stream(arrow, 1, 2000));
    const [batch] = table.batches;
    const writer = quiver.StreamWriter.forBatch(batch);
    const chunks = writer.write(batch);
    const views = chunks.toArray();
    const copies = views.map((v) => v.slice());
    const resizable = views[0].buffer.resizable === true;
    const before = quiver.memoryStats().wasmMemoryBytes;
    const big = quiver.tableFromIPC(arrow.tableToIPC(arrow.tableFromArrays({
      x: new BigInt64Array(8 << 20).fill(7n),
    }), 'stream'));
    assert.ok(quiver.memoryStats().wasmMemoryBytes - before >= 64 << 20, 'memory grew');
    views.forEach((v, i) => assert.deepEqual(v, copies[i], `chunk ${i}`));
    // Over a resizable buffer chunk(i) is a view with no copy; elsewhere a copy.
    assert.equal(resizable, typeof WebAssembly.Memory.prototype.toResizableBuffer === 'function');
    for (const x of [big, chunks, writer, batch, table]) x.free();
  });

  test('one write of about 485 KB allocates less than payload + 4 KiB; fixed 1 MiB chunks more than 1 MiB', () => {
    const table = quiver.tableFromIPC(stream(arrow, 1, 12_100));
    const [batch] = table.batches;
    const size = quiver.messageSize(batch);
    const allocated = (options) => {
      const writer = quiver.StreamWriter.forBatch(batch, options);
      writer.write(batch).free();
      const before = quiver.memoryStats().allocatedBytes;
      const chunks = writer.write(batch);
      const cost = quiver.memoryStats().allocatedBytes - before;
      assert.deepEqual(Array.from(chunks.lengths()), [size]);
      chunks.free();
      writer.free();
      return cost;
    };
    const exact = allocated(undefined);
    const fixed = allocated({ chunkSizing: 'fixed' });
    assert.ok(exact < size + 4096, `payload ${size}, allocated ${exact}`);
    assert.ok(fixed > 1 << 20, `fixed chunks allocated only ${fixed}`);
    batch.free();
    table.free();
  });

  test('writing and freeing 1,000 chunks returns liveBytes to the baseline', () => {
    const table = quiver.tableFromIPC(stream(arrow, 1, 100));
    const [batch] = table.batches;
    for (const compression of [null, 'lz4', 'zstd']) {
      const start = quiver.memoryStats().liveBytes;
      const writer = quiver.StreamWriter.forBatch(batch, { compression });
      for (let i = 0; i < 1000; i++) writer.write(batch).free();
      if (compression === null) {
        // Without a codec, whose caches may shift by a few hundred bytes per call, the
        // writer's working set is exact: a kept chunk costs its bytes, and free() ends it.
        const baseline = quiver.memoryStats().liveBytes;
        const kept = writer.write(batch);
        assert.ok(quiver.memoryStats().liveBytes >= baseline + kept.byteLength);
        kept.free();
        assert.equal(quiver.memoryStats().liveBytes, baseline);
      }
      writer.free();
      assert.equal(quiver.memoryStats().liveBytes, start, `${compression}: writer freed`);
    }
    batch.free();
    table.free();
  });

  test('tableToIPC writes a whole table that reads back', () => {
    const source = stream(arrow, 2, 300);
    const table = quiver.tableFromIPC(source);
    const bytes = quiver.tableToIPC(table, { compression: 'lz4' });
    assert.ok(bytes instanceof Uint8Array);
    const again = quiver.tableFromIPC(bytes);
    assert.equal(again.numRows, 600);
    const plain = arrow.tableFromIPC(quiver.tableToIPC(table));
    assert.deepEqual(plain.getChild('s').toArray(), arrow.tableFromIPC(source).getChild('s').toArray());
    again.free();
    table.free();
  });

  test('each batch carries its message metadata through reading, writing and tableToIPC', () => {
    const table = quiver.tableFromIPC(stream(arrow, 2, 10));
    const [first, second] = table.batches;
    assert.deepEqual(first.metadata, {});
    const tags = { page: '1', note: 'ünïcode ✓' };
    first.metadata = tags;
    assert.deepEqual(first.metadata, tags);
    assert.throws(() => { first.metadata = { page: 2 }; }, {
      message: 'batch metadata must be an object of string keys and string values, found a value that is not a string at "page"',
    });
    assert.deepEqual(first.metadata, tags, 'a refused value changes nothing');

    const writer = quiver.StreamWriter.forBatch(first);
    const sizes = writer.messageSizes(first);
    assert.equal(quiver.messageSize(first), sizes.recordBatch);
    assert.ok(sizes.recordBatch > quiver.messageSize(second), 'the metadata is in the message');
    const writes = [writer.write(first)];
    assert.equal(writer.messageSizes(second).schema, null, 'the schema is written already');
    writes.push(writer.write(second), writer.finish());
    const dictionaries = sizes.dictionaries.reduce((a, b) => a + b, 0);
    assert.equal(writes[0].byteLength, sizes.schema + dictionaries + sizes.recordBatch);
    const bytes = concat(writes.map(joined));
    assert.equal(arrow.tableFromIPC(bytes).numRows, 20, 'apache-arrow reads the stream');

    const metadataOf = (t) => t.batches.map((b) => {
      const m = b.metadata;
      b.free();
      return m;
    });
    const back = quiver.tableFromIPC(bytes);
    assert.deepEqual(metadataOf(back), [tags, {}]);
    const again = quiver.tableFromIPC(quiver.tableToIPC(back));
    assert.deepEqual(metadataOf(again), [tags, {}]);
    const alone = quiver.tableFromIPC(quiver.tableToIPC(first, { compression: 'zstd' }));
    assert.deepEqual(metadataOf(alone), [tags], 'tableToIPC of a batch keeps its metadata');
    for (const x of [...writes, writer, first, second, table, back, again, alone]) x.free();
  });

  test('non-ASCII strings pass into the module (a resizable memory refuses encodeInto)', () => {
    const name = 'prix € ✓';
    const table = quiver.tableFromIPC(arrow.tableToIPC(arrow.tableFromArrays({ [name]: Float64Array.of(1, 2) }), 'stream'));
    assert.deepEqual(table.getChild(name).toArray({ typed: false }), [1, 2]);
    assert.throws(() => table.getChild('prix'), { message: 'no column named "prix" in this table; the columns are: prix € ✓' });
    table.free();
  });

  test('a grown dictionary is sent whole unless dictionaryDeltas asks for a delta', () => {
    // Two batches whose dictionary grows from 100 words to 101 (Arrow JS numbers a
    // dictionary's values in the order they first appear).
    const words = (n) => Array.from({ length: n }, (_, i) => `word number ${i}`);
    const type = new arrow.Dictionary(new arrow.Utf8(), new arrow.Int32());
    const tableOf = (values) => quiver.tableFromIPC(
      arrow.tableToIPC(new arrow.Table({ d: arrow.vectorFromArray(values, type) }), 'stream'));
    const tables = [tableOf(words(100)), tableOf(words(101))];
    const [first, second] = tables.map((t) => t.batches[0]);
    const fresh = quiver.StreamWriter.forBatch(second);
    const [whole] = fresh.messageSizes(second).dictionaries;
    const expected = [...words(100), ...words(101)];
    for (const [options, delta] of [[undefined, false], [{ dictionaryDeltas: false }, false], [{ dictionaryDeltas: true }, true]]) {
      const writer = quiver.StreamWriter.forBatch(first, options);
      const writes = [writer.write(first)];
      const { dictionaries } = writer.messageSizes(second);
      assert.equal(dictionaries.length, 1);
      if (delta) assert.ok(dictionaries[0] < whole / 4, `a delta of one word is ${dictionaries[0]} bytes, the whole dictionary ${whole}`);
      else assert.equal(dictionaries[0], whole, `${JSON.stringify(options)}: the whole dictionary again`);
      writes.push(writer.write(second), writer.finish());
      const bytes = concat(writes.map(joined));
      assert.deepEqual([...arrow.tableFromIPC(bytes).getChild('d')], expected, 'apache-arrow reads it');
      const back = quiver.tableFromIPC(bytes);
      assert.deepEqual(back.getChild('d').toArray({ typed: false }), expected, 'Quiver reads it');
      for (const x of [...writes, writer, back]) x.free();
    }
    // A file can hold no replacement: it extends the dictionary with a delta.
    const file = quiver.FileWriter.forBatch(first);
    const parts = [file.write(first), file.write(second), file.finish()];
    const read = quiver.tableFromIPC(concat(parts.map(joined)));
    assert.deepEqual(read.getChild('d').toArray({ typed: false }), expected);
    for (const x of [...parts, file, read, fresh, first, second, ...tables]) x.free();
  });

  test('a chunk wasm memory cannot hold is an error, and the writer and module go on', () => {
    const table = quiver.tableFromIPC(stream(arrow, 1, 10));
    const [batch] = table.batches;
    const huge = { chunkSizing: 'fixed', maxChunkBytes: 2 ** 32 - 1 };
    const refused = { message: /^cannot allocate a 4294967295-byte chunk: wasm memory holds at most 4 GiB/ };
    assert.throws(() => quiver.tableToIPC(table, huge), refused);
    const writer = quiver.StreamWriter.forBatch(batch, huge);
    assert.throws(() => writer.write(batch), refused);
    assert.equal(writer.stats.messages, 0);
    writer.free();
    const bytes = quiver.tableToIPC(table, { chunkSizing: 'fixed', maxChunkBytes: 1 << 16 });
    const back = quiver.tableFromIPC(bytes);
    assert.equal(back.numRows, 10);
    back.free();
    batch.free();
    table.free();
  });

  test('bad options and calls throw errors that say what was expected', () => {
    const table = quiver.tableFromIPC(stream(arrow, 1, 10));
    const [batch] = table.batches;
    assert.throws(() => quiver.StreamWriter.forBatch(batch, { maxChunkBytes: 4 }),
      { message: 'maxChunkBytes must be between 8 and 4294967295 bytes, found 4' });
    // Past what wasm32's usize holds: refused, not cut to 4294967295.
    assert.throws(() => quiver.StreamWriter.forBatch(batch, { maxChunkBytes: 2 ** 32 }),
      { message: 'maxChunkBytes must be between 8 and 4294967295 bytes, found 4294967296' });
    assert.throws(() => quiver.StreamWriter.forBatch(batch, { maxChunkBytes: 'a lot' }),
      { message: 'maxChunkBytes must be a number, found "a lot"' });
    assert.throws(() => quiver.messageSize(batch, { compression: 'brotli' }),
      { message: "compression must be null, 'lz4' or 'zstd', found 'brotli'" });
    assert.throws(() => quiver.messageSize(batch, { compression: 5 }),
      { message: 'compression must be a string, found 5' });
    assert.throws(() => quiver.messageSize(batch, 5), { message: 'WriterOptions must be an object, found 5' });
    assert.throws(() => quiver.StreamWriter.forBatch(batch, { dictionaryDeltas: 'yes' }),
      { message: 'dictionaryDeltas must be a boolean, found "yes"' });
    assert.throws(() => new quiver.StreamReader({ maxMessageBytes: 'big' }),
      { message: 'maxMessageBytes must be a number, found "big"' });
    assert.throws(() => quiver.tableToIPC({ numRows: 1 }),
      { message: 'tableToIPC expects a quiver RecordBatch or Table, found Object' });
    assert.throws(() => quiver.tableToIPC(undefined),
      { message: 'tableToIPC expects a quiver RecordBatch or Table, found undefined' });
    const writer = quiver.StreamWriter.forBatch(batch);
    const chunks = writer.finish();
    assert.throws(() => chunks.chunk(5), { message: 'chunk 5 does not exist: these Chunks hold 2' });
    assert.throws(() => writer.write(batch),
      { message: 'the stream is finished: finish() already wrote its end-of-stream marker' });
    for (const x of [chunks, writer, batch, table]) x.free();
  });
}
