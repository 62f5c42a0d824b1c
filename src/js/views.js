// Columns as typed-array views over wasm memory, built from a batch layout (one call into
// wasm per batch, see src/wasm/layout.rs) with no further call into wasm and no copy.
//
// Growth: every getter re-derives its view once it has detached (byteLength 0), which
// happens only when memory grew and was not switched to a resizable buffer: growing a
// memory detaches its old fixed-length buffer. Over a resizable buffer
// (`memory.toResizableBuffer()`) the views are built once and survive.
// A view you keep in a variable is valid until the next call into wasm on a
// non-resizable memory; read `column.values` again after such a call.
//
// Freeing: `token.freed` is set by Rust when the batch is dropped; every getter checks it
// and throws rather than read freed memory.
//
// Reachability: the garbage collector frees a batch or table whose JS object it finds
// unreachable (a FinalizationRegistry), and its memory is then reused. So a column keeps
// its owner reachable (`column[OWNER]`: the batch or table object, set by the package
// entry, or the parent column), and every view keeps its column reachable (`view[OWNER]`):
// a view in use never reads memory the collector freed under it. Neither link may be
// stored where Rust holds a reference, or the owner could never be collected. The links
// are properties, not WeakMap entries: a WeakMap entry per view cost more than a whole
// small batch's decode in Node, mostly in the collector.
//
// toArray()/get(i) follow apache-arrow JS `Vector.get(i)`, with these choices:
//   null slots -> null (for every type; Arrow JS's toArray() on numbers ignores nulls)
//   int64/uint64, time64, duration -> bigint; other ints, floats, time32 -> number
//   date, timestamp -> number of epoch milliseconds (microseconds and nanoseconds give a
//     fractional millisecond, as Arrow JS computes it)
//   decimal -> bigint of the unscaled value (123.45 as decimal(5, 2) -> 12345n)
//   interval -> YEAR_MONTH: number of months; DAY_TIME: { days, milliseconds };
//     MONTH_DAY_NANO: { months, days, nanoseconds } with nanoseconds a bigint
//   binary, large binary, binary view, fixed-size binary -> a Uint8Array copy
//   utf8, large utf8, utf8 view -> string
//   list, large list, fixed-size list -> array; struct -> plain object (of duplicate
//     field names, the last wins, as in Arrow JS toJSON())
//   map -> array of [key, value] pairs (lossless; `new Map(pairs)` if keys are unique)
//   union -> the value of the selected child; dictionary -> the decoded value
//   run-end encoded -> the value of the run that holds the row (expanded)

const FREED = "this column's RecordBatch was freed; keep the batch (or table) alive while you read its columns";

/** The key under which a column holds what owns its memory (also set in extras.js). */
export const OWNER = Symbol.for('quiver-arrow.owner');

/** Keeps `owner` reachable for as long as `view` is; returns `view`. */
export function keepAlive(view, owner) {
  if (view != null) view[OWNER] = owner;
  return view;
}

// Batches of one stream share a schema, so its parsed type tree is reused. Bounded, since
// a page may see many schemas over its life.
const typeTrees = new Map();

function typeTree(types) {
  let fields = typeTrees.get(types);
  if (fields === undefined) {
    if (typeTrees.size >= 64) typeTrees.clear();
    fields = JSON.parse(types);
    typeTrees.set(types, fields);
  }
  return fields;
}

/** Sets `token.freed` (called by Rust when a batch or table is dropped). */
export function markFreed(token) {
  token.freed = true;
}

/**
 * A batch's `BatchLayout`: `numRows`, `types` and `nodes`. Each column's node tree is
 * parsed from `nodes` when first asked for, so reading two columns of a wide batch parses
 * two. Rust caches the layout, so that is once per batch and column.
 */
class BatchLayout {
  #fields;
  #starts;
  #trees = [];

  constructor(numRows, types, nodes) {
    this.numRows = numRows;
    this.types = types;
    this.nodes = nodes;
  }

  static fields(layout) {
    return (layout.#fields ??= typeTree(layout.types));
  }

  static node(layout, index) {
    let tree = layout.#trees[index];
    if (tree === undefined) {
      layout.#starts ??= columnStarts(layout.nodes, BatchLayout.fields(layout).length);
      tree = layout.#trees[index] = readNode(layout.nodes, layout.#starts[index]).node;
    }
    return tree;
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

/** Where each of the first `count` columns' nodes start in `nodes`. */
function columnStarts(nodes, count) {
  const starts = [];
  let at = 0;
  for (let c = 0; c < count; c++) {
    starts.push(at);
    at = skipNode(nodes, at);
  }
  return starts;
}

/** Where the node at `at` and its descendants end. */
function skipNode(n, at) {
  at += 7 + 2 * n[at + 6];
  for (let c = n[at++]; c > 0; c--) at = skipNode(n, at);
  return at;
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

/** The layout as `{ numRows, fields, nodes }`, one node tree per column. */
export function parseLayout(layout) {
  const fields = BatchLayout.fields(layout);
  return { numRows: layout.numRows, fields, nodes: fields.map((_, i) => BatchLayout.node(layout, i)) };
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

const utf8 = new TextDecoder();
/** TextDecoder refuses views of a resizable buffer, so those are copied first. */
const decode = (bytes) => utf8.decode(bytes.buffer.resizable ? bytes.slice() : bytes);

/** Bit `i` of a bitmap. */
const bit = (bytes, i) => (bytes[i >> 3] >> (i & 7)) & 1;

/** As Arrow JS's divideBigInts: a whole part plus a fractional part. */
const divide = (value, by) => Number(value / by) + Number(value % by) / Number(by);

const TIMESTAMP_MS = {
  SECOND: (v) => 1000 * Number(v),
  MILLISECOND: (v) => Number(v),
  MICROSECOND: (v) => divide(v, 1000n),
  NANOSECOND: (v) => divide(v, 1000000n),
};

function float16(bits) {
  const exponent = (bits >> 10) & 0x1f;
  const fraction = bits & 0x3ff;
  const sign = bits & 0x8000 ? -1 : 1;
  if (exponent === 0) return sign * 2 ** -14 * (fraction / 1024);
  if (exponent === 0x1f) return fraction ? NaN : sign * Infinity;
  return sign * 2 ** (exponent - 15) * (1 + fraction / 1024);
}

/**
 * One column of a batch: `type` (descriptor as in `BatchLayout.types`), `name`,
 * `length`, `nullCount`, and typed-array views of its buffers in wasm memory, no copy:
 *
 * - `values`: fixed-width values from row 0 (`values[i]` is row i; decimals, intervals
 *   and fixed-size binary have several slots per row), the bytes of utf8/binary, the
 *   indices of a dictionary, or the bit-packed bytes of a bool (bit `bitOffset + i`);
 *   views: 4 int32 words per row (length, prefix, buffer index, offset);
 * - `validity`: the bit-packed validity bytes (bit `validityBitOffset + i`), or null;
 * - `offsets`: utf8/binary/list/map offsets from row 0 (`length + 1` entries), dense
 *   union offsets; `typeIds` of a union; `dataBuffers` of utf8/binary views;
 * - `children` (list, struct, map, union, run-end encoded) and `dictionary` (values).
 *
 * The views stay valid while the batch lives; once it is freed every getter throws.
 */
export class Column {
  #token;
  #memory;
  #node;
  #start;
  #bitmapStart;
  // The views made so far, a field each: a getter then reads one private field, not a
  // keyed lookup by name, which cost time in paired runs of a Node scan of small batches.
  #valuesView;
  #validityView;
  #offsetsView;
  #typeIdsView;
  #dataViews = [];
  #width;
  #children;
  #nullCount;

  constructor(field, node, token, memory, shift = 0, length = node.length) {
    this.name = field.name;
    this.type = field.type;
    this.field = field;
    this.length = length;
    this.#node = node;
    this.#token = token;
    this.#memory = memory;
    // Row 0 of this column in its buffers, and in its validity bitmap.
    this.#start = node.offset + shift;
    this.#bitmapStart = node.validity ? node.validity.bitOffset + shift : 0;
    this.#width = fixedWidth(field.type);
    if (shift === 0 && length === node.length && !['Null', 'Union', 'RunEndEncoded'].includes(this.type.id)) {
      this.#nullCount = node.nullCount;
    }
  }

  /**
   * A view made before, unless it has detached (or the batch was freed: that throws). The
   * view itself is checked rather than `memory.buffer`, a call into the engine on every
   * read. A detached view is empty; an empty view of a fixed-length buffer is simply made
   * again.
   */
  #live(view) {
    if (this.#token.freed) throw new Error(FREED);
    return view !== undefined && (view.byteLength !== 0 || view.buffer.resizable) ? view : undefined;
  }

  /** `count` elements of buffer `index` from element `first`, or undefined. */
  #buffer(index, Array, first, count) {
    const buffer = this.#node.buffers[index];
    if (buffer === undefined) return undefined;
    return new Array(this.#memory.buffer, buffer.address + first * Array.BYTES_PER_ELEMENT, count);
  }

  /** Bytes of a bitmap from the byte that holds bit `first`, covering `count` bits. */
  #bitmap(address, first, count) {
    return new Uint8Array(this.#memory.buffer, address + (first >> 3), ((first & 7) + count + 7) >> 3);
  }

  get values() {
    return this.#live(this.#valuesView) ?? (this.#valuesView = keepAlive(this.#values(), this));
  }

  #values() {
    const { type, length } = this;
    const start = this.#start;
    const width = this.#width;
    if (width) return this.#buffer(0, width.Array, start * width.stride, length * width.stride);
    switch (type.id) {
      case 'Bool':
        return this.#bitmap(this.#node.buffers[0].address, start, length);
      case 'Utf8': case 'Binary': case 'LargeUtf8': case 'LargeBinary': {
        const data = this.#node.buffers[1];
        return new Uint8Array(this.#memory.buffer, data.address, data.bytes);
      }
      case 'Utf8View': case 'BinaryView':
        return this.#buffer(0, Int32Array, start * 4, length * 4);
      default:
        return undefined;
    }
  }

  /** Bit offset of row 0 in a bool's `values` (0 to 7; 0 for decoded IPC). */
  get bitOffset() {
    return this.#start & 7;
  }

  get validity() {
    const validity = this.#node.validity;
    if (validity === null) {
      if (this.#token.freed) throw new Error(FREED);
      return null;
    }
    return this.#live(this.#validityView)
      ?? (this.#validityView = keepAlive(this.#bitmap(validity.address, this.#bitmapStart, this.length), this));
  }

  /** Bit offset of row 0 in `validity` (0 to 7; 0 for decoded IPC). */
  get validityBitOffset() {
    return this.#bitmapStart & 7;
  }

  get offsets() {
    return this.#live(this.#offsetsView) ?? (this.#offsetsView = keepAlive(this.#offsets(), this));
  }

  #offsets() {
    const { id, mode } = this.type;
    const large = id === 'LargeUtf8' || id === 'LargeBinary' || id === 'LargeList';
    if (['Utf8', 'Binary', 'List', 'Map'].includes(id) || large) {
      return this.#buffer(0, large ? BigInt64Array : Int32Array, this.#start, this.length + 1);
    }
    if (id === 'Union' && mode === 'Dense') return this.#buffer(1, Int32Array, this.#start, this.length);
    return undefined;
  }

  get typeIds() {
    if (this.#token.freed) throw new Error(FREED);
    if (this.type.id !== 'Union') return undefined;
    return this.#live(this.#typeIdsView)
      ?? (this.#typeIdsView = keepAlive(this.#buffer(0, Int8Array, this.#start, this.length), this));
  }

  get dataBuffers() {
    if (this.#token.freed) throw new Error(FREED);
    const { id } = this.type;
    if (id !== 'Utf8View' && id !== 'BinaryView') return undefined;
    return this.#node.buffers.slice(1).map((b, i) =>
      this.#live(this.#dataViews[i])
        ?? (this.#dataViews[i] = keepAlive(new Uint8Array(this.#memory.buffer, b.address, b.bytes), this)));
  }

  /** Child columns, row-aligned with this column for struct and sparse union. */
  get children() {
    if (this.#token.freed) throw new Error(FREED);
    if (this.#children === undefined) {
      const { id, mode, listSize } = this.type;
      const fields = this.field.children;
      const nodes = this.#node.children;
      this.#children = id === 'Dictionary' ? [] : nodes.map((node, i) => {
        if (id === 'Struct' || (id === 'Union' && mode === 'Sparse')) {
          // As in the C data interface, the parent's offset applies to these children.
          return this.#part(new Column(fields[i], node, this.#token, this.#memory, this.#start, this.length));
        }
        if (id === 'FixedSizeList') {
          return this.#part(new Column(fields[i], node, this.#token, this.#memory,
            this.#start * listSize, this.length * listSize));
        }
        return this.#part(new Column(fields[i], node, this.#token, this.#memory));
      });
    }
    return this.#children;
  }

  /** The values of a dictionary column, as a column. */
  get dictionary() {
    if (this.#token.freed) throw new Error(FREED);
    if (this.type.id !== 'Dictionary') return undefined;
    return this.#part(new Column(this.field.children[0], this.#node.children[0], this.#token, this.#memory));
  }

  /** A column made from this one's memory, which keeps this one (and so its owner) reachable. */
  #part(column) {
    column[OWNER] = this;
    return column;
  }

  get nullCount() {
    if (this.#token.freed) throw new Error(FREED);
    if (this.#nullCount === undefined) {
      const valid = this.validReader();
      let nulls = 0;
      for (let i = 0; i < this.length; i++) nulls += valid(i) ? 0 : 1;
      this.#nullCount = nulls;
    }
    return this.#nullCount;
  }

  /** Whether row `i` holds a value. */
  isValid(i) {
    this.#check(i);
    return this.validReader()(i);
  }

  /** Row `i`'s value (see the representation notes at the top of views.js). */
  get(i) {
    this.#check(i);
    return this.reader()(i);
  }

  /** Every row's value, copied into a new JS array. */
  toArray() {
    const read = this.reader();
    const out = new Array(this.length);
    for (let i = 0; i < this.length; i++) out[i] = read(i);
    return out;
  }

  *[Symbol.iterator]() {
    for (let i = 0; i < this.length; i++) yield this.get(i);
  }

  #check(i) {
    if (!Number.isInteger(i) || i < 0 || i >= this.length) {
      throw new RangeError(`row ${i} is out of range: column "${this.name}" has ${this.length} rows`);
    }
  }

  /**
   * `(i) => isValid(i)` over the views as they are now: use it at once, before any other
   * call into wasm.
   */
  validReader() {
    const { id, mode } = this.type;
    if (id === 'Null') return () => false;
    if (id === 'Union') {
      const children = this.children.map((c) => c.validReader());
      const child = this.#unionChild();
      const offsets = mode === 'Dense' ? this.offsets : undefined;
      return (i) => children[child(i)](offsets ? offsets[i] : i);
    }
    if (id === 'RunEndEncoded') {
      const run = this.#runOf();
      const valid = this.children[1].validReader();
      return (i) => valid(run(i));
    }
    const validity = this.validity;
    if (validity === null) return () => true;
    const first = this.#bitmapStart & 7;
    return (i) => bit(validity, first + i) === 1;
  }

  /** `(i) => typeIds[i]`'s child index. */
  #unionChild() {
    const typeIds = this.typeIds;
    const index = new Map(this.type.typeIds.map((id, child) => [id, child]));
    return (i) => index.get(typeIds[i]);
  }

  /** `(i) => the row of the values child that holds row i` of a run-end encoded column. */
  #runOf() {
    const ends = this.children[0].values;
    const start = this.#start;
    const big = ends instanceof BigInt64Array;
    return (i) => {
      const row = big ? BigInt(start + i) : start + i;
      let lo = 0;
      let hi = ends.length - 1;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (ends[mid] > row) hi = mid;
        else lo = mid + 1;
      }
      return lo;
    };
  }

  /**
   * `(i) => get(i)` over the views as they are now: use it at once, before any other
   * call into wasm (toArray does).
   */
  reader() {
    const read = this.#valueReader();
    if (['Null', 'Union', 'RunEndEncoded'].includes(this.type.id)) return read;
    if (this.validity === null) return read;
    const valid = this.validReader();
    return (i) => (valid(i) ? read(i) : null);
  }

  #valueReader() {
    const { type } = this;
    const values = this.values;
    switch (type.id) {
      case 'Null':
        return () => null;
      case 'Bool': {
        const first = this.#start & 7;
        return (i) => bit(values, first + i) === 1;
      }
      case 'Int':
      case 'Time':
      case 'Duration':
        return (i) => values[i];
      case 'Float':
        return type.bitWidth === 16 ? (i) => float16(values[i]) : (i) => values[i];
      case 'Date':
        return type.unit === 'DAY' ? (i) => 86400000 * values[i] : (i) => Number(values[i]);
      case 'Timestamp': {
        const ms = TIMESTAMP_MS[type.unit];
        return (i) => ms(values[i]);
      }
      case 'Interval':
        return this.#intervalReader(values);
      case 'Decimal':
        return decimalReader(values, type.bitWidth);
      case 'FixedSizeBinary': {
        const width = type.byteWidth;
        return (i) => values.slice(i * width, (i + 1) * width);
      }
      case 'Utf8': case 'LargeUtf8': case 'Binary': case 'LargeBinary': {
        const offsets = this.offsets;
        const text = type.id === 'Utf8' || type.id === 'LargeUtf8';
        return (i) => {
          const bytes = values.subarray(Number(offsets[i]), Number(offsets[i + 1]));
          return text ? decode(bytes) : bytes.slice();
        };
      }
      case 'Utf8View': case 'BinaryView':
        return this.#viewReader(values, type.id === 'Utf8View');
      case 'List': case 'LargeList': case 'Map': {
        const offsets = this.offsets;
        const child = this.#entryReader();
        return (i) => {
          const out = [];
          for (let k = Number(offsets[i]), end = Number(offsets[i + 1]); k < end; k++) out.push(child(k));
          return out;
        };
      }
      case 'FixedSizeList': {
        const child = this.children[0].reader();
        const size = type.listSize;
        return (i) => {
          const out = new Array(size);
          for (let k = 0; k < size; k++) out[k] = child(i * size + k);
          return out;
        };
      }
      case 'Struct': {
        const names = this.children.map((c) => c.name);
        const readers = this.children.map((c) => c.reader());
        return (i) => {
          const row = {};
          for (let k = 0; k < names.length; k++) row[names[k]] = readers[k](i);
          return row;
        };
      }
      case 'Union': {
        const readers = this.children.map((c) => c.reader());
        const child = this.#unionChild();
        const offsets = type.mode === 'Dense' ? this.offsets : undefined;
        return (i) => readers[child(i)](offsets ? offsets[i] : i);
      }
      case 'Dictionary': {
        const dictionary = this.dictionary.reader();
        return (i) => dictionary(Number(values[i]));
      }
      case 'RunEndEncoded': {
        const run = this.#runOf();
        const read = this.children[1].reader();
        return (i) => read(run(i));
      }
      default:
        throw new Error(`column "${this.name}" has type ${type.name ?? type.id}, which Quiver cannot read in JS`);
    }
  }

  /** A list's element reader; for a map, entries become [key, value] pairs. */
  #entryReader() {
    const [entries] = this.children;
    if (this.type.id !== 'Map') return entries.reader();
    const [keys, items] = entries.children.map((c) => c.reader());
    return (k) => [keys(k), items(k)];
  }

  #intervalReader(values) {
    switch (this.type.unit) {
      case 'YEAR_MONTH':
        return (i) => values[i];
      case 'DAY_TIME':
        return (i) => ({ days: values[2 * i], milliseconds: values[2 * i + 1] });
      default: {
        const wide = new BigInt64Array(values.buffer, values.byteOffset, values.length / 2);
        return (i) => ({ months: values[4 * i], days: values[4 * i + 1], nanoseconds: wide[2 * i + 1] });
      }
    }
  }

  #viewReader(views, text) {
    const bytes = new Uint8Array(views.buffer, views.byteOffset, views.byteLength);
    const data = this.dataBuffers;
    return (i) => {
      const size = views[4 * i];
      const value = size <= 12
        ? bytes.subarray(16 * i + 4, 16 * i + 4 + size)
        : data[views[4 * i + 2]].subarray(views[4 * i + 3], views[4 * i + 3] + size);
      return text ? decode(value) : value.slice();
    };
  }
}

/** Decimal `(i) => unscaled bigint`, from little-endian 64-bit words (the top one signed). */
function decimalReader(values, bitWidth) {
  if (bitWidth <= 64) return (i) => BigInt(values[i]);
  const words = bitWidth / 64;
  return (i) => {
    let value = values[i * words + words - 1];
    for (let w = words - 2; w >= 0; w--) value = (value << 64n) | BigInt.asUintN(64, values[i * words + w]);
    return value;
  };
}

/** Column `index` of a batch layout; `token.freed` turns every read into an Error. */
export function makeColumn(layout, index, token, memory) {
  return new Column(BatchLayout.fields(layout)[index], BatchLayout.node(layout, index), token, memory);
}

/** Every column of a batch layout, in one call from wasm. */
export function makeColumns(layout, token, memory) {
  const { fields, nodes } = parseLayout(layout);
  return fields.map((field, i) => new Column(field, nodes[i], token, memory));
}

/**
 * A column over every batch of a table (`table.getChild(name)`): `chunks` are the
 * per-batch columns; `get(i)`, `isValid(i)` and `toArray()` span them.
 */
export class ChunkedColumn {
  constructor(chunks, field) {
    this.chunks = chunks;
    this.field = field;
    this.name = field.name;
    this.type = field.type;
    this.length = 0;
    this.ends = chunks.map((c) => (this.length += c.length));
  }

  get nullCount() {
    return this.chunks.reduce((n, c) => n + c.nullCount, 0);
  }

  #locate(i) {
    if (!Number.isInteger(i) || i < 0 || i >= this.length) {
      throw new RangeError(`row ${i} is out of range: column "${this.name}" has ${this.length} rows`);
    }
    let lo = 0;
    let hi = this.ends.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.ends[mid] > i) hi = mid;
      else lo = mid + 1;
    }
    return [this.chunks[lo], i - (lo === 0 ? 0 : this.ends[lo - 1])];
  }

  get(i) {
    const [chunk, row] = this.#locate(i);
    return chunk.get(row);
  }

  isValid(i) {
    const [chunk, row] = this.#locate(i);
    return chunk.isValid(row);
  }

  toArray() {
    return this.chunks.flatMap((c) => c.toArray());
  }

  *[Symbol.iterator]() {
    for (const chunk of this.chunks) yield* chunk;
  }
}

/**
 * Column `index` over all batch layouts of a table; `types` describes it when the table
 * has no batches. Not cached here, where Rust holds the layouts: the package entry caches
 * it per table object, which the column keeps reachable (see the top of this file).
 */
export function makeChunkedColumn(layouts, types, index, token, memory) {
  const field = typeTree(types)[index];
  const column = new ChunkedColumn(layouts.map((layout) => makeColumn(layout, index, token, memory)), field);
  for (const chunk of column.chunks) chunk[OWNER] = column;
  return column;
}

/** Every row of every layout as a plain object `{ [column name]: value }`. */
export function makeRows(layouts, token, memory) {
  const rows = [];
  for (const layout of layouts) {
    const { numRows, fields, nodes } = parseLayout(layout);
    const readers = fields.map((f, k) => new Column(f, nodes[k], token, memory).reader());
    for (let i = 0; i < numRows; i++) {
      const row = {};
      for (let k = 0; k < fields.length; k++) row[fields[k].name] = readers[k](i);
      rows.push(row);
    }
  }
  return rows;
}
