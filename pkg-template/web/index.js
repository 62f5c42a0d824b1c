// Entry of the web build: the wasm-bindgen glue, an init() that also makes wasm memory
// resizable, and the JS protocols the glue does not generate (extras.js).
import initGlue, * as glue from './quiver.js';
import { addProtocols, growable } from '../extras.js';

export * from './quiver.js';

addProtocols(glue);

export { FlightError } from '../extras.js';

/**
 * Loads and instantiates the wasm module; call it once before anything else. Later calls
 * return the same instance. With no argument it fetches `quiver_bg.wasm` next to this
 * file; pass `{ module_or_path }` (a URL, a Response, bytes or a WebAssembly.Module) to
 * load it from elsewhere.
 */
export default async function init(moduleOrPath) {
  const exports = await initGlue(moduleOrPath);
  growable(exports.memory);
  return exports;
}

/** init() for a module or bytes you already have, without a fetch: `initSync({ module })`. */
export function initSync(module) {
  const exports = glue.initSync(module);
  growable(exports.memory);
  return exports;
}
