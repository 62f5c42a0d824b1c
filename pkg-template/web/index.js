// Entry of the web build: the wasm-bindgen glue, an init() that also makes wasm memory
// resizable, and the JS protocols the glue does not generate (extras.js).
import initGlue, * as glue from './quiver.js';
import { addProtocols, growable } from './extras.js';
import { loadError } from './load-error.js';

export * from './quiver.js';

export const { tableFromIPCAsync } = addProtocols(glue);

export { FlightError, openFile } from './extras.js';

/**
 * Loads and instantiates the wasm module; call it once before anything else. Later calls
 * return the same instance. With no argument it fetches `quiver_bg.wasm` next to this
 * file; pass `{ module_or_path }` (a URL, a Response, bytes or a WebAssembly.Module) to
 * load it from elsewhere. If the module fetched from a URL does not load, and the server
 * answers there with an error status or with something that is not WebAssembly (a dev
 * server's HTML page), the Error says which.
 */
export default async function init(moduleOrPath) {
  let exports;
  try {
    exports = await initGlue(moduleOrPath);
  } catch (error) {
    throw await loadError(error, moduleOrPath);
  }
  growable(exports.memory);
  return exports;
}

/** init() for a module or bytes you already have, without a fetch: `initSync({ module })`. */
export function initSync(module) {
  const exports = glue.initSync(module);
  growable(exports.memory);
  return exports;
}
