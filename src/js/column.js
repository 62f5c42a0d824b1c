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
// `values` is a data property, not a getter, so that `column.values[i]` in a loop reads
// as fast as flechette's: a getter's freed and growth checks stayed in V8's loop and made
// it 2.2× (Node) to 4.2× (Chromium) slower. What a getter checked is done to the column
// instead (handed_out.js): when memory grows, a handed-out column's `values` is made
// again (`RENEW`), and when its batch is freed, it becomes a stand-in that throws on any
// use (`RETIRE`). Columns never handed out (those toArray reads, children of those) may
// keep a stale `values`, so code here reads `column[VALUES_NOW]`, which checks.
//
// Made with the column: its `values` view and its validity bitmap's copy. A first-use
// path that ran once stays in V8's optimized loop as a call, and that alone made a Node
// loop over isValid about 1.4× slower.
//
// isValid tests a bit of that copy and nothing else; a column without nulls reads a
// shared bitmap of ones instead, so that no column needs a branch of its own. A copy, as
// V8 reads one about 3× faster than a view of a resizable buffer, and it never detaches;
// and as it reads no wasm memory, it needs no freed check. It does not check its row
// (flechette's does not either): each check measured in its body, even on a branch never
// taken, cost Node's loop 0.3 to 1 ns a row, against flechette's 3 ns for the whole call.
//
// Row accessors: `get`, iteration and `toArray` (but of numbers, which it copies from
// `values`) use a reader (readers.js) built on first use and kept. A kept reader holds views, so each use first checks that the
// batch was not freed and that memory did not grow away under it (`probe`), and builds
// it again over fresh views if it did: a reader never reads freed or detached memory.
// Value options (value_options.js) get readers of their own, kept per option set beside
// the default one, which `get(i)` without options reads as before.
//
// Freeing and reachability: see owner.js. A column keeps its owner reachable, and each
// of its views keeps the column reachable.

import { fixedWidth, nodeTrees, parseLayout, typeTree } from './layout.js';
import { attempt, callEach, RENEW, RETIRE, rethrow } from './handed_out.js';
import { keepAlive, OWNER } from './owner.js';
import { isDirect, rowReader, runOf, validReader, VALUES_NOW } from './readers.js';
import { valueOptions, wantsTyped } from './value_options.js';

// Which rows are valid, row 0 at bit 0: the shared ones (`onesFor`) when no row is null;
// else a copy of the bitmap with the bits past the last row clear, or for a union,
// run-end encoded or null column what its children's bitmaps say. A property under a
// module symbol, not a private field: Node 20's V8 reads a private field more slowly, and
// that alone made its isValid loop 5–10% slower than flechette's (bench/accessors.js);
// Chromium's reads both alike.
const VALID_BITS = Symbol('validBits');

const FREED = "this column's RecordBatch was freed; keep the batch (or table) alive while you read its columns";

const refuseFreed = () => {
  throw new Error(FREED);
};
// What `values` becomes once its batch is freed: a view of freed memory would read
// whatever the allocator put there next, so anything done with this throws instead.
// Assigned, not defined as a getter: defineProperty and delete each cost ~400 ns a column
// in Node, more than a 100-row batch's loop; an assignment keeps the column's shape.
const FREED_VALUES = new Proxy(Object.freeze({ freed: FREED }), Object.fromEntries(
  ['get', 'set', 'has', 'ownKeys', 'getOwnPropertyDescriptor', 'defineProperty', 'deleteProperty', 'getPrototypeOf']
    .map((trap) => [trap, refuseFreed]),
));

// Never detached: what a reader is built under where memory is a resizable buffer.
const RESIZABLE = new Uint8Array(1);
// Per memory, a 1-byte view of its current buffer, which reads as empty once the memory
// grows under a fixed-length buffer. A reader built under a probe that is still non-empty
// reads views of the current buffer.
// The last one asked for is kept apart, as every column asks for one when it is made.
const probes = new WeakMap();
let lastMemory;
let lastProbe;

function probe(memory) {
  if (memory === lastMemory && lastProbe.length !== 0) return lastProbe;
  let view = probes.get(memory);
  if (view === undefined || view.length === 0) {
    const buffer = memory.buffer;
    view = buffer.resizable ? RESIZABLE : new Uint8Array(buffer, 0, 1);
    probes.set(memory, view);
  }
  lastMemory = memory;
  lastProbe = view;
  return view;
}

/** The key of `column[FILL](out, at)`, which chunked.js uses to fill one array from every chunk. */
export const FILL = Symbol('fill');

/** Whether `i` is a row of a column of `length` rows: an integer in [0, length). */
const inRange = (i, length) => i >>> 0 === i && i < length;

/**
 * One column of a batch: `type` (descriptor as in `BatchLayout.types`), `name`,
 * `length`, `nullCount`, and typed-array views of its buffers in wasm memory, no copy:
 *
 * - `values`: fixed-width values from row 0 (`values[i]` is row i; decimals, intervals
 *   and fixed-size binary have several slots per row), the bytes of utf8/binary, the
 *   indices of a dictionary, or the bit-packed bytes of a bool (bit `bitOffset + i`);
 *   views: 4 int32 words per row (length, prefix, buffer index, offset);
 * - `validity`: the bit-packed validity bytes (bit `validityBitOffset + i`), or null;
 * - `offsets`: utf8/binary/list/map offsets from row 0 (`length + 1` entries), list view
 *   and dense union offsets (`length` entries); `sizes` of a list view (row i is its
 *   child's items `offsets[i]` to `offsets[i] + sizes[i]`); `typeIds` of a union;
 *   `dataBuffers` of utf8/binary views;
 * - `children` (list, list view, struct, map, union, run-end encoded) and `dictionary`
 *   (values).
 *
 * The views stay valid while the batch lives; once it is freed every view getter throws
 * (`name`, `type`, `field` and `length` stay readable).
 */
export class Column {
  #token;
  #memory;
  #node;
  #start;
  #bitmapStart;
  // The probe `values` was made under, which tells whether it detached: a Uint8Array,
  // where the views are of one class per type, too many for Chromium to read their
  // length at one site without a call.
  #valuesProbe;
  // The views made so far, a field each: a getter then reads one private field, not a
  // keyed lookup by name, which cost time in paired runs of a Node scan of small batches.
  #validityView;
  #offsetsView;
  #sizesView;
  #typeIdsView;
  #dataViews;
  #width;
  #children;
  #dictionary;
  #nullCount;
  // The row reader, and what it was built under (see `probe`).
  #read;
  #readProbe;
  // Per value option set (interned by valueOptions), its reader and probe: made on first use.
  #optionReads;
  // Whether no row is null; the bitmap `isValid` reads is `this[VALID_BITS]` (see there).
  #allValid;

  // `room`: where the bitmap copy goes, if the columns made together share one (bitmapRoom).
  constructor(field, node, token, memory, shift = 0, length = node.length, room = undefined) {
    this.name = field.name;
    this.type = field.type;
    this.field = field;
    this.length = length;
    // Set by whoever hands the column out (see owner.js). Made here, so that every column
    // has one shape: one given the key later has another, and a loop over columns of both
    // shapes makes the accessors' call sites polymorphic.
    this[OWNER] = undefined;
    this.#node = node;
    this.#token = token;
    this.#memory = memory;
    // Row 0 of this column in its buffers, and in its validity bitmap.
    this.#start = node.offset + shift;
    this.#bitmapStart = node.validity ? node.validity.bitOffset + shift : 0;
    this.#width = fixedWidth(field.type);
    const plain = hasOwnBitmap(this.type);
    if (shift === 0 && length === node.length && plain) this.#nullCount = node.nullCount;
    // `values`: see the top of this file; kept right by RENEW and RETIRE, not checked on read.
    this.#renewValues();
    this.#allValid = plain && (node.validity === null || this.#nullCount === 0);
    if (this.#allValid) this[VALID_BITS] = onesFor(length);
    else if (plain) this[VALID_BITS] = bitmapCopy(this.validity, this.#bitmapStart & 7, length, room);
    else this[VALID_BITS] = derivedBits(this, this.#start);
  }

  // Each view getter returns its view after a few loads when it is non-empty and the
  // batch lives: the view itself is checked rather than `memory.buffer`, a call into the
  // engine on every read. The rest is in `#remade`, so that the getter stays small enough
  // for engines to inline into a loop.

  /** `view`, or one made again by `make` if it detached; throws if the batch was freed. */
  #remade(view, make) {
    if (this.#token.freed) throw new Error(FREED);
    // A detached view is empty, and so is its buffer; a view of no elements is not.
    if (view !== undefined && view.buffer.byteLength !== 0) return view;
    return keepAlive(make.call(this), this);
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

  /** `values` over memory as it is now; throws if the batch was freed. */
  get [VALUES_NOW]() {
    if (this.#token.freed) throw new Error(FREED);
    if (this.#valuesProbe.length === 0) this.#renewValues();
    return this.values;
  }

  [RENEW]() {
    if (this.#token.freed) return;
    const failure = attempt(() => {
      if (this.#valuesProbe.length === 0) this.#renewValues();
    });
    rethrow(this.#eachPart(RENEW, failure));
  }

  [RETIRE]() {
    const failure = attempt(() => {
      this.values = FREED_VALUES;
    });
    rethrow(this.#eachPart(RETIRE, failure));
  }

  /** callEach on the children and the dictionary made so far. */
  #eachPart(key, failure) {
    if (this.#children) failure = callEach(this.#children, key, failure);
    if (this.#dictionary) failure = callEach([this.#dictionary], key, failure);
    return failure;
  }

  #renewValues() {
    this.#valuesProbe = probe(this.#memory);
    this.values = keepAlive(this.#values(), this);
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
    const view = this.#validityView;
    if (view !== undefined && view.length !== 0 && !this.#token.freed) return view;
    return (this.#validityView = this.#remade(view, () => this.#bitmap(validity.address, this.#bitmapStart, this.length)));
  }

  /** Bit offset of row 0 in `validity` (0 to 7; 0 for decoded IPC). */
  get validityBitOffset() {
    return this.#bitmapStart & 7;
  }

  get offsets() {
    const view = this.#offsetsView;
    if (view !== undefined && view.length !== 0 && !this.#token.freed) return view;
    return (this.#offsetsView = this.#remade(view, this.#offsets));
  }

  #offsets() {
    const { id, mode } = this.type;
    const large = id === 'LargeUtf8' || id === 'LargeBinary' || id === 'LargeList';
    if (['Utf8', 'Binary', 'List', 'Map'].includes(id) || large) {
      return this.#buffer(0, large ? BigInt64Array : Int32Array, this.#start, this.length + 1);
    }
    if (id === 'ListView' || id === 'LargeListView') return this.#listView(0);
    if (id === 'Union' && mode === 'Dense') return this.#buffer(1, Int32Array, this.#start, this.length);
    return undefined;
  }

  get sizes() {
    const view = this.#sizesView;
    if (view !== undefined && view.length !== 0 && !this.#token.freed) return view;
    return (this.#sizesView = this.#remade(view, this.#sizes));
  }

  #sizes() {
    const { id } = this.type;
    return id === 'ListView' || id === 'LargeListView' ? this.#listView(1) : undefined;
  }

  /** A list view's offsets (buffer 0) or sizes (buffer 1), one per row. */
  #listView(index) {
    return this.#buffer(index, this.type.id === 'LargeListView' ? BigInt64Array : Int32Array, this.#start, this.length);
  }

  get typeIds() {
    if (this.#token.freed) throw new Error(FREED);
    if (this.type.id !== 'Union') return undefined;
    return (this.#typeIdsView = this.#remade(this.#typeIdsView, () => this.#buffer(0, Int8Array, this.#start, this.length)));
  }

  get dataBuffers() {
    if (this.#token.freed) throw new Error(FREED);
    const { id } = this.type;
    if (id !== 'Utf8View' && id !== 'BinaryView') return undefined;
    const views = (this.#dataViews ??= []);
    return this.#node.buffers.slice(1).map((b, i) => (views[i] =
      this.#remade(views[i], () => new Uint8Array(this.#memory.buffer, b.address, b.bytes))));
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
    // Kept, as RENEW and RETIRE reach it through this column.
    return (this.#dictionary ??= this.#part(new Column(this.field.children[0], this.#node.children[0], this.#token, this.#memory)));
  }

  /** A column made from this one's memory, which keeps this one (and so its owner) reachable. */
  #part(column) {
    column[OWNER] = this;
    return column;
  }

  get nullCount() {
    if (this.#token.freed) throw new Error(FREED);
    if (this.#nullCount === undefined) {
      let nulls = 0;
      for (let i = 0; i < this.length; i++) nulls += this.isValid(i) ? 0 : 1;
      this.#nullCount = nulls;
    }
    return this.#nullCount;
  }

  /**
   * Whether row `i` holds a value: a bit of the column's own copy of its bitmap, or of
   * ones on a column without nulls. `i` is not checked: pass a row.
   */
  isValid(i) {
    return (this[VALID_BITS][i >> 3] & (1 << (i & 7))) !== 0;
  }

  /**
   * Row `i`'s value (see the representation notes at the top of readers.js), converted
   * as value `options` say (see value_options.js).
   */
  get(i, options) {
    if (this.#token.freed || !inRange(i, this.length)) this.#refuse(i);
    if (options !== undefined) return this.#getWith(i, options);
    const read = this.#read;
    return (read !== undefined && this.#readProbe.length !== 0 ? read : this.#newReader())(i);
  }

  /** get(i, options) apart, so that get stays small enough for engines to inline. */
  #getWith(i, options) {
    return this.#reader(valueOptions(options))(i);
  }

  /** Throws why row `i` cannot be read: the batch was freed, or there is no such row. */
  #refuse(i) {
    if (this.#token.freed) throw new Error(FREED);
    throw new RangeError(`row ${i} is out of range: column "${this.name}" has ${this.length} rows`);
  }

  /**
   * Every row's value, copied into a new typed array of the values' own class where every
   * row is a number or bigint as it is stored (ints, floats but float16, time, duration)
   * and the column has no nulls, as flechette and Arrow JS return; otherwise, or with
   * `{ typed: false }`, into a new JS array. Value options (see value_options.js) convert
   * the rows, nested values too.
   */
  toArray(options) {
    const values = valueOptions(options, ['typed']);
    if (wantsTyped(options) && isDirect(this.type, values) && this.nullCount === 0) return this[VALUES_NOW].slice();
    return this[FILL](new Array(this.length), 0, values);
  }

  /** Writes every row's value into `out` from index `at`; returns `out`. */
  [FILL](out, at, options) {
    if (this.#token.freed) throw new Error(FREED);
    const { length } = this;
    if (!isDirect(this.type, options)) {
      const read = this.#reader(options);
      for (let i = 0; i < length; i++) out[at + i] = read(i);
      return out;
    }
    // A row's value is the typed array's element: no reader call per row.
    const values = this[VALUES_NOW];
    if (this.#allValid) {
      for (let i = 0; i < length; i++) out[at + i] = values[i];
      return out;
    }
    const bits = this[VALID_BITS];
    for (let i = 0; i < length; i++) out[at + i] = (bits[i >> 3] >> (i & 7)) & 1 ? values[i] : null;
    return out;
  }

  [Symbol.iterator]() {
    return new Rows(this);
  }

  /** What JSON.stringify writes: the column's description, not its `values`. */
  toJSON() {
    const { name, type, field, length } = this;
    return { name, type, field, length };
  }

  /**
   * The row reader for checked value `options` (undefined: the defaults), built again if
   * memory grew away from the views it holds.
   */
  #reader(options) {
    if (options !== undefined) return this.#optionReader(options);
    const read = this.#read;
    return read !== undefined && this.#readProbe.length !== 0 ? read : this.#newReader();
  }

  #optionReader(options) {
    this.#optionReads ??= new Map();
    const kept = this.#optionReads.get(options);
    if (kept !== undefined && kept.probe.length !== 0) return kept.read;
    const probed = probe(this.#memory);
    const read = rowReader(this, this.#start, options);
    this.#optionReads.set(options, { read, probe: probed });
    return read;
  }

  #newReader() {
    this.#readProbe = probe(this.#memory);
    return (this.#read = rowReader(this, this.#start));
  }

  /**
   * `(i) => isValid(i)` read from the views as they are now (a parent column's reader
   * uses it): use it at once, before any other call into wasm.
   */
  validReader() {
    if (this.#token.freed) throw new Error(FREED);
    if (this.#allValid) return () => true;
    return validReader(this, this.#start);
  }

  /**
   * `(i) => get(i)` over the views as they are now, without the range check: use it at
   * once, before any other call into wasm (a parent column's reader does). `options` as
   * valueOptions returns them.
   */
  reader(options) {
    if (this.#token.freed) throw new Error(FREED);
    return this.#reader(options);
  }
}

/**
 * The iterator of a column (or chunked column): `get(i)` row after row, so each step
 * checks what `get` checks. A plain object with `next()`, which engines inline in a
 * `for … of`, where a generator costs a resumption per row.
 */
export class Rows {
  #column;
  #row = 0;

  constructor(column) {
    this.#column = column;
  }

  next() {
    const row = this.#row;
    if (row >= this.#column.length) return { value: undefined, done: true };
    this.#row = row + 1;
    return { value: this.#column.get(row), done: false };
  }

  [Symbol.iterator]() {
    return this;
  }
}

// Ones shared by the columns without nulls, grown to the longest up to SHARED_ONES bytes;
// a longer column gets ones of its own, which go with it, so the module keeps no more.
const SHARED_ONES = 64 * 1024;
let ones = new Uint8Array(0);

/** A bitmap of at least `length` bits, every one set, never to be written. */
function onesFor(length) {
  const bytes = Math.ceil(length / 8);
  if (bytes > SHARED_ONES) return new Uint8Array(bytes).fill(0xff);
  if (ones.length < bytes) ones = new Uint8Array(Math.min(SHARED_ONES, Math.max(1024, 2 * bytes))).fill(0xff);
  return ones;
}

/** Whether a column of `type` has a validity bitmap of its own (not a union's, say). */
const hasOwnBitmap = ({ id }) => id !== 'Null' && id !== 'Union' && id !== 'RunEndEncoded';

/**
 * Room for the bitmap copies of the top-level columns made from `nodes` at once, one array
 * cut into parts: V8 keeps an array of up to 64 bytes (512 rows) in its heap, but gives a
 * longer one a backing store of its own for the collector, 1.5 µs each in Node, which was
 * half of making a 2000-row batch's column for a table's `getChild`. The parts keep the
 * whole array alive, as long as one of the columns lives.
 */
function bitmapRoom(types, nodes) {
  let bytes = 0;
  nodes.forEach((node, i) => {
    if (hasOwnBitmap(types[i]) && node.validity !== null && node.nullCount !== 0) bytes += (node.length + 7) >> 3;
  });
  return bytes === 0 ? undefined : { buffer: new ArrayBuffer(bytes), at: 0 };
}

/**
 * A copy of `length` bits of `bitmap` from bit `first`, moved to bit 0, with the bits past
 * the last row clear: out-of-range rows read as null, whatever the padding held. In the
 * next part of `room` if it has one left, else in an array of its own.
 */
function bitmapCopy(bitmap, first, length, room) {
  const bytes = (length + 7) >> 3;
  let bits;
  if (room !== undefined && room.at + bytes <= room.buffer.byteLength) {
    bits = new Uint8Array(room.buffer, room.at, bytes);
    room.at += bytes;
  } else {
    // Made with `new`, not `slice`: `slice` gives every copy a backing store of its own.
    bits = new Uint8Array(bytes);
  }
  // From bit 0, `bitmap` is exactly as long.
  if (first === 0) bits.set(bitmap);
  else {
    for (let i = 0; i < length; i++) {
      const j = first + i;
      bits[i >> 3] |= ((bitmap[j >> 3] >> (j & 7)) & 1) << (i & 7);
    }
  }
  if (length & 7) bits[bits.length - 1] &= (1 << (length & 7)) - 1;
  return bits;
}

/**
 * Which rows of a null, union or run-end encoded column are valid, as a bitmap from bit 0:
 * none of a null column's; a union's row by row; a run-end encoded column's a run at a
 * time, so that a long run costs no search per row.
 */
function derivedBits(column, start) {
  const { length } = column;
  const bits = new Uint8Array((length + 7) >> 3);
  const set = (i) => (bits[i >> 3] |= 1 << (i & 7));
  if (column.type.id === 'Union') {
    const valid = validReader(column, start);
    for (let i = 0; i < length; i++) if (valid(i)) set(i);
  } else if (column.type.id === 'RunEndEncoded' && length > 0) {
    const ends = column.children[0][VALUES_NOW];
    const valid = column.children[1].validReader();
    for (let run = runOf(column, start)(0), i = 0; i < length; run++) {
      const end = Math.min(Number(ends[run]) - start, length);
      // Decoding checked that run ends increase; this stops at any that would not.
      if (!(end > i)) break;
      if (valid(run)) for (; i < end; i++) set(i);
      else i = end;
    }
  }
  return bits;
}

/**
 * The columns of `field`, one per batch whose node tree `nodes` holds (a view of wasm
 * memory, all read before any column is made); `token.freed` turns every read into an
 * Error.
 */
export function columnsOf(nodes, field, token, memory) {
  const trees = nodeTrees(nodes);
  const room = bitmapRoom(trees.map(() => field.type), trees);
  return trees.map((node) => new Column(field, node, token, memory, 0, node.length, room));
}

/** Column `index` of a batch of schema `types`, from its node tree `nodes` (see columnsOf). */
export function makeColumn(nodes, types, index, token, memory) {
  return columnsOf(nodes, typeTree(types)[index], token, memory)[0];
}

/** Every column of a batch layout, in one call from wasm. */
export function makeColumns(layout, token, memory) {
  const { fields, nodes } = parseLayout(layout);
  const room = bitmapRoom(fields.map((field) => field.type), nodes);
  return fields.map((field, i) => new Column(field, nodes[i], token, memory, 0, nodes[i].length, room));
}

// The columns that makeRows reads, per batch layout (each batch or table has layouts of
// its own, and one token), so that a second toArray() builds no column or reader again.
// They are not handed out, so they hold no owner (see owner.js): keeping them for as long
// as Rust holds the layout keeps no batch or table alive.
const rowColumns = new WeakMap();

function columnsToRead(layout, token, memory) {
  let columns = rowColumns.get(layout);
  if (columns === undefined) rowColumns.set(layout, (columns = makeColumns(layout, token, memory)));
  return columns;
}

/**
 * Every row of every layout as a plain object `{ [column name]: value }`, converted as
 * value `options` say.
 */
export function makeRows(layouts, token, memory, options) {
  const values = valueOptions(options);
  let total = 0;
  for (const layout of layouts) total += layout.numRows;
  const rows = new Array(total);
  let at = 0;
  for (const layout of layouts) {
    const columns = columnsToRead(layout, token, memory);
    const names = columns.map((c) => c.name);
    const readers = columns.map((c) => c.reader(values));
    // Each row starts as a copy of one with every key, so that rows share one shape and
    // the stores below find their key in place. Of duplicate names the last value wins.
    const template = Object.fromEntries(names.map((name) => [name, null]));
    for (let i = 0; i < layout.numRows; i++) {
      const row = { ...template };
      for (let k = 0; k < names.length; k++) row[names[k]] = readers[k](i);
      rows[at++] = row;
    }
  }
  return rows;
}
