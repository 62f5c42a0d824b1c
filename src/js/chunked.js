// A table's column: the columns of each of its batches, read as one.

import { typeTree } from './layout.js';
import { makeColumn } from './column.js';
import { OWNER } from './owner.js';

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
 * it per table object, which the column keeps reachable (see owner.js).
 */
export function makeChunkedColumn(layouts, types, index, token, memory) {
  const field = typeTree(types)[index];
  const column = new ChunkedColumn(layouts.map((layout) => makeColumn(layout, index, token, memory)), field);
  for (const chunk of column.chunks) chunk[OWNER] = column;
  return column;
}
