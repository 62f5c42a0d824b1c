import type { RecordBatch } from './quiver.js';

export * from './quiver.js';
export { default } from './quiver.js';

declare module './quiver.js' {
  interface StreamReader {
    /**
     * The batches completed so far: calls `nextBatch()` until it returns `undefined`.
     * Push more bytes and iterate again for more. Each batch is yours to `free()`.
     *
     * ```js
     * reader.push(chunk);
     * for (const batch of reader) console.log(batch.numRows);
     * ```
     */
    [Symbol.iterator](): IterableIterator<RecordBatch>;
  }
}
