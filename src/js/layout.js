// A batch's layout as Rust hands it over in one call (src/wasm/layout.rs): the column
// types as JSON and every buffer's address and length as numbers, parsed here into one
// node tree per column; and the typed array that each fixed-width type's values fill.

// Batches of one stream share a schema, so its parsed type tree is reused. Bounded, since
// a page may see many schemas over its life.
const typeTrees = new Map();

/** The fields described by a `types` JSON string, parsed once per schema. */
export function typeTree(types) {
  let fields = typeTrees.get(types);
  if (fields === undefined) {
    if (typeTrees.size >= 64) typeTrees.clear();
    fields = JSON.parse(types);
    typeTrees.set(types, fields);
  }
  return fields;
}

/**
 * A batch's `BatchLayout`: `numRows`, `types` and `nodes`. Its columns' node trees are
 * parsed when first asked for, and kept: Rust caches the layout, so that is once per batch.
 */
class BatchLayout {
  #parsed;

  constructor(numRows, types, nodes) {
    this.numRows = numRows;
    this.types = types;
    this.nodes = nodes;
  }

  static parsed(layout) {
    if (layout.#parsed === undefined) {
      const fields = typeTree(layout.types);
      const trees = nodeTrees(layout.nodes);
      layout.#parsed = { numRows: layout.numRows, fields, nodes: trees };
    }
    return layout.#parsed;
  }
}

/**
 * The layout of these parts. `nodes` is a view of wasm memory that Rust frees after the
 * call, so it is copied, into a plain array: a typed array of more than 64 bytes gets a
 * backing store of its own, which cost more than the rest of a small batch's layout.
 */
export function batchLayout(numRows, types, nodes) {
  const copy = new Array(nodes.length);
  for (let i = 0; i < nodes.length; i++) copy[i] = nodes[i];
  return new BatchLayout(numRows, types, copy);
}

/** The node at `at` with its descendants, and where they end. */
function readNode(n, at) {
  const length = n[at];
  const nullCount = n[at + 1];
  const offset = n[at + 2];
  const validity = n[at + 3] === 0 && n[at + 4] === 0
    ? null
    : { address: n[at + 3], bytes: n[at + 4], bitOffset: n[at + 5] };
  const bufferCount = n[at + 6];
  at += 7;
  const buffers = [];
  for (let b = 0; b < bufferCount; b++, at += 2) buffers.push({ address: n[at], bytes: n[at + 1] });
  const children = [];
  for (let c = n[at++]; c > 0; c--) {
    const child = readNode(n, at);
    children.push(child.node);
    at = child.end;
  }
  return { node: { length, nullCount, offset, validity, buffers, children }, end: at };
}

/**
 * The node trees encoded one after another in `nodes`: every column of a batch, or one
 * column of each batch.
 */
export function nodeTrees(nodes) {
  const trees = [];
  for (let at = 0; at < nodes.length;) {
    const { node, end } = readNode(nodes, at);
    trees.push(node);
    at = end;
  }
  return trees;
}

/** The layout as `{ numRows, fields, nodes }`, one node tree per column. */
export function parseLayout(layout) {
  return BatchLayout.parsed(layout);
}

const SIGNED = { 8: Int8Array, 16: Int16Array, 32: Int32Array, 64: BigInt64Array };
const UNSIGNED = { 8: Uint8Array, 16: Uint16Array, 32: Uint32Array, 64: BigUint64Array };

// fixedWidth's answer per type descriptor, which batches of one schema share.
const widths = new WeakMap();

/** The typed-array class and values per slot of a fixed-width type, or undefined. */
export function fixedWidth(type) {
  let width = widths.get(type);
  if (width === undefined) widths.set(type, (width = widthOf(type) ?? null));
  return width ?? undefined;
}

function widthOf(type) {
  switch (type.id) {
    case 'Int':
      return { Array: (type.signed ? SIGNED : UNSIGNED)[type.bitWidth], stride: 1 };
    case 'Float':
      return { Array: { 16: Uint16Array, 32: Float32Array, 64: Float64Array }[type.bitWidth], stride: 1 };
    case 'Date':
      return { Array: type.unit === 'DAY' ? Int32Array : BigInt64Array, stride: 1 };
    case 'Time':
      return { Array: type.bitWidth === 32 ? Int32Array : BigInt64Array, stride: 1 };
    case 'Timestamp':
    case 'Duration':
      return { Array: BigInt64Array, stride: 1 };
    case 'Interval':
      return { Array: Int32Array, stride: { YEAR_MONTH: 1, DAY_TIME: 2, MONTH_DAY_NANO: 4 }[type.unit] };
    case 'Decimal':
      return type.bitWidth === 32
        ? { Array: Int32Array, stride: 1 }
        : { Array: BigInt64Array, stride: type.bitWidth / 64 };
    case 'FixedSizeBinary':
      return { Array: Uint8Array, stride: type.byteWidth };
    case 'Dictionary':
      return widthOf(type.indices);
    default:
      return undefined;
  }
}
