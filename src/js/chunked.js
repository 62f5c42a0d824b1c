// A table's column: the columns of each of its batches, read as one.

import { typeTree } from './layout.js';
import { columnsOf, FILL, Rows } from './column.js';
import { callEach, RENEW, RETIRE, rethrow } from './handed_out.js';
import { isDirect, VALUES_NOW } from './readers.js';
import { OWNER } from './owner.js';
import { valueOptions, wantsTyped } from './value_options.js';

/**
 * A column over every batch of a table (`table.getChild(name)`): `chunks` are the
 * per-batch columns; `get(i)`, `isValid(i)`, iteration and `toArray()` span them.
 */
export class ChunkedColumn {
  // Row 0 of each chunk, and the chunk the last row asked for was in: rows are mostly
  // read in order, so the next one is most often in the same chunk.
  #starts;
  #last = 0;
  // The chunks as made, which RENEW and RETIRE walk whatever a caller does to `chunks`.
  #made;
  // Whether any row is null, worked out on the first typed toArray(): the chunks' counts
  // never change, and summing them on every call cost a small chunk's copy as much again.
  #hasNulls;

  constructor(chunks, field) {
    this.chunks = chunks;
    this.#made = chunks.slice();
    this.field = field;
    this.name = field.name;
    this.type = field.type;
    this.length = 0;
    this.#starts = chunks.map((c) => {
      const start = this.length;
      this.length += c.length;
      return start;
    });
  }

  get nullCount() {
    return this.chunks.reduce((n, c) => n + c.nullCount, 0);
  }

  /** The index of the chunk that holds row `i`. */
  #chunkOf(i) {
    if (!(i >>> 0 === i && i < this.length)) {
      throw new RangeError(`row ${i} is out of range: column "${this.name}" has ${this.length} rows`);
    }
    const starts = this.#starts;
    const last = this.#last;
    if (i >= starts[last] && (last + 1 === starts.length || i < starts[last + 1])) return last;
    let lo = 0;
    let hi = starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (starts[mid] <= i) lo = mid;
      else hi = mid - 1;
    }
    return (this.#last = lo);
  }

  get(i, options) {
    const c = this.#chunkOf(i);
    return this.chunks[c].get(i - this.#starts[c], options);
  }

  isValid(i) {
    const c = this.#chunkOf(i);
    return this.chunks[c].isValid(i - this.#starts[c]);
  }

  /** Every row's value in one array, typed or not and converted as in Column.toArray. */
  toArray(options) {
    const { chunks } = this;
    const values = valueOptions(options, ['typed']);
    if (wantsTyped(options) && chunks.length > 0 && isDirect(this.type, values) && !(this.#hasNulls ??= this.nullCount > 0)) {
      const out = new chunks[0][VALUES_NOW].constructor(this.length);
      const starts = this.#starts;
      for (let c = 0; c < chunks.length; c++) out.set(chunks[c][VALUES_NOW], starts[c]);
      return out;
    }
    const out = new Array(this.length);
    chunks.forEach((chunk, c) => chunk[FILL](out, this.#starts[c], values));
    return out;
  }

  [Symbol.iterator]() {
    return new Rows(this);
  }

  [RENEW]() {
    rethrow(callEach(this.#made, RENEW));
  }

  [RETIRE]() {
    rethrow(callEach(this.#made, RETIRE));
  }
}

/**
 * Column `index` of a table, of schema `types`, from `nodes`: that column's node tree in
 * each batch (see columnsOf). Not cached here: owner.js caches it per table object, which
 * the column keeps reachable.
 */
export function makeChunkedColumn(nodes, types, index, token, memory) {
  const field = typeTree(types)[index];
  const column = new ChunkedColumn(columnsOf(nodes, field, token, memory), field);
  for (const chunk of column.chunks) chunk[OWNER] = column;
  return column;
}
