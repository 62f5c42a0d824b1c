// Explains why init() could not load the module when it was fetched from a URL. The glue's
// own errors do not name the URL or what came back instead: a dev server that pre-bundles
// the package away from its .wasm answers the missing file with its HTML page, which
// surfaces as "expected magic word 00 61 73 6d, found 3c 21 64 6f".

const WASM_MAGIC = [0x00, 0x61, 0x73, 0x6d];

/**
 * The error init() rejects with, given the glue's `error` for `moduleOrPath` (init()'s
 * argument). When the module came from a URL, fetches it once more to see what the server
 * sends there: an error status or something that is not WebAssembly gets an Error saying
 * so, with the glue's error as its `cause`. Anything else (bytes, a Module, a response
 * that is WebAssembly after all, say in an engine without SIMD) keeps the glue's error.
 */
export async function loadError(error, moduleOrPath) {
  const url = fetchedFrom(moduleOrPath);
  if (url === undefined) return error;
  let response;
  let head;
  try {
    response = await fetch(url);
    head = new Uint8Array(await response.arrayBuffer()).subarray(0, 4);
  } catch {
    return error;
  }
  const where = `quiver-arrow: init() could not load the module from ${response.url || url.url || url}`;
  if (!response.ok) {
    return new Error(`${where}: the server answered HTTP ${response.status}`, { cause: error });
  }
  if (WASM_MAGIC.every((byte, i) => head[i] === byte)) return error;
  const type = response.headers.get('content-type') || 'no content type';
  const hint = type.startsWith('text/html')
    ? '. A dev server that pre-bundles dependencies answers a file it does not have with its ' +
      "page: in Vite 7 and earlier add `optimizeDeps: { exclude: ['quiver-arrow'] }` to " +
      'vite.config.js, or pass init() the .wasm file: `init({ module_or_path })`'
    : '';
  return new Error(`${where}: the server sent ${type}, not WebAssembly${hint}`, { cause: error });
}

// What the glue fetched the module from, or undefined if it did not fetch. As the glue
// reads its argument: a plain object's `module_or_path`, or (deprecated) the argument
// itself; a string, URL or Request is fetched, and nothing means quiver_bg.wasm beside the
// glue, which is beside this file (bundlers rewrite both `new URL` patterns to the same
// emitted file).
function fetchedFrom(moduleOrPath) {
  const source =
    moduleOrPath != null && Object.getPrototypeOf(moduleOrPath) === Object.prototype
      ? moduleOrPath.module_or_path
      : moduleOrPath;
  if (source === undefined) return new URL('./quiver_bg.wasm', import.meta.url);
  const fetched =
    typeof source === 'string' ||
    source instanceof URL ||
    (typeof Request === 'function' && source instanceof Request);
  return fetched ? source : undefined;
}
