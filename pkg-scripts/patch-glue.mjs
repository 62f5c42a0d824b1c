// Patches the wasm-bindgen glue. Both targets:
//
// 1. Using a freed object says so. Unpatched, a method of a freed RecordBatch, Table,
//    reader, ... (or the object passed to a function) fails with wasm-bindgen's "null
//    pointer passed to rust", and a second free() (or free() then the end of a `using`
//    block) throws the same. The patch makes free() idempotent, as disposal should be,
//    and turns that message into one that names the cause.
//
// The web target also:
//
// 2. Its strings decode from a resizable buffer. The web entry switches wasm memory to a
//    resizable ArrayBuffer (toResizableBuffer) so that views survive memory growth, but
//    TextDecoder.decode throws on views of a resizable buffer ("must not be resizable").
//    The glue routes every string it reads from wasm memory through one function,
//    decodeText(bytes); this makes it copy such views first.
// 3. Its strings encode into a resizable buffer. A string passed from JS to Rust (an
//    option, a column name, batch metadata) is written into wasm memory by hand while it
//    is ASCII, then by TextEncoder.encodeInto, which throws on views of a resizable
//    buffer in Chromium; this makes it encode to a new array and copy that in.
// 4. A call before init() says so. Unpatched, `wasm` is undefined until init() and the
//    first call fails with "Cannot read properties of undefined (reading
//    '__wbindgen_malloc')". The patch starts `wasm` as a proxy that throws a clear Error
//    on any use, and makes the glue's "already initialised" checks compare against it.
//
// Node 20 has no toResizableBuffer, and its glue initialises on import, so 2-4 are for
// the web glue only.
//
// Each line must be found exactly as many times as expected, or the patch fails, and so
// the build, so a wasm-bindgen upgrade that changes the glue cannot slip through
// unpatched. tests/js/package.test.js checks the built glue; tests/js/web_init.test.js,
// tests/js/memory.test.js and tests/browser/smoke.test.js the effect.
//
// Usage: node pkg-scripts/patch-glue.mjs web|nodejs <glue.js>...
import { readFileSync, writeFileSync } from 'node:fs';

const NOT_INITIALISED =
  'quiver-arrow: the web build is not initialised; call `await init()` ' +
  '(or `initSync({ module })`) once before using anything else from it';

const USED_AFTER_FREE =
  'quiver-arrow: this object was freed (by free() or the end of its `using` block) ' +
  'and cannot be used any more';

// Both targets. [unpatched, patched, times expected]; a RegExp is replaced wherever it
// matches, and must match once per class the glue defines.
const COMMON = [
  [
    '            throw new Error(getStringFromWasm0(arg0, arg1));\n',
    '            const message = getStringFromWasm0(arg0, arg1);\n' +
      `            throw new Error(message === 'null pointer passed to rust' ? ${JSON.stringify(USED_AFTER_FREE)} : message);\n`,
    1,
  ],
  [
    /(        const ptr = this\.__destroy_into_raw\(\);\n)(        wasm\.__wbg_\w+_free\(ptr, 0\);\n)/g,
    '$1        if (ptr === 0) return;\n$2',
    'classes',
  ],
];

// The web target only.
const WEB = [
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

const [target, ...files] = process.argv.slice(2);
if (target !== 'web' && target !== 'nodejs') {
  console.error('usage: node pkg-scripts/patch-glue.mjs web|nodejs <glue.js>...');
  process.exit(2);
}
const patches = target === 'web' ? [...COMMON, ...WEB] : COMMON;

for (const file of files) {
  let glue = readFileSync(file, 'utf8');
  const classes = glue.match(/^    __destroy_into_raw\(\) \{$/gm)?.length ?? 0;
  for (const [unpatched, patched, times] of patches) {
    const expected = times === 'classes' ? classes : times;
    const found = typeof unpatched === 'string' ? glue.split(unpatched).length - 1 : glue.match(unpatched)?.length ?? 0;
    if (found !== expected || found === 0) {
      const shown = typeof unpatched === 'string' ? JSON.stringify(unpatched) : unpatched;
      console.error(`patch-glue: expected ${shown} ${expected}× in ${file}, found ${found}`);
      process.exit(1);
    }
    glue = glue.replaceAll(unpatched, patched);
  }
  writeFileSync(file, glue);
  const web = target === 'web' ? '; strings decode from and encode into resizable buffers; calls before init() throw' : '';
  console.log(`patch-glue: ${file}: free() is idempotent and use after free says so${web}`);
}
