// StreamReader.from, tableFromIPCAsync and the writer's TransformStream in Node 20, whose
// wasm memory is not resizable (tests/js/lib/streams.js), plus the sources only Node has:
// its own streams, and fetch from a local HTTP server.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { PassThrough, Readable } from 'node:stream';
import * as arrow from 'apache-arrow';
import * as quiver from 'quiver-arrow';
import { pieces, streamBytes, streamTests } from './lib/streams.js';

streamTests({ test, assert, quiver, arrow });

const bytes = streamBytes(arrow, 3, 200);

test('StreamReader.from reads a Node Readable, an AsyncIterable of Buffers', async () => {
  const reader = quiver.StreamReader.from(Readable.from(pieces(Buffer.from(bytes), 999)));
  let rows = 0;
  for await (const batch of reader) {
    rows += batch.numRows;
    batch.free();
  }
  assert.equal(rows, 600);
  assert.equal(reader.stats.bytesCopied, bytes.length);
  reader.free();
});

test('fetch from a server: OK bodies decode, a 404 names its status and URL', async () => {
  const server = createServer((req, res) => {
    if (req.url !== '/data.arrows') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
      return;
    }
    res.writeHead(200, { 'content-type': 'application/vnd.apache.arrow.stream' });
    // Written in pieces, so the body arrives in several chunks.
    for (const piece of pieces(bytes, 4096)) res.write(piece);
    res.end();
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${server.address().port}`;
  try {
    const table = await quiver.tableFromIPCAsync(await fetch(`${base}/data.arrows`));
    assert.equal(table.numRows, 600);
    table.free();
    const reader = quiver.StreamReader.from(await fetch(`${base}/data.arrows`));
    let batches = 0;
    for await (const batch of reader) {
      batches += 1;
      batch.free();
    }
    assert.equal(batches, 3);
    assert.equal(reader.stats.bytesCopied, bytes.length);
    reader.free();
    const missing = await fetch(`${base}/missing.arrows`);
    assert.throws(() => quiver.StreamReader.from(missing), {
      message: `StreamReader.from expects an OK Response, found HTTP 404 Not Found from ${base}/missing.arrows`,
    });
  } finally {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

test('a Node stream is destroyed when freed or aborted before its loop, or aborted in one', async () => {
  const destroyed = async (end) => {
    const source = new PassThrough();
    await end(source);
    await new Promise((resolve) => setImmediate(resolve));
    return source.destroyed;
  };
  assert.equal(await destroyed((s) => quiver.StreamReader.from(s).free()), true, 'freed before the loop');
  assert.equal(await destroyed((s) => assert.rejects(
    quiver.tableFromIPCAsync(s, { signal: AbortSignal.abort() }), { name: 'AbortError' },
  )), true, 'aborted before the loop');
  assert.equal(await destroyed(async (s) => {
    const controller = new AbortController();
    const reader = quiver.StreamReader.from(s, { signal: controller.signal });
    setTimeout(() => controller.abort(), 20);
    // No bytes ever come: the loop waits on a read when the signal aborts.
    await assert.rejects(async () => {
      for await (const batch of reader) batch.free();
    }, { name: 'AbortError' });
    reader.free();
  }), true, 'aborted while a read waits');
});
