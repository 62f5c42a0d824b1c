import type { RecordBatch } from './quiver.cjs';

export * from './quiver.cjs';

/**
 * Does nothing: in Node the module is ready once imported. It exists so that code written
 * for the web build (`await init()`) runs unchanged.
 */
export default function init(moduleOrPath?: unknown): Promise<void>;

/** Does nothing in Node; see `init`. */
export function initSync(module?: unknown): void;

declare module './quiver.cjs' {
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
