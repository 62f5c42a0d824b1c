// Entry of the web build: the wasm-bindgen glue, an init() that also makes wasm memory
// resizable, and the JS protocols the glue does not generate (extras.js).
import initGlue, * as glue from './quiver.js';
import { addProtocols, growable } from './extras.js';
import { loadError } from './load-error.js';

export * from './quiver.js';

export const { tableFromIPCAsync } = addProtocols(glue);

export { FlightError, openFile } from './extras.js';

// What the first init() or initSync() asked of memory; later calls must not ask otherwise.
let memoryChosen;

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
  const resizable = resizableMemory(options);
  let exports;
  try {
    exports = await initGlue(options);
  } catch (error) {
    throw await loadError(error, options);
  }
  chooseMemory(exports.memory, resizable);
  return exports;
}

/**
 * init() for a module or bytes you already have, without a fetch: `initSync({ module })`,
 * with the same `resizableMemory` option.
 */
export function initSync(options) {
  const resizable = resizableMemory(options);
  const exports = glue.initSync(options);
  chooseMemory(exports.memory, resizable);
  return exports;
}

// The `resizableMemory` option of a plain options object: true unless it says false.
function resizableMemory(options) {
  const isOptions = options != null && Object.getPrototypeOf(options) === Object.prototype;
  const value = isOptions ? options.resizableMemory : undefined;
  if (value !== undefined && typeof value !== 'boolean') {
    throw new TypeError(`quiver-arrow: init()'s resizableMemory must be a boolean, not ${typeof value}`);
  }
  if (value !== undefined && memoryChosen !== undefined && value !== memoryChosen) {
    throw new Error(
      `quiver-arrow: init() already ran with resizableMemory: ${memoryChosen}; ` +
        'memory keeps the kind the first call chose',
    );
  }
  return value ?? true;
}

// The first call switches memory to a resizable buffer, or leaves it: switching later
// would detach every view handed out so far.
function chooseMemory(memory, resizable) {
  if (memoryChosen !== undefined) return;
  memoryChosen = resizable;
  if (resizable) growable(memory);
}
