// IPC files in the package: tableFromIPC reads the files pyarrow, pandas, polars and DuckDB write
// (tests/data/files.py) as pyarrow does; openFile reads one batch of a Blob without
// reading the rest; FileWriter and tableToIPC(..., { format: 'file' }) write files that
// pyarrow reads; malformed files get an Error that says what is wrong.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { FileWriter, StreamReader, messageSize, openFile, tableFromIPC, tableToIPC } from 'quiver-arrow';

const root = fileURLToPath(new URL('../..', import.meta.url));
const python = `${root}.venv/bin/python`;
// A directory of its own: node --test runs the test files in parallel.
const dir = mkdtempSync(join(tmpdir(), 'quiver-files-'));
execFileSync(python, [`${root}tests/data/files.py`, 'write', dir], { stdio: 'ignore' });
after(() => rmSync(dir, { recursive: true, force: true }));

const producers = readdirSync(dir).filter((f) => f.endsWith('.arrow')).map((f) => f.slice(0, -'.arrow'.length));
const rows = (table) => JSON.stringify(table.toArray(), (_, v) => (typeof v === 'bigint' ? `${v}n` : v));

/** A Blob that records the bytes each slice of it reads. */
function countingBlob(bytes) {
  const blob = new Blob([bytes]);
  const reads = [];
  return {
    reads,
    blob: new Proxy(blob, {
      get(target, key) {
        if (key !== 'slice') return Reflect.get(target, key);
        return (start, end) => {
          reads.push(end - start);
          return target.slice(start, end);
        };
      },
    }),
  };
}

test('files of pyarrow, pandas, polars and DuckDB decode as pyarrow reads them, whole or in segments', () => {
  for (const producer of ['pandas', 'polars_zstd', 'feather_lz4', 'duckdb', 'duckdb_arrow_1_5']) {
    assert.ok(producers.includes(producer), `files.py wrote no ${producer}`);
  }
  for (const name of producers) {
    const bytes = readFileSync(join(dir, `${name}.arrow`));
    const expected = tableFromIPC(readFileSync(join(dir, `${name}.expected.arrows`)));
    const whole = tableFromIPC(bytes);
    assert.equal(rows(whole), rows(expected), name);
    assert.deepEqual(whole.schema, expected.schema, name);
    // Segments that cut the magic, messages and footer anywhere.
    const segments = [bytes.subarray(0, 3), bytes.subarray(3, 1001), bytes.subarray(1001)];
    const split = tableFromIPC(segments);
    assert.equal(rows(split), rows(expected), `${name} in segments`);
  }
});

test('openFile reads one batch of a Blob without reading the rest', async () => {
  const source = tableFromIPC(readFileSync(join(dir, 'pyarrow_types.arrow')));
  // Fifty batches of the all-types table, written by FileWriter.
  const parts = [];
  const writer = FileWriter.forTable(source);
  for (let i = 0; i < 50; i++) {
    const chunks = writer.write(source.batches[0]);
    parts.push(...chunks.toArray().map((c) => c.slice()));
  }
  const end = writer.finish();
  parts.push(...end.toArray().map((c) => c.slice()));
  const bytes = new Uint8Array(await new Blob(parts).arrayBuffer());
  const { blob, reads } = countingBlob(bytes);

  const file = await openFile(blob);
  assert.equal(file.numBatches, 50);
  assert.deepEqual(file.schema, source.schema);
  const opened = reads.reduce((a, b) => a + b, 0);
  assert.equal(file.bytesRead, opened);
  assert.ok(opened < 4096, `opening read ${opened} bytes`);

  const batch = await file.batch(37);
  assert.equal(rows(batch), rows(source.batches[0]));
  const batchBytes = messageSize(source.batches[0]);
  const read = reads.reduce((a, b) => a + b, 0);
  assert.equal(file.bytesRead, read, 'bytesRead counts what was sliced');
  assert.ok(read < 2 * batchBytes, `batch 37 of ${bytes.length} bytes read ${read}, its message has ${batchBytes}`);
  // The next batch reads its own block only.
  const next = await file.batch(3);
  assert.equal(file.bytesRead - read, batchBytes);
  assert.equal(rows(next), rows(batch));

  // A Uint8Array source gives the same batches.
  const fromBytes = await openFile(bytes);
  const same = await fromBytes.batch(37);
  assert.equal(rows(same), rows(batch));
  await assert.rejects(fromBytes.batch(50), { message: 'batch 50 does not exist: the file has 50 batches' });
});

test('openFile reads a first batch that a dictionary delta follows, and refuses indexes that are not batches', async () => {
  // pyarrow wrote [a, b], batch 0, then the delta [c] and batch 1: batch 0 needs the
  // dictionary blocks on both sides of its own.
  const bytes = readFileSync(join(dir, 'pyarrow_dictionary_deltas.arrow'));
  const whole = tableFromIPC(bytes);
  for (const source of [bytes, new Blob([bytes])]) {
    const file = await openFile(source);
    assert.equal(rows(await file.batch(0)), rows(whole.batches[0]));
    assert.equal(rows(await file.batch(1)), rows(whole.batches[1]));
    for (const index of [1.5, Number.NaN, undefined, '1', -1, 2 ** 32 + 1]) {
      await assert.rejects(file.batch(index), {
        name: 'RangeError',
        message: `expected a batch index, a whole number from 0, found ${typeof index === 'string' ? '"1"' : String(index)}`,
      });
    }
  }
});

test('FileWriter and tableToIPC write files that pyarrow and Quiver read back', () => {
  for (const name of ['pyarrow_types', 'pyarrow_dictionary_deltas', 'pandas']) {
    const table = tableFromIPC(readFileSync(join(dir, `${name}.arrow`)));
    for (const compression of [null, 'lz4', 'zstd']) {
      const file = tableToIPC(table, { format: 'file', compression, maxChunkBytes: 512 });
      const back = tableFromIPC(file);
      assert.equal(rows(back), rows(table), `${name} ${compression}`);
      // The chunked writer gives the same bytes, in chunks of at most 512 bytes.
      const writer = FileWriter.forTable(table, { compression, maxChunkBytes: 512 });
      const chunks = [];
      for (const batch of table.batches) {
        const written = writer.write(batch);
        chunks.push(...written.toArray().map((c) => c.slice()));
      }
      const end = writer.finish();
      chunks.push(...end.toArray().map((c) => c.slice()));
      assert.ok(chunks.every((c) => c.length <= 512));
      assert.deepEqual(Buffer.concat(chunks), Buffer.from(file));
      assert.equal(writer.stats.bytesWritten, file.length);
      writeFileSync(join(dir, `${name}.quiver.${compression ?? 'none'}.arrow`), file);
    }
  }
  const report = execFileSync(python, [`${root}tests/data/files.py`, 'check', dir], { encoding: 'utf8' });
  assert.match(report, /^checked 9 files, 0 failed$/m);
});

test('malformed files get an Error that says what is wrong, and the module goes on', async () => {
  const good = readFileSync(join(dir, 'pyarrow_types.arrow'));
  assert.throws(() => tableFromIPC(good.subarray(0, good.length - 3)), {
    message: `invalid Arrow IPC: expected an IPC file to end with the magic ARROW1, found bytes [${good.subarray(-9, -3).join(', ')}]: the file is truncated or not an IPC file`,
  });
  const footerLength = good.readInt32LE(good.length - 10);
  const footer = good.subarray(good.length - 10 - footerLength);
  // The first 4000 bytes and the footer: blocks now end past the file's messages.
  const cut = Buffer.concat([good.subarray(0, 4000), footer]);
  assert.throws(() => tableFromIPC(cut), { message: /^invalid Arrow IPC: record batch block 0 spans bytes 2\d+\.\.\d+, outside the file's messages \(bytes 8\.\.4000\)$/ });
  await assert.rejects(openFile(new Blob([cut])), { message: /record batch block 0 spans bytes/ });
  await assert.rejects(openFile(new Blob([good.subarray(0, 5)])), {
    message: "invalid Arrow IPC: expected an IPC file of at least 18 bytes (its magic, and the footer's length and magic), found 5: the file is truncated",
  });
  await assert.rejects(openFile('file.arrow'), { message: 'openFile expects a Uint8Array or a Blob (a File is one)' });
  const reader = new StreamReader();
  assert.throws(() => reader.push(good), {
    message: 'invalid Arrow IPC: expected a message, found the magic ARROW1 of an IPC file: read files with tableFromIPC, tableFromIPCAsync or openFile',
  });
  reader.free();
  const table = tableFromIPC(good);
  assert.equal(table.numRows, 60);
});
