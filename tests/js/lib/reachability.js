// What Quiver hands out keeps its wasm memory reachable, shared by Node
// (tests/js/reachability.test.js) and Chromium (tests/browser/reachability.test.js). The
// garbage collector frees a batch or table whose JS object is unreachable, and the
// allocator reuses that memory: a column, view or chunk still in use must keep its owner
// alive. And views of wasm memory passed back in must be read where they are, not through
// a view that growth detached (Node, whose memory is not resizable).

/**
 * Registers the tests. `gc`, where the engine lets a page force a full collection (node
 * --expose-gc, Chromium --js-flags=--expose-gc), collects garbage; without it (Firefox
 * and WebKit give a page no such call) a collection is brought about by allocating.
 */
export function reachabilityTests({ test, assert, quiver, arrow, gc }) {
  // Objects allocated before any test runs: by the time one is dropped it is as old as
  // anything a test allocated, so a collection that takes it takes those too (a full
  // collection takes everything unreachable; a young one takes all that is younger).
  const finalized = new Set();
  const registry = new FinalizationRegistry((k) => finalized.add(k));
  const sentinels = Array.from({ length: 32 }, (_, k) => {
    const sentinel = { k };
    registry.register(sentinel, k);
    return sentinel;
  });

  /** Allocates garbage until a dropped sentinel is finalized. */
  async function collectByAllocating() {
    const { k } = sentinels.pop();
    const started = performance.now();
    while (!finalized.has(k)) {
      if (performance.now() - started > 60_000) throw new Error('no collection took a dropped object in 60 s of allocating');
      Array.from({ length: 400_000 }, (_, i) => ({ i, s: `garbage ${i}` }));
      await new Promise((resolve) => setTimeout(resolve, 0));
    }
  }

  /** Collects garbage and lets the FinalizationRegistry callbacks run. */
  async function collect() {
    if (!gc) await collectByAllocating();
    for (let i = 0; i < 4; i++) {
      gc?.();
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }

  const ROWS = 1000;
  const stream = (offset) => arrow.tableToIPC(arrow.tableFromArrays({
    x: Float64Array.from({ length: ROWS }, (_, i) => offset + i),
    s: arrow.vectorFromArray(Array.from({ length: ROWS }, (_, i) => `row ${offset + i}`), new arrow.Utf8()),
  }), 'stream');
  const expectedX = (offset) => Array.from({ length: ROWS }, (_, i) => offset + i);

  /** Decodes and drops other streams, so that freed memory gets reused. */
  function churn() {
    for (let k = 0; k < 8; k++) quiver.tableFromIPC(stream(1e6 * (k + 1))).free();
  }

  test('a column keeps its dropped table alive, and its values right, through collection', async () => {
    const column = (() => quiver.tableFromIPC(stream(0)).getChild('x'))();
    const strings = (() => quiver.tableFromIPC(stream(0)).getChild('s'))();
    await collect();
    churn();
    assert.deepEqual(column.toArray({ typed: false }), expectedX(0));
    assert.equal(strings.get(7), 'row 7');
  });

  test('a batch column and its typed-array views keep their batch alive', async () => {
    const bytes = stream(0);
    const column = (() => {
      const reader = new quiver.StreamReader();
      reader.push(bytes);
      return reader.nextBatch().column('x');
    })();
    const values = (() => quiver.tableFromIPC(bytes).getChild('x').chunks[0].values)();
    const offsets = (() => quiver.tableFromIPC(bytes).getChild('s').chunks[0].offsets)();
    await collect();
    churn();
    assert.deepEqual(column.toArray({ typed: false }), expectedX(0));
    assert.deepEqual([...values], expectedX(0));
    assert.equal(offsets[ROWS], [...Array(ROWS).keys()].reduce((n, i) => n + `row ${i}`.length, 0));
  });

  test('after free(), every column getter throws, cached or not', () => {
    const table = quiver.tableFromIPC(stream(0));
    const column = table.getChild('x').chunks[0];
    assert.equal(column.nullCount, 0);
    table.free();
    for (const getter of ['validity', 'offsets', 'nullCount', 'typeIds', 'dataBuffers', 'dictionary', 'children']) {
      assert.throws(() => column[getter], /RecordBatch was freed/, getter);
    }
    // `values`, a data property, holds a stand-in that throws on any use.
    assert.throws(() => column.values[0], /RecordBatch was freed/);
    assert.throws(() => column.values.length, /RecordBatch was freed/);
    // The chunked column the table cached is not handed out again once it is freed.
    assert.throws(() => table.getChild('x'), /freed/);
  });

  test('a StreamReader.from reader dropped before its loop cancels its source', async () => {
    const controller = new AbortController();
    const reasons = [];
    const source = new ReadableStream({ cancel: (reason) => { reasons.push(reason); } });
    // In a function of its own, so that no variable of this one holds the reader.
    (() => { quiver.StreamReader.from(source, { signal: controller.signal }); })();
    await collect();
    assert.deepEqual(reasons.map((r) => r.message), ['a StreamReader was collected before its source was read']);
    // Its abort listener went with it: an abort now cancels nothing more.
    controller.abort();
    await collect();
    assert.equal(reasons.length, 1);
  });

  test('dropped tables and their columns are still freed once nothing holds them', async () => {
    // In a function of its own, so that no variable of this (suspended) one holds a table.
    const useAndDrop = (k) => {
      const table = quiver.tableFromIPC(stream(k));
      table.getChild('x').chunks[0].values.fill(0);
      table.getChild(1).get(0);
    };
    // A first round: what the module keeps once allocated (lazy statics, and the glue's
    // table of JS references, sized for the most held at once) is then in `before`.
    const round = () => { for (let k = 0; k < 20; k++) useAndDrop(k); };
    round();
    await collect();
    const before = quiver.memoryStats().liveBytes;
    round();
    assert.ok(quiver.memoryStats().liveBytes > before, 'the tables took memory');
    await collect();
    // Each table holds about 21 KB. What may stay is a few hundred bytes the module keeps
    // for itself (112 were seen), not a table's worth.
    const after = quiver.memoryStats().liveBytes;
    assert.ok(after - before < 4096, `${after - before} bytes still live`);
  });

  test('batchFromColumns copies a view of wasm memory right when allocating grows memory', () => {
    // A source larger than memory is now, so that allocating its copy must grow memory.
    const rows = Math.ceil(quiver.memoryStats().wasmMemoryBytes / 8);
    const source = quiver.batchFromColumns({ x: new Float64Array(rows).fill(1.5) });
    const view = source.column('x').values;
    const before = quiver.memoryStats().wasmMemoryBytes;
    const copy = quiver.batchFromColumns({ y: view });
    assert.ok(quiver.memoryStats().wasmMemoryBytes > before, 'memory grew');
    const values = copy.column('y').values;
    assert.equal(values.length, rows);
    assert.ok(values.every((v) => v === 1.5));
    copy.free();
    source.free();
  });

  test('batchFromColumns refuses a bigint that does not fit in an int64', () => {
    assert.throws(
      () => quiver.batchFromColumns({ big: [1n, 2n ** 63n] }),
      /batchFromColumns: column "big": entry 1 \(9223372036854775808\) does not fit in an int64/,
    );
    assert.deepEqual(quiver.batchFromColumns({ ok: [-(2n ** 63n), 2n ** 63n - 1n] }).column('ok').toArray({ typed: false }),
      [-(2n ** 63n), 2n ** 63n - 1n]);
  });

  test('a StreamReader reads a pushed view of wasm memory when the push grows memory', () => {
    // An IPC stream whose body is larger than memory is now, held in wasm memory as the
    // bytes of a binary column: pushing it allocates the body, which grows memory.
    const rows = Math.ceil(quiver.memoryStats().wasmMemoryBytes / 8);
    const ipc = arrow.tableToIPC(arrow.tableFromArrays({ x: new Float64Array(rows).fill(2.5) }), 'stream');
    const holder = quiver.fromArrowJS(arrow.tableFromArrays({
      b: arrow.vectorFromArray([ipc], new arrow.Binary()),
    }));
    const view = holder.getChild('b').chunks[0].values;
    assert.equal(view.length, ipc.length);
    const before = quiver.memoryStats().wasmMemoryBytes;
    const reader = new quiver.StreamReader();
    reader.push(view);
    reader.finish();
    assert.ok(quiver.memoryStats().wasmMemoryBytes > before, 'memory grew');
    const batch = reader.nextBatch();
    assert.equal(batch.numRows, rows);
    assert.ok(batch.column('x').values.every((v) => v === 2.5));
    assert.equal(reader.stats.bytesCopied, ipc.length);
    batch.free();
    reader.free();
    holder.free();
  });

  test('tableFromIPC and openFile read views of wasm memory when reading grows memory', async () => {
    // As above, for IPC files, and for a stream in two views (the first push grows memory
    // before the second view is reached): each case's body is as large as memory is.
    const cases = {
      'tableFromIPC(file)': ['file', (view) => quiver.tableFromIPC(view)],
      'tableFromIPC([stream halves])': ['stream', (view) => quiver.tableFromIPC([
        view.subarray(0, view.length >> 1), view.subarray(view.length >> 1),
      ])],
      // A second batch after the first grew memory: the file's view is made again.
      'openFile(file).batch(0), batch(1)': ['file', async (view) => {
        const opened = await quiver.openFile(view);
        try {
          const first = await opened.batch(0);
          const second = await opened.batch(1);
          assert.deepEqual(Array.from(second.column('x').values), [2.5, 2.5]);
          second.free();
          return first;
        } finally {
          opened.free();
        }
      }],
    };
    for (const [name, [format, read]] of Object.entries(cases)) {
      const rows = Math.ceil(quiver.memoryStats().wasmMemoryBytes / 8);
      const filled = (n) => arrow.tableFromArrays({ x: new Float64Array(n).fill(2.5) });
      // Two batches: the first as large as memory, the second of two rows.
      const ipc = arrow.tableToIPC(filled(rows).concat(filled(2)), format);
      const holder = quiver.fromArrowJS(arrow.tableFromArrays({
        b: arrow.vectorFromArray([ipc], new arrow.Binary()),
      }));
      const before = quiver.memoryStats().wasmMemoryBytes;
      const result = await read(holder.getChild('b').chunks[0].values);
      assert.ok(quiver.memoryStats().wasmMemoryBytes > before, `${name}: memory grew`);
      const x = result.getChild ? result.getChild('x') : result.column('x');
      assert.equal(x.length, result.getChild ? rows + 2 : rows, name);
      const values = x.chunks ? x.chunks.map((c) => c.values) : [x.values];
      assert.ok(values.every((v) => v.every((e) => e === 2.5)), `${name}: every value read back`);
      result.free();
      holder.free();
    }
  });

  test('writer chunks keep their Chunks alive (views over resizable memory, copies elsewhere)', async () => {
    const source = quiver.tableFromIPC(stream(0));
    const pieces = (() => {
      const writer = quiver.StreamWriter.forTable(source);
      const chunks = writer.write(source.batches[0]);
      return [chunks.chunk(0), ...chunks.toArray().slice(1), writer.finish().toUint8Array()];
    })();
    await collect();
    churn();
    const table = quiver.tableFromIPC(pieces);
    assert.deepEqual(table.getChild('x').toArray({ typed: false }), expectedX(0));
    table.free();
    source.free();
  });

  test('a child vector of a zero-copy toArrowJS result keeps its memory alive', async () => {
    // Room to reuse, so that nothing below grows memory (which would detach the views).
    quiver.batchFromColumns({ room: new Float64Array(1 << 20) }).free();
    const struct = new arrow.Struct([new arrow.Field('a', new arrow.Float64())]);
    const bytes = arrow.tableToIPC(arrow.tableFromArrays({
      st: arrow.vectorFromArray(expectedX(0).map((a) => ({ a })), struct),
    }), 'stream');
    const child = (() => {
      const table = quiver.tableFromIPC(bytes);
      const converted = quiver.toArrowJS(table, arrow, { zeroCopy: true });
      table.free();
      return converted.getChild('st').getChildAt(0);
    })();
    const grown = quiver.memoryStats().wasmMemoryBytes;
    await collect();
    churn();
    assert.equal(quiver.memoryStats().wasmMemoryBytes, grown, 'memory did not grow');
    assert.deepEqual([...child], expectedX(0));
  });

  test('buffers Arrow JS re-wraps, and the vectors over them, keep a zero-copy result\'s memory alive', async () => {
    quiver.batchFromColumns({ room: new Float64Array(1 << 20) }).free();
    const flags = expectedX(0).map((x) => x % 3 !== 0);
    const small = expectedX(0).map((x) => x % 251);
    const struct = new arrow.Struct([
      new arrow.Field('b', new arrow.Bool()),
      new arrow.Field('u', new arrow.Uint8()),
    ]);
    const bytes = arrow.tableToIPC(arrow.tableFromArrays({
      st: arrow.vectorFromArray(flags.map((b, i) => ({ b, u: small[i] })), struct),
      flag: arrow.vectorFromArray(flags, new arrow.Bool()),
      maybe: arrow.vectorFromArray(small.map((u) => (u % 2 ? u : null)), new arrow.Uint8()),
    }), 'stream');
    // Arrow JS makes new arrays over what it is given for these (a Uint8Array always).
    const [boolChild, uint8Child, flagBits, maybeBits] = (() => {
      const table = quiver.tableFromIPC(bytes);
      const converted = quiver.toArrowJS(table, arrow, { zeroCopy: true });
      table.free();
      const st = converted.getChild('st');
      const maybe = converted.getChild('maybe').data[0];
      return [st.getChildAt(0), st.getChildAt(1), converted.getChild('flag').data[0].values, maybe.nullBitmap];
    })();
    const grown = quiver.memoryStats().wasmMemoryBytes;
    await collect();
    churn();
    assert.equal(quiver.memoryStats().wasmMemoryBytes, grown, 'memory did not grow');
    assert.deepEqual([...boolChild], flags);
    assert.deepEqual([...uint8Child], small);
    const bit = (bits, i) => ((bits[i >> 3] >> (i & 7)) & 1) === 1;
    assert.deepEqual(flags.map((_, i) => bit(flagBits, i)), flags);
    assert.deepEqual(small.map((u, i) => bit(maybeBits, i)), small.map((u) => u % 2 === 1));
  });
}
