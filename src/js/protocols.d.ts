
// What protocols.js adds to the glue, for both builds: pkg-scripts/build.sh appends this
// to each entry's index.d.ts, which merges these interfaces into its glue's classes.

/**
 * What Flight calls reject with: an `Error` with `code` (the Flight status code),
 * `codeName` and `details`.
 */
export class FlightError extends Error {
  /** Made by the module only; `instanceof FlightError` recognises what it rejects with. */
  private constructor();
  code: number;
  codeName: string;
  details: Uint8Array;
}

interface IterableReader<Batch> {
  /**
   * The batches completed so far: calls `nextBatch()` until it returns `undefined`.
   * Push more bytes and iterate again for more. Each batch is yours to `free()`.
   *
   * ```js
   * reader.push(chunk);
   * for (const batch of reader) console.log(batch.numRows);
   * ```
   */
  [Symbol.iterator](): IterableIterator<Batch>;
}

interface IterableFlightStream<Batch> {
  /**
   * The batches of the stream as they arrive; each is yours to `free()`. Leaving the
   * loop early cancels the stream. Rejects with a `FlightError` if the stream fails.
   *
   * ```js
   * for await (const batch of client.doGet(ticket)) { console.log(batch.numRows); batch.free(); }
   * ```
   */
  [Symbol.asyncIterator](): AsyncIterator<Batch>;
}

interface FlightClientDoPut<Batch, Table> {
  /**
   * Uploads a Table or batches with the right-sized writer, and resolves with the
   * `app_metadata` of each PutResult. The data stays yours.
   *
   * ```js
   * const results = await client.doPut({ path: ['uploads', 'today'] }, table);
   * ```
   */
  // The descriptor type is spelled out: the decode-only build has no FlightDescriptor.
  doPut(
    descriptor: { path: string[] } | { cmd: Uint8Array | string },
    data: Table | Batch[],
  ): Promise<Uint8Array[]>;
}

/**
 * Opens an Arrow IPC file (`.arrow`, `.feather` v2) for random access. It reads the file's
 * last 10 bytes and its footer, and nothing more until `batch(i)` asks: a 2 GiB `File`
 * from `<input type=file>` is never read whole. A `Uint8Array` is read through views,
 * each byte copied once into wasm memory. Rejects with an `Error` that says what is wrong
 * if the footer is truncated or malformed. The `ArrowFile` is yours to `free()`.
 *
 * ```js
 * using file = await openFile(input.files[0]);
 * using last = await file.batch(file.numBatches - 1);
 * console.log(last.numRows, file.bytesRead);
 * ```
 */
export function openFile(source: Uint8Array | Blob, options?: ReaderOptions): Promise<ArrowFile>;

interface FileBatches<Batch> {
  /**
   * Reads batch `index`: the first time, the start of the file and the dictionaries too,
   * then only the batch's own bytes (`Blob.slice` for a Blob). The batch is yours to
   * `free()`. Rejects if the index is out of range or the batch's bytes are malformed;
   * the file stays usable for other batches, unless its dictionaries are malformed.
   *
   * ```js
   * using batch = await file.batch(3);
   * ```
   */
  batch(index: number): Promise<Batch>;
}
