// The web build before and after init(): a call before it throws an Error that says to
// call init() (patch-glue.mjs), an init() whose URL serves no module says what came back
// (web/load-error.js) and leaves the choice of memory to the next call, and a second
// init() or initSync() is harmless. The web build runs in Node too when given the
// module's bytes or a URL, so this needs no browser.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import init, { initSync, memoryStats, StreamReader, tableFromIPC } from 'quiver-arrow/web';

const bytes = readFileSync(new URL(import.meta.resolve('quiver-arrow/quiver_bg.wasm')));
const NOT_INITIALISED = {
  name: 'Error',
  message:
    'quiver-arrow: the web build is not initialised; call `await init()` ' +
    '(or `initSync({ module })`) once before using anything else from it',
};

test('every kind of export used before init() throws an Error saying to call init()', () => {
  assert.throws(() => new StreamReader(), NOT_INITIALISED);
  assert.throws(() => tableFromIPC(new Uint8Array(8)), NOT_INITIALISED);
  assert.throws(() => memoryStats(), NOT_INITIALISED);
});

// A server like a dev server that pre-bundled the package: an HTML page for every path but
// /missing (404) and /module.wasm (the module).
async function devServer() {
  const server = createServer((request, response) => {
    if (request.url === '/missing') {
      response.writeHead(404).end('not found');
    } else if (request.url === '/module.wasm') {
      response.writeHead(200, { 'content-type': 'application/wasm' }).end(bytes);
    } else {
      response.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><p>app</p>');
    }
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, base: `http://127.0.0.1:${server.address().port}` };
}

test('init() from a URL that serves no module rejects with an Error saying what came back', async () => {
  const { server, base } = await devServer();
  try {
    const page = `${base}/node_modules/.vite/deps/quiver_bg.wasm`;
    const html = await init({ module_or_path: page }).then(() => null, (e) => e);
    assert.ok(html instanceof Error);
    assert.equal(
      html.message,
      `quiver-arrow: init() could not load the module from ${page}: the server sent ` +
        'text/html, not WebAssembly. A dev server that pre-bundles dependencies answers a ' +
        "file it does not have with its page: in Vite 7 and earlier add `optimizeDeps: { exclude: ['quiver-arrow'] }` " +
        'to vite.config.js, or pass init() the .wasm file: `init({ module_or_path })`',
    );
    assert.ok(html.cause instanceof WebAssembly.CompileError, String(html.cause));

    const missing = await init({ module_or_path: new URL(`${base}/missing`) }).then(() => null, (e) => e);
    assert.equal(
      missing?.message,
      `quiver-arrow: init() could not load the module from ${base}/missing: the server answered HTTP 404`,
    );
    assert.ok(missing.cause instanceof Error);

    // Still not initialised after both failures, and a URL that serves the module loads it.
    // The failed calls chose no kind of memory (both asked for the default, resizable):
    // this call still may.
    assert.throws(() => new StreamReader(), NOT_INITIALISED);
    const loaded = await init({ module_or_path: `${base}/module.wasm`, resizableMemory: false });
    await assert.rejects(init({ module_or_path: bytes, resizableMemory: true }), {
      message: 'quiver-arrow: init() already ran with resizableMemory: false; memory keeps the kind the first call chose',
    });
    assert.equal(await init({ module_or_path: bytes }), loaded);
  } finally {
    server.close();
  }
});

test('a second init() and an initSync() after it return the same instance', async () => {
  const [first, concurrent] = await Promise.all([
    init({ module_or_path: bytes }),
    init({ module_or_path: bytes }),
  ]);
  assert.equal(concurrent, first);
  assert.equal(await init({ module_or_path: bytes }), first);
  assert.equal(initSync({ module: bytes }), first);
  const reader = new StreamReader();
  assert.equal(reader.nextBatch(), undefined);
  reader.free();
  assert.equal(typeof memoryStats().liveBytes, 'number');
});
