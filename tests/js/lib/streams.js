// StreamReader.from, tableFromIPCAsync and StreamWriter.transformStream over the sources
// every runtime has (ReadableStream, Response, Blob, async generators), shared by Node
// (tests/js/streams.test.js) and each browser engine (tests/browser/streams.test.js).
import { concat } from './writer.js';

/** An IPC stream of `batches` batches of `rows` rows: int64 `id`, float64 `x`. */
export function streamBytes(arrow, batches, rows) {
  const batch = (b) => arrow.tableFromArrays({
    id: BigInt64Array.from({ length: rows }, (_, i) => BigInt(b * rows + i)),
    x: Float64Array.from({ length: rows }, (_, i) => i / 4),
  });
  let table = batch(0);
  for (let b = 1; b < batches; b++) table = table.concat(batch(b));
  return arrow.tableToIPC(table, 'stream');
}

/** `bytes` cut into views of `size` bytes (the last one shorter). */
export function pieces(bytes, size) {
  const out = [];
  for (let at = 0; at < bytes.length; at += size) out.push(bytes.subarray(at, at + size));
  return out;
}

/**
 * A ReadableStream that hands out `chunks` one per pull. `log` records each pull and
 * cancel; a chunk that is a Promise is awaited first (one that never settles holds the
 * stream there).
 */
export function streamOf(chunks, log = []) {
  let i = 0;
  return new ReadableStream({
    async pull(controller) {
      if (i === chunks.length) {
        controller.close();
        return;
      }
      log.push(`chunk ${i}`);
      controller.enqueue(await chunks[i++]);
    },
    cancel(reason) {
      log.push(`cancel ${reason}`);
    },
  }, { highWaterMark: 0 });
}

/** The `id` values of `batches` (then freed), and how many batches there were. */
function ids(batches) {
  const out = batches.flatMap((b) => b.column('id').toArray({ typed: false }));
  for (const b of batches) b.free();
  return out;
}

async function collect(reader) {
  const batches = [];
  for await (const batch of reader) batches.push(batch);
  return batches;
}

const never = new Promise(() => {});

export function streamTests({ test, assert, quiver, arrow }) {
  const { StreamReader, tableFromIPC, tableFromIPCAsync } = quiver;
  const bytes = streamBytes(arrow, 4, 300);
  const want = (() => {
    const table = tableFromIPC(bytes);
    const values = table.getChild('id').toArray({ typed: false });
    table.free();
    return values;
  })();
  // The same batches as an IPC file.
  const file = (() => {
    const table = tableFromIPC(bytes);
    const out = quiver.tableToIPC(table, { format: 'file' });
    table.free();
    return out;
  })();

  const sources = {
    'a ReadableStream': (chunks) => streamOf(chunks),
    'a Response': (chunks) => new Response(streamOf(chunks)),
    'a Blob': (chunks) => new Blob(chunks),
    'an async generator': (chunks) => (async function* generate() { yield* chunks; })(),
  };

  for (const [kind, make] of Object.entries(sources)) {
    test(`StreamReader.from reads ${kind}, copying each byte once`, async () => {
      const reader = StreamReader.from(make(pieces(bytes, 1000)));
      assert.deepEqual(ids(await collect(reader)), want);
      assert.equal(reader.ended, true);
      const { bytesPushed, bytesCopied, batches } = reader.stats;
      assert.deepEqual({ bytesPushed, bytesCopied, batches }, { bytesPushed: bytes.length, bytesCopied: bytes.length, batches: 4 });
      reader.free();
    });

    test(`tableFromIPCAsync reads ${kind}`, async () => {
      const table = await tableFromIPCAsync(make(pieces(bytes, 777)));
      assert.equal(table.numRows, 1200);
      assert.deepEqual(table.getChild('id').toArray({ typed: false }), want);
      table.free();
    });

    test(`tableFromIPCAsync reads an IPC file from ${kind}, its magic split over segments`, async () => {
      // Pieces of 4 bytes first, so the magic ARROW1 spans two of them.
      const table = await tableFromIPCAsync(make([...pieces(file.subarray(0, 8), 4), ...pieces(file.subarray(8), 999)]));
      assert.equal(table.numRows, 1200);
      assert.deepEqual(table.getChild('id').toArray({ typed: false }), want);
      table.free();
    });
  }

  test('tableFromIPCAsync refuses a malformed file, honours its signal and limits, and the module goes on', async () => {
    const log = [];
    await assert.rejects(tableFromIPCAsync(streamOf([file.subarray(0, 100)], log)),
      { message: /^invalid Arrow IPC: expected an IPC file to end with the magic ARROW1, found bytes \[.*\]: the file is truncated or not an IPC file$/ });
    const controller = new AbortController();
    const reason = new Error('stop');
    const pending = tableFromIPCAsync(streamOf([file.subarray(0, 10), never], log), { signal: controller.signal });
    setTimeout(() => controller.abort(reason), 10);
    await assert.rejects(pending, (error) => error === reason);
    assert.equal(log.at(-1), 'cancel Error: stop');
    await assert.rejects(tableFromIPCAsync(new Blob([file]), { maxMessageBytes: 64 }), { message: /^file footer of \d+ bytes exceeds maxMessageBytes = 64 bytes$/ });
    const table = await tableFromIPCAsync(new Blob([file]));
    assert.equal(table.numRows, 1200);
    table.free();
  });

  test('intoTable takes the batches not yet taken, and consumes the reader', () => {
    const reader = new StreamReader();
    for (const piece of pieces(bytes, 100)) reader.push(piece);
    const first = reader.nextBatch();
    const table = reader.intoTable();
    assert.deepEqual([first.numRows, table.numRows, table.batches.length], [300, 900, 3]);
    assert.deepEqual([...first.column('id').toArray({ typed: false }), ...table.getChild('id').toArray({ typed: false })], want);
    assert.throws(() => reader.stats, /was freed/);
    const cut = new StreamReader();
    cut.push(bytes.subarray(0, bytes.length - 20));
    assert.throws(() => cut.intoTable(), { message: /^stream ended inside a message: message body needs \d+ bytes, got \d+$/ });
    assert.throws(() => cut.stats, /was freed/);
    first.free();
    table.free();
  });

  test('each chunk is pushed as it arrives, the same array, before the next is read', async () => {
    const chunks = pieces(bytes, 1000);
    const log = [];
    const reader = StreamReader.from(streamOf(chunks, log));
    const pushed = [];
    reader.push = (segment) => {
      pushed.push(segment);
      StreamReader.prototype.push.call(reader, segment);
    };
    for await (const batch of reader) {
      log.push(`batch after ${pushed.length} chunks`);
      batch.free();
    }
    assert.equal(pushed.length, chunks.length);
    pushed.forEach((segment, i) => assert.ok(segment === chunks[i], `push ${i} got the source's chunk ${i} itself`));
    // A batch is handed out as soon as the chunk that completes it was pushed, before the
    // next chunk is read: never after the whole body.
    const first = log.findIndex((line) => line.startsWith('batch'));
    assert.ok(first > 0 && first < log.length - 4, `a batch before the body ended: ${log.join(', ')}`);
    log.forEach((line, i) => {
      if (line.startsWith('batch')) assert.equal(line, `batch after ${log.slice(0, i).filter((l) => l.startsWith('chunk')).length} chunks`);
    });
    reader.free();
  });

  test('breaking out of for await cancels a ReadableStream source', async () => {
    const log = [];
    const reader = StreamReader.from(streamOf(pieces(bytes, 500), log));
    for await (const batch of reader) {
      batch.free();
      break;
    }
    assert.equal(log.at(-1), 'cancel undefined');
    assert.ok(log.length < pieces(bytes, 500).length, 'stopped reading');
    reader.free();
  });

  test('breaking out of for await returns an async iterator source', async () => {
    let closed = false;
    async function* generate() {
      try {
        yield* pieces(bytes, 500);
      } finally {
        closed = true;
      }
    }
    const reader = StreamReader.from(generate());
    for await (const batch of reader) {
      batch.free();
      break;
    }
    assert.equal(closed, true);
    reader.free();
  });

  test('abort cancels a pending read and rejects with the reason', async () => {
    const log = [];
    const [head] = pieces(bytes, bytes.length - 100);
    const controller = new AbortController();
    const reader = StreamReader.from(streamOf([head, never], log), { signal: controller.signal });
    const seen = [];
    const reason = new Error('user left the page');
    await assert.rejects(async () => {
      for await (const batch of reader) {
        seen.push(batch.numRows);
        batch.free();
        // The fourth batch is cut short: the next read waits for a chunk that never comes.
        if (seen.length === 3) setTimeout(() => controller.abort(reason), 10);
      }
    }, (error) => error === reason);
    assert.deepEqual(seen, [300, 300, 300]);
    assert.equal(log.at(-1), 'cancel Error: user left the page');
    reader.free();
  });

  test('abort stops an async iterator that never answers, and calls its return()', async () => {
    let returned = false;
    const iterable = {
      [Symbol.asyncIterator]: () => ({
        next: () => never,
        return: async () => {
          returned = true;
          return { done: true };
        },
      }),
    };
    const controller = new AbortController();
    const reader = StreamReader.from(iterable, { signal: controller.signal });
    setTimeout(() => controller.abort(), 10);
    await assert.rejects(collect(reader), { name: 'AbortError' });
    reader.free();
    await null;
    assert.equal(returned, true);
  });

  test('abort cancels the source at once and hands out no batch already decoded', async () => {
    const controller = new AbortController();
    const log = [];
    // One chunk holds the whole stream: four batches decoded by one push.
    const reader = StreamReader.from(streamOf([bytes], log), { signal: controller.signal });
    const seen = [];
    await assert.rejects(async () => {
      for await (const batch of reader) {
        seen.push(batch.numRows);
        batch.free();
        controller.abort();
        // The source is cancelled at once, not when the loop next asks for a batch.
        await new Promise((resolve) => setTimeout(resolve, 0));
        assert.equal(log.at(-1), `cancel ${controller.signal.reason}`);
      }
    }, { name: 'AbortError' });
    assert.deepEqual(seen, [300]);
    // Each engine words the default reason (a DOMException) its own way.
    assert.equal(log.at(-1), `cancel ${controller.signal.reason}`);
    reader.free();
  });

  test('a signal aborted before the loop cancels the source unread', async () => {
    const log = [];
    const reason = new Error('too late');
    const reader = StreamReader.from(streamOf([bytes], log), { signal: AbortSignal.abort(reason) });
    await assert.rejects(collect(reader), (error) => error === reason);
    await null;
    assert.deepEqual(log, ['cancel Error: too late']);
    reader.free();
  });

  test('a signal aborted after from() and before the loop cancels the source at once', async () => {
    const log = [];
    const controller = new AbortController();
    const reader = StreamReader.from(streamOf([bytes], log), { signal: controller.signal });
    const reason = new Error('navigated away');
    controller.abort(reason);
    await null;
    assert.deepEqual(log, ['cancel Error: navigated away']);
    await assert.rejects(collect(reader), (error) => error === reason);
    reader.free();
  });

  test('a reader freed, disposed or made a table before its loop cancels its source', async () => {
    for (const [how, end] of [
      ['free', (reader) => reader.free()],
      // Where the engine has Symbol.dispose, `using` calls it: it must be the cancelling free.
      ['free', (reader) => {
        if (!Symbol.dispose) return reader.free();
        assert.equal(reader[Symbol.dispose], StreamReader.prototype.free);
        return reader[Symbol.dispose]();
      }],
      ['intoTable', (reader) => assert.throws(() => reader.intoTable(), { message: /before its schema message/ })],
    ]) {
      const log = [];
      const controller = new AbortController();
      const reader = StreamReader.from(streamOf([bytes], log), { signal: controller.signal });
      end(reader);
      await null;
      assert.deepEqual(log, [`cancel Error: StreamReader.${how}() was called before its source was read`]);
      // Its abort listener went with it.
      controller.abort();
      await null;
      assert.equal(log.length, 1);
    }
  });

  test('a reader freed mid-loop, its iterator left without return(), cancels its source', async () => {
    const log = [];
    const controller = new AbortController();
    const reader = StreamReader.from(streamOf(pieces(bytes, 500), log), { signal: controller.signal });
    const batches = reader[Symbol.asyncIterator]();
    (await batches.next()).value.free();
    reader.free();
    await null;
    assert.equal(log.at(-1), 'cancel Error: StreamReader.free() was called while its source was read');
    assert.ok(log.length < pieces(bytes, 500).length, 'stopped reading');
    // The loop's abort listener went with it.
    const cancels = log.length;
    controller.abort();
    await null;
    assert.equal(log.length, cancels);
    assert.equal((await batches.next()).done, true);
  });

  test('an async iterator whose next() answers without a promise is read, with a signal too', async () => {
    const iterable = (chunks) => ({
      [Symbol.asyncIterator]() {
        let i = 0;
        return { next: () => (i < chunks.length ? { done: false, value: chunks[i++] } : { done: true }) };
      },
    });
    for (const options of [undefined, { signal: new AbortController().signal }]) {
      const table = await tableFromIPCAsync(iterable(pieces(bytes, 700)), options);
      assert.equal(table.numRows, 1200);
      table.free();
    }
  });

  test('a signal without throwIfAborted() or a reason (a polyfill) still aborts', async () => {
    const listeners = new Set();
    const signal = {
      aborted: false,
      addEventListener: (type, listener) => listeners.add(listener),
      removeEventListener: (type, listener) => listeners.delete(listener),
    };
    const log = [];
    const pending = tableFromIPCAsync(streamOf([bytes.subarray(0, 1000), never], log), { signal });
    await new Promise((resolve) => setTimeout(resolve, 10));
    signal.aborted = true;
    for (const listener of listeners) listener();
    await assert.rejects(pending, { name: 'AbortError' });
    assert.match(log.at(-1), /^cancel AbortError/);
  });

  test('bad options with a Response that is not OK name the status, and cancel the body', async () => {
    const log = [];
    const missing = new Response(streamOf([bytes], log), { status: 404 });
    assert.throws(() => StreamReader.from(missing, { maxMessageBytes: -1 }), { message: /expects an OK Response, found HTTP 404/ });
    await null;
    assert.deepEqual(log.length, 1);
    const ok = new Response(streamOf([bytes], log));
    assert.throws(() => StreamReader.from(ok, { maxMessageBytes: -1 }), { message: /maxMessageBytes/ });
    await null;
    assert.match(log.at(-1), /^cancel Error: .*maxMessageBytes/);
  });

  test('tableFromIPCAsync rejects with the reason of its signal', async () => {
    const reason = new Error('stop');
    const controller = new AbortController();
    const pending = tableFromIPCAsync(streamOf([bytes.subarray(0, 1000), never]), { signal: controller.signal });
    setTimeout(() => controller.abort(reason), 10);
    await assert.rejects(pending, (error) => error === reason);
  });

  test('a body that ends inside a message gives the truncation error', async () => {
    const cut = bytes.subarray(0, bytes.length - 100);
    const reader = StreamReader.from(new Response(streamOf(pieces(cut, 1000))));
    const batches = [];
    await assert.rejects(async () => {
      for await (const batch of reader) batches.push(batch);
    }, { message: /^stream ended inside a message: message body needs \d+ bytes, got \d+$/ });
    assert.equal(batches.length, 3);
    ids(batches);
    reader.free();
    await assert.rejects(tableFromIPCAsync(new Blob([cut])),
      { message: /^stream ended inside a message: message body needs \d+ bytes, got \d+$/ });
    await assert.rejects(tableFromIPCAsync(new Blob([])), { message: 'invalid Arrow IPC: stream ended before its schema message' });
  });

  test('a Response that is not OK throws at once, naming its status', async () => {
    let cancelled = false;
    const body = new ReadableStream({ cancel: () => { cancelled = true; } });
    const response = new Response(body, { status: 404, statusText: 'Not Found' });
    assert.throws(() => StreamReader.from(response), {
      message: 'StreamReader.from expects an OK Response, found HTTP 404 Not Found from a Response with no URL',
    });
    await null;
    assert.equal(cancelled, true, 'its body is cancelled');
    await assert.rejects(tableFromIPCAsync(new Response('oops', { status: 500 })), {
      message: 'tableFromIPCAsync expects an OK Response, found HTTP 500 from a Response with no URL',
    });
  });

  test('what is not a source, or not bytes, gets a clear error', async () => {
    assert.throws(() => StreamReader.from(bytes), {
      message: 'StreamReader.from expects a Response, a ReadableStream, an AsyncIterable of Uint8Array or a Blob, found Uint8Array',
    });
    assert.throws(() => StreamReader.from(streamOf([bytes]), { signal: 5 }), {
      message: 'StreamReader.from option signal must be an AbortSignal, found 5',
    });
    assert.throws(() => StreamReader.from(streamOf([]), { maxMessageBytes: -1, signal: undefined }),
      { message: 'maxMessageBytes must be a positive whole number of bytes, found -1' });
    const locked = streamOf([bytes]);
    locked.getReader();
    assert.throws(() => StreamReader.from(locked), {
      message: 'StreamReader.from expects an unlocked ReadableStream, found one another reader holds',
    });
    const log = [];
    const text = StreamReader.from(streamOf(['not bytes'], log));
    await assert.rejects(collect(text), { message: 'StreamReader.from expects chunks of Uint8Array, found a string' });
    assert.equal(log.at(-1), 'cancel undefined');
    text.free();
    const garbage = new Uint8Array(64).fill(0xff);
    const bad = StreamReader.from(streamOf([garbage, bytes], log));
    await assert.rejects(collect(bad), { message: 'invalid Arrow IPC: expected a non-negative metadata length, found -1' });
    assert.equal(log.at(-1), 'cancel undefined', 'a malformed stream cancels its source');
    bad.free();
    // push takes a Uint8Array: an ArrayBuffer (a WebSocket's binaryType 'arraybuffer')
    // or another view would read as no bytes, or as bytes of the wrong length.
    const reader = new StreamReader();
    const refused = (found) => ({
      message: `StreamReader.push expects a Uint8Array, found ${found}: wrap an ArrayBuffer in new Uint8Array(buffer)`,
    });
    assert.throws(() => reader.push(bytes.slice().buffer), refused('ArrayBuffer'));
    assert.throws(() => reader.push(new DataView(bytes.buffer)), refused('DataView'));
    assert.throws(() => reader.push(new Uint16Array(4)), refused('Uint16Array'));
    assert.throws(() => reader.push(null), refused('null'));
    assert.throws(() => reader.push('bytes'), refused('string'));
    reader.push(bytes);
    assert.equal(reader.stats.bytesPushed, bytes.length, 'the reader goes on');
    reader.free();
  });

  test('a source is read once; a reader made with new StreamReader() has none', async () => {
    const reader = StreamReader.from(new Blob([bytes]));
    ids(await collect(reader));
    const message = 'for await reads a StreamReader made by StreamReader.from(source), once; this one has no source left to read (push bytes and use for...of instead)';
    await assert.rejects(collect(reader), { message });
    reader.free();
    const plain = new StreamReader();
    await assert.rejects(collect(plain), { message });
    plain.free();
  });

  test('a Response with no body is an empty stream', async () => {
    await assert.rejects(tableFromIPCAsync(new Response(null, { status: 204 })),
      { message: 'invalid Arrow IPC: stream ended before its schema message' });
  });

  writerStreamTests({ test, assert, quiver, arrow }, bytes);
}

/** The bytes of `readable` in the chunks it gave. */
async function chunksOf(readable) {
  const out = [];
  const reader = readable.getReader();
  for (let r = await reader.read(); !r.done; r = await reader.read()) out.push(r.value);
  return out;
}

function writerStreamTests({ test, assert, quiver, arrow }, bytes) {
  const { StreamReader, StreamWriter, tableFromIPC, memoryStats } = quiver;

  /** The chunk lengths a StreamWriter gives for `table`'s batches, and its stream's bytes. */
  function expected(table, options) {
    const writer = StreamWriter.forTable(table, options);
    const lengths = [];
    const parts = [];
    for (const batch of table.batches) {
      const chunks = writer.write(batch);
      lengths.push(...chunks.lengths());
      parts.push(chunks.toUint8Array());
      chunks.free();
      batch.free();
    }
    const end = writer.finish();
    lengths.push(...end.lengths());
    parts.push(end.toUint8Array());
    end.free();
    writer.free();
    return { lengths, bytes: concat(parts) };
  }

  for (const options of [undefined, { maxChunkBytes: 500 }, { compression: 'zstd' }]) {
    test(`StreamWriter.transformStream(${JSON.stringify(options)}) gives the writer's chunks, each in a buffer of its own`, async () => {
      const table = tableFromIPC(bytes);
      const want = expected(table, options);
      const encoder = StreamWriter.transformStream(options);
      const source = new ReadableStream({
        start(controller) {
          for (const batch of table.batches) controller.enqueue(batch);
          controller.close();
        },
      });
      const chunks = await chunksOf(source.pipeThrough(encoder));
      assert.deepEqual(chunks.map((c) => c.length), want.lengths);
      for (const chunk of chunks) {
        assert.ok(chunk instanceof Uint8Array);
        assert.equal(chunk.buffer.byteLength, chunk.byteLength, 'an ArrayBuffer of its own');
        assert.equal(chunk.buffer.resizable, false);
      }
      // Valid after the writer moved on and memory grew.
      const big = tableFromIPC(arrow.tableToIPC(arrow.tableFromArrays({ x: new BigInt64Array(8 << 20).fill(7n) }), 'stream'));
      assert.deepEqual(new Uint8Array(await new Blob(chunks).arrayBuffer()), want.bytes);
      big.free();
      table.free();
    });
  }

  test('the stream takes each batch and frees it, and frees its writer when closed', async () => {
    const table = tableFromIPC(bytes);
    const write = async () => {
      const batches = table.batches;
      const encoder = StreamWriter.transformStream();
      const done = chunksOf(encoder.readable);
      const writer = encoder.writable.getWriter();
      for (const batch of batches) await writer.write(batch);
      await writer.close();
      await done;
      return batches;
    };
    // A first run, and a first memoryStats(), may keep a little for good (the table's
    // cache of its batches, what the module grows once), so the second run is measured.
    await write();
    memoryStats();
    const baseline = memoryStats().liveBytes;
    const batches = await write();
    assert.equal(memoryStats().liveBytes, baseline);
    for (const batch of batches) assert.throws(() => batch.numRows, /was freed/);
    table.free();
  });

  test('batches still queued when the writer stream fails are freed, not left to the collector', async () => {
    const table = tableFromIPC(bytes);
    const [first, ...rest] = table.batches;
    const other = quiver.batchFromColumns({ name: ['a'] });
    const encoder = StreamWriter.transformStream();
    const writer = encoder.writable.getWriter();
    // Queued before anything reads: the second write fails, the rest wait behind it.
    const writes = [first, other, ...rest].map((batch) => writer.write(batch));
    const mismatch = "the writer's schema has 2 columns, the batch has 1";
    await assert.rejects(chunksOf(encoder.readable), { message: mismatch });
    await Promise.allSettled(writes);
    for (const batch of [first, other, ...rest]) assert.throws(() => batch.numRows, /was freed/);
    // A write refused because the stream has ended leaves the batch its caller's.
    const late = table.batches[0];
    await assert.rejects(writer.write(late), { message: mismatch });
    assert.ok(late.numRows > 0);
    late.free();
    table.free();
  });

  test('a write refused after close() leaves its batch the caller\'s', async () => {
    const table = tableFromIPC(bytes);
    const [first, second] = table.batches;
    const encoder = StreamWriter.transformStream();
    const writer = encoder.writable.getWriter();
    const written = writer.write(first);
    const closed = writer.close();
    // The stream sees this batch (its strategy's size()) before it refuses the write.
    await assert.rejects(writer.write(second));
    await Promise.all([written, closed, chunksOf(encoder.readable)]);
    assert.throws(() => first.numRows, /was freed/);
    assert.ok(second.numRows > 0);
    second.free();
    table.free();
  });

  test('batches still queued when the writer stream is cancelled are freed where the runtime says so', async () => {
    // Node 20 calls a transformer's cancel(); Chromium 156, Firefox 153 and WebKit 2.50
    // do not, and leave the queued batches to the collector (README, Streams).
    let told = false;
    await new TransformStream({ cancel: () => { told = true; } }).readable.cancel();
    const table = tableFromIPC(bytes);
    const batches = table.batches;
    const encoder = StreamWriter.transformStream();
    const writer = encoder.writable.getWriter();
    // Nothing reads the readable side, so the writes wait in the writable side's queue.
    const writes = batches.map((batch) => writer.write(batch));
    const reason = new Error('user cancelled');
    await encoder.readable.cancel(reason);
    for (const write of writes) await assert.rejects(write, (error) => error === reason);
    for (const batch of batches) {
      if (told) assert.throws(() => batch.numRows, /was freed/);
      else batch.free();
    }
    table.free();
  });

  test('piped into Response and back through StreamReader.from, the batches read back equal', async () => {
    const table = tableFromIPC(bytes);
    const batches = table.batches;
    const source = new ReadableStream({
      pull(controller) {
        if (batches.length === 0) controller.close();
        else controller.enqueue(batches.shift());
      },
    });
    // A Response refuses chunks over a resizable buffer: this proves they are not.
    const reader = StreamReader.from(new Response(source.pipeThrough(StreamWriter.transformStream({ compression: 'lz4' }))));
    const got = [];
    for await (const batch of reader) {
      got.push(...batch.column('id').toArray({ typed: false }));
      batch.free();
    }
    assert.deepEqual(got, table.getChild('id').toArray({ typed: false }));
    reader.free();
    table.free();
  });

  test('the writer stream errors clearly on what it cannot write, and takes even that batch', async () => {
    const notBatch = 'StreamWriter.transformStream expects Quiver RecordBatches, found Object (fromArrowJS converts apache-arrow ones)';
    const encoder = StreamWriter.transformStream();
    const read = chunksOf(encoder.readable);
    await assert.rejects(encoder.writable.getWriter().write({ numRows: 1 }), { message: notBatch });
    await assert.rejects(read, { message: notBatch });

    const noBatch = 'StreamWriter.transformStream was closed before any batch: the stream takes its schema from the first batch';
    const empty = StreamWriter.transformStream();
    const emptyRead = chunksOf(empty.readable);
    await assert.rejects(empty.writable.close(), { message: noBatch });
    await assert.rejects(emptyRead, { message: noBatch });

    const table = tableFromIPC(bytes);
    const other = quiver.batchFromColumns({ name: ['a'] });
    const mixed = StreamWriter.transformStream();
    const mixedRead = chunksOf(mixed.readable);
    const writer = mixed.writable.getWriter();
    await writer.write(table.batches[0]);
    const mismatch = "the writer's schema has 2 columns, the batch has 1";
    await assert.rejects(writer.write(other), { message: mismatch });
    await assert.rejects(mixedRead, { message: mismatch });
    assert.throws(() => other.numRows, /was freed/);
    table.free();
  });
}

