// Entry of the Node build: the wasm-bindgen glue (CommonJS, instantiated synchronously
// when first imported) and the JS protocols the glue does not generate (extras.js).
import glue from './quiver.cjs';
import { addProtocols } from './extras.js';

export * from './quiver.cjs';

export const { tableFromIPCAsync } = addProtocols(glue);

export { FlightError, openFile } from './extras.js';

/**
 * The module is ready once imported in Node. init() and initSync() exist so that code
 * written for the web build runs unchanged; they do nothing.
 */
export default async function init() {}

export function initSync() {}
