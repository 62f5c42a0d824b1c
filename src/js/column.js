// A column of a batch as typed-array views over wasm memory, built from a batch layout
// (one call into wasm per batch, see layout.js and src/wasm/layout.rs) with no further
// call into wasm and no copy. Its values are read by readers.js.
//
// Growth: every getter re-derives its view once it has detached (byteLength 0), which
// happens only when memory grew and was not switched to a resizable buffer: growing a
// memory detaches its old fixed-length buffer. Over a resizable buffer
// (`memory.toResizableBuffer()`) the views are built once and survive.
// A view you keep in a variable is valid until the next call into wasm on a
// non-resizable memory; read `column.values` again after such a call.
//
// Freeing and reachability: see owner.js. A column keeps its owner reachable, and each
// of its views keeps the column reachable.

import { columnField, columnNode, fixedWidth, parseLayout } from './layout.js';
import { keepAlive, OWNER } from './owner.js';
import { rowReader, validReader } from './readers.js';

const FREED = "this column's RecordBatch was freed; keep the batch (or table) alive while you read its columns";

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

  /** Row `i`'s value (see the representation notes at the top of readers.js). */
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
    return validReader(this, this.#start);
  }

  /**
   * `(i) => get(i)` over the views as they are now: use it at once, before any other
   * call into wasm (toArray does).
   */
  reader() {
    return rowReader(this, this.#start);
  }
}

/** Column `index` of a batch layout; `token.freed` turns every read into an Error. */
export function makeColumn(layout, index, token, memory) {
  return new Column(columnField(layout, index), columnNode(layout, index), token, memory);
}

/** Every column of a batch layout, in one call from wasm. */
export function makeColumns(layout, token, memory) {
  const { fields, nodes } = parseLayout(layout);
  return fields.map((field, i) => new Column(field, nodes[i], token, memory));
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
