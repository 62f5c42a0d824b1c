// Patches the wasm-bindgen web glue so that its strings decode from a resizable buffer.
//
// The web entry switches wasm memory to a resizable ArrayBuffer (toResizableBuffer) so
// that views survive memory growth, but TextDecoder.decode throws on views of a
// resizable buffer ("must not be resizable"). The glue routes every string it reads from
// wasm memory through one function, decodeText(bytes); this makes it copy such views
// first. Fails, and so fails the build, unless the line is found exactly once, so a
// wasm-bindgen upgrade that changes the glue cannot slip through unpatched.
// tests/js/package.test.js checks the built glue, tests/browser/smoke.test.js the effect.
//
// Usage: node pkg-scripts/patch-glue.mjs <glue.js>...
import { readFileSync, writeFileSync } from 'node:fs';

const UNPATCHED = '    return cachedTextDecoder.decode(bytes);\n';
const PATCHED =
  '    return cachedTextDecoder.decode(bytes.buffer.resizable ? bytes.slice() : bytes);\n';

for (const file of process.argv.slice(2)) {
  const glue = readFileSync(file, 'utf8');
  const found = glue.split(UNPATCHED).length - 1;
  if (found !== 1) {
    console.error(`patch-glue: expected decodeText's decode line once in ${file}, found ${found}`);
    process.exit(1);
  }
  writeFileSync(file, glue.replace(UNPATCHED, PATCHED));
  console.log(`patch-glue: ${file}: TextDecoder copies views of resizable buffers`);
}
