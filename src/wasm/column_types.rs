//! TypeScript declarations of what `src/js/column.js` hands out: the batch layout, the
//! type descriptors and the column objects. They have no Rust side.

use wasm_bindgen::prelude::*;

#[wasm_bindgen(typescript_custom_section)]
const COLUMN_TS: &str = r#"
/** A type in the vocabulary of apache-arrow JS (`Int`, `Utf8`, `Timestamp`, ...) with its
 *  parameters, e.g. `{ id: "Int", bitWidth: 32, signed: true }`. */
export interface TypeDescriptor {
  id: string;
  [parameter: string]: unknown;
}
/** A field: its name, type and child fields (list, list view, struct, map, union,
 *  dictionary values). */
export interface FieldDescriptor {
  name: string;
  nullable: boolean;
  type: TypeDescriptor;
  children: FieldDescriptor[];
  metadata: Record<string, string>;
}
/** Every buffer of a batch in one object (see src/wasm/layout.rs for `nodes`). */
export interface BatchLayout {
  numRows: number;
  /** JSON of `FieldDescriptor[]`. */
  types: string;
  /** Per array, depth-first: length, nullCount, offset, validity (address, bytes, bit
   *  offset), buffer count, (address, bytes) per buffer, child count, then the children.
   *  Addresses stay valid until the batch is freed. */
  nodes: number[];
}
export type ColumnValues =
  | Int8Array | Uint8Array | Int16Array | Uint16Array | Int32Array | Uint32Array
  | BigInt64Array | BigUint64Array | Float32Array | Float64Array;
/** The typed arrays `toArray()` may return for values of type `V` (see `ToArrayOptions`):
 *  any of them for `unknown`, none for strings, objects and the like. Written without
 *  `unknown extends V`, which would make `table as Table<T>` fail to compile. */
export type TypedValues<V> = V extends number
  ? Int8Array | Uint8Array | Int16Array | Uint16Array | Int32Array | Uint32Array | Float32Array | Float64Array
  : V extends bigint ? BigInt64Array | BigUint64Array
  : V extends string | boolean | symbol | object | null | undefined ? never
  : ColumnValues;
/**
 * A row's shape for the generic `Table<T>` and `RecordBatch<T>`: each column's name and
 * the type of its values as `get(i)` returns them without options, e.g.
 * `{ id: bigint; name: string | null }`. Quiver checks nothing against it: it is what
 * the caller says the schema is, as a cast would be.
 */
export type Row = Record<string, unknown>;
/**
 * One column of a batch: typed-array views of wasm memory (no copy), made again if memory
 * grew. Reading any of them after the batch is freed throws (`values`, a plain property,
 * then throws on any use). `V` is the type of its values (see `Row`).
 */
export interface Column<V = unknown> extends Iterable<V | null> {
  readonly name: string;
  readonly type: TypeDescriptor;
  readonly field: FieldDescriptor;
  readonly length: number;
  readonly nullCount: number;
  /** Fixed-width values from row 0, utf8/binary bytes, dictionary indices, bool bits,
   *  or 4 int32 words per row of a view type. */
  readonly values: ColumnValues | undefined;
  /** Bit of row 0 in a bool's `values` (0 for decoded IPC). */
  readonly bitOffset: number;
  /** Validity bits, or null when the column has none: no row is null then, except in
   *  Null, Union and RunEndEncoded columns, which have no bitmap of their own (their
   *  `isValid` and `nullCount` say which rows are null). */
  readonly validity: Uint8Array | null;
  /** Bit of row 0 in `validity` (0 for decoded IPC). */
  readonly validityBitOffset: number;
  /** `length + 1` offsets of utf8/binary/list/map rows; `length` offsets of list view
   *  rows or of a dense union. */
  readonly offsets: Int32Array | BigInt64Array | undefined;
  /** `length` sizes of list view rows: row i is `children[0]`'s items `offsets[i]` to
   *  `offsets[i] + sizes[i]`, which may overlap and come in any order. */
  readonly sizes: Int32Array | BigInt64Array | undefined;
  /** A union's type ids, one per row. */
  readonly typeIds: Int8Array | undefined;
  /** The data buffers of a utf8 or binary view column. */
  readonly dataBuffers: Uint8Array[] | undefined;
  /** Child columns of nested types (row-aligned for struct and sparse union). */
  readonly children: Column[];
  /** A dictionary column's values. */
  readonly dictionary: Column | undefined;
  /** Row i's value (bigint for 64-bit integers, string for utf8, null for nulls, ...),
   *  converted as `options` say. */
  get(i: number): V | null;
  get(i: number, options?: ValueOptions): unknown;
  /** Whether row i holds a value: `true` on a column without nulls, else a bit of the
   *  column's own copy of its bitmap, which answers after `free()` too. `i` is not
   *  checked (as in flechette): pass a row. */
  isValid(i: number): boolean;
  /** Every row's value, copied: into a typed array where the column allows one (see
   *  `ToArrayOptions.typed`), else into a JS array, `null` for null slots. */
  toArray(): (V | null)[] | TypedValues<V>;
  /** With `{ typed: false }`, always a JS array (of `V` where the value options are the
   *  defaults). */
  toArray(options: DefaultValues & { typed: false }): (V | null)[];
  toArray(options: ValueOptions & { typed: false }): unknown[];
  toArray(options?: ToArrayOptions): unknown[] | ColumnValues;
}
/**
 * How `get`, `toArray` and `table.toArray()` convert values (flechette's option names),
 * nested values too. Each default keeps the value as without options.
 */
export interface ValueOptions {
  /** Dates and timestamps as `Date`. Default `false`: epoch milliseconds (number). */
  useDate?: boolean;
  /** `false`: 64-bit ints, time64 and duration as number, a RangeError naming the column
   *  and row for a value beyond `Number.MAX_SAFE_INTEGER`. Default `true`: bigint. */
  useBigInt?: boolean;
  /** Decimals as the unscaled bigint (default, 123.45 in decimal(5, 2) is `12345n`), as a
   *  number (`123.45`), or as the exact decimal string (`"123.45"`). */
  useDecimal?: "bigint" | "number" | "string";
  /** Maps as `Map`. Default `false`: an array of [key, value] pairs. */
  useMap?: boolean;
}
/** Value options that keep every value as without options. */
export interface DefaultValues {
  useDate?: false;
  useBigInt?: true;
  useDecimal?: "bigint";
  useMap?: false;
}
/** Options of `toArray`: `typed`, and the value options. */
export interface ToArrayOptions extends ValueOptions {
  /**
   * Default `true`: copy into a typed array of the values' own class (`Float64Array`,
   * `BigInt64Array`, ...) where every row is a number or bigint as stored (ints,
   * float32/64, time, duration, as the value options leave them) and the column has no
   * nulls, as flechette and Arrow JS return; otherwise a JS array, `null` for null slots.
   * `false`: always a JS array.
   */
  typed?: boolean;
}
/** A column over every batch of a table; `chunks` are the per-batch columns. */
export interface ChunkedColumn<V = unknown> extends Iterable<V | null> {
  readonly name: string;
  readonly type: TypeDescriptor;
  readonly field: FieldDescriptor;
  readonly length: number;
  readonly nullCount: number;
  readonly chunks: Column<V>[];
  get(i: number): V | null;
  get(i: number, options?: ValueOptions): unknown;
  /** As `Column.isValid`; a row out of range is a RangeError. */
  isValid(i: number): boolean;
  toArray(): (V | null)[] | TypedValues<V>;
  toArray(options: DefaultValues & { typed: false }): (V | null)[];
  toArray(options: ValueOptions & { typed: false }): unknown[];
  toArray(options?: ToArrayOptions): unknown[] | ColumnValues;
}
"#;
