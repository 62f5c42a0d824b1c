// Functions that take a Quiver RecordBatch or Table (toArrowJS, tableToIPC) call the
// method that does their work on it: wasm-bindgen cannot borrow either class from a
// JsValue, but each class can borrow itself.

/** `source[method](first, second)`, or an Error naming `fn` if `source` has no such method. */
export function callOnBatchOrTable(fn, method, source, first, second) {
  if (typeof source?.[method] !== 'function') {
    throw new Error(`${fn} expects a quiver RecordBatch or Table, found ${describe(source)}`);
  }
  return source[method](first, second);
}

function describe(value) {
  if (value === null || typeof value !== 'object') return String(value);
  return value.constructor?.name ?? 'an object';
}
