// Patches the wasm-bindgen web glue:
//
// 1. Its strings decode from a resizable buffer. The web entry switches wasm memory to a
//    resizable ArrayBuffer (toResizableBuffer) so that views survive memory growth, but
//    TextDecoder.decode throws on views of a resizable buffer ("must not be resizable").
//    The glue routes every string it reads from wasm memory through one function,
//    decodeText(bytes); this makes it copy such views first.
// 2. Its strings encode into a resizable buffer. A string passed from JS to Rust (an
//    option, a column name, batch metadata) is written into wasm memory by hand while it
//    is ASCII, then by TextEncoder.encodeInto, which throws on views of a resizable
//    buffer in Chromium; this makes it encode to a new array and copy that in.
// 3. A call before init() says so. Unpatched, `wasm` is undefined until init() and the
//    first call fails with "Cannot read properties of undefined (reading
//    '__wbindgen_malloc')". The patch starts `wasm` as a proxy that throws a clear Error
//    on any use, and makes the glue's "already initialised" checks compare against it.
//
// Each line must be found exactly as many times as expected, or the patch fails, and so
// the build, so a wasm-bindgen upgrade that changes the glue cannot slip through
// unpatched. tests/js/package.test.js checks the built glue; tests/js/web_init.test.js and
// tests/browser/smoke.test.js the effect.
//
// Usage: node pkg-scripts/patch-glue.mjs <glue.js>...
import { readFileSync, writeFileSync } from 'node:fs';

const NOT_INITIALISED =
  'quiver-arrow: the web build is not initialised; call `await init()` ' +
  '(or `initSync({ module })`) once before using anything else from it';

// [unpatched, patched, times expected]
const PATCHES = [
  [
    '    return cachedTextDecoder.decode(bytes);\n',
    '    return cachedTextDecoder.decode(bytes.buffer.resizable ? bytes.slice() : bytes);\n',
    1,
  ],
  [
    '        const ret = cachedTextEncoder.encodeInto(arg, view);\n',
    '        const ret = view.buffer.resizable ? encodeIntoCopy(arg, view) : cachedTextEncoder.encodeInto(arg, view);\n',
    1,
  ],
  [
    'const cachedTextEncoder = new TextEncoder();\n',
    'const cachedTextEncoder = new TextEncoder();\n' +
      'function encodeIntoCopy(arg, view) {\n' +
      '    const buf = cachedTextEncoder.encode(arg);\n' +
      '    view.set(buf);\n' +
      '    return { read: arg.length, written: buf.length };\n' +
      '}\n',
    1,
  ],
  [
    'let wasmModule, wasmInstance, wasm;\n',
    'const wasmUninitialised = new Proxy({}, {\n' +
      `    get() { throw new Error(${JSON.stringify(NOT_INITIALISED)}); },\n` +
      '});\n' +
      'let wasmModule, wasmInstance, wasm = wasmUninitialised;\n',
    1,
  ],
  // In initSync and in the async init.
  ['    if (wasm !== undefined) return wasm;\n', '    if (wasm !== wasmUninitialised) return wasm;\n', 2],
];

for (const file of process.argv.slice(2)) {
  let glue = readFileSync(file, 'utf8');
  for (const [unpatched, patched, times] of PATCHES) {
    const found = glue.split(unpatched).length - 1;
    if (found !== times) {
      console.error(`patch-glue: expected ${JSON.stringify(unpatched)} ${times}× in ${file}, found ${found}`);
      process.exit(1);
    }
    glue = glue.replaceAll(unpatched, patched);
  }
  writeFileSync(file, glue);
  console.log(`patch-glue: ${file}: strings decode from and encode into resizable buffers; calls before init() throw`);
}
