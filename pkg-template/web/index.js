// Entry of the web build: the wasm-bindgen glue, an init() that also makes wasm memory
// resizable unless asked not to, and the JS protocols the glue does not generate
// (extras.js).
import initGlue, * as glue from './quiver.js';
import { addProtocols, growable } from './extras.js';
import { loadError } from './load-error.js';

export * from './quiver.js';

export const { tableFromIPCAsync } = addProtocols(glue);

export { FlightError, openFile } from './extras.js';

// Whether memory is to be resizable: set by the first init() or initSync() call, which
// decides for every later one, and cleared if that call failed and no other loaded the
// module meanwhile (the glue's initSync() does not wait for an init() in flight).
let memoryChosen;
let loaded = false;

/**
 * Loads and instantiates the wasm module; call it once before anything else. Later calls
 * return the same instance. With no argument it fetches `quiver_bg.wasm` next to this
 * file; pass `{ module_or_path }` (a URL, a Response, bytes or a WebAssembly.Module) to
 * load it from elsewhere. If the module fetched from a URL does not load, and the server
 * answers there with an error status or with something that is not WebAssembly (a dev
 * server's HTML page), the Error says which.
 *
 * `{ resizableMemory: false }` keeps wasm memory a fixed-length buffer where the engine
 * could make it resizable (README, "Resizable memory"): V8 reads typed arrays over a
 * fixed-length buffer faster, but a view kept in a variable reads as empty once memory
 * grows.
 */
export default async function init(options) {
  const deciding = chooseMemory(options);
  let exports;
  try {
    exports = await initGlue(options);
  } catch (error) {
    if (deciding && !loaded) memoryChosen = undefined;
    throw await loadError(error, options);
  }
  return loadedWith(exports);
}

/**
 * init() for a module or bytes you already have, without a fetch: `initSync({ module })`,
 * with the same `resizableMemory` option.
 */
export function initSync(options) {
  const deciding = chooseMemory(options);
  let exports;
  try {
    exports = glue.initSync(options);
  } catch (error) {
    if (deciding && !loaded) memoryChosen = undefined;
    throw error;
  }
  return loadedWith(exports);
}

function loadedWith(exports) {
  loaded = true;
  if (memoryChosen) growable(exports.memory);
  return exports;
}

/**
 * Reads the `resizableMemory` option of a plain options object (default true) and
 * returns whether this call decides it. A later call may repeat the choice, not change
 * it: switching would detach every view handed out so far.
 */
function chooseMemory(options) {
  const isOptions = options != null && Object.getPrototypeOf(options) === Object.prototype;
  const asked = isOptions ? options.resizableMemory : undefined;
  if (asked !== undefined && typeof asked !== 'boolean') {
    throw new TypeError(`quiver-arrow: init()'s resizableMemory must be a boolean, not ${typeof asked}`);
  }
  if (memoryChosen === undefined) {
    memoryChosen = asked ?? true;
    return true;
  }
  if (asked !== undefined && asked !== memoryChosen) {
    throw new Error(
      `quiver-arrow: init() already ran with resizableMemory: ${memoryChosen}; ` +
        'memory keeps the kind the first call chose',
    );
  }
  return false;
}
