
// What protocols.js adds to the glue, for both builds: pkg-scripts/build.sh appends this
// to each entry's index.d.ts, which merges these interfaces into its glue's classes, with
// './quiver.js' renamed to the node glue's './quiver.cjs' in the node build.

import type { ArrowFile, ReaderOptions, RecordBatch, Row, Table, WriterOptions } from './quiver.js';

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
   * The next batch, or `undefined` at the end of the stream: `readChunk()` without the
   * `app_metadata`. Rejects with a `FlightError` if the stream failed, after the batches
   * that came before the failure.
   */
  next(): Promise<Batch | undefined>;
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
   * `app_metadata` of each PutResult. The data stays yours. Aborting `signal` cancels the
   * upload (the server's call is cancelled, never completed with part of it) and rejects
   * with a `FlightError` (code 1, CANCELLED); an abort after the last batch was sent may
   * come after the server has acted on the whole upload.
   *
   * ```js
   * const results = await client.doPut({ path: ['uploads', 'today'] }, table);
   * ```
   */
  // The descriptor type is spelled out: the decode-only build has no FlightDescriptor.
  doPut(
    descriptor: { path: string[] } | { cmd: Uint8Array | string } | { sql: string },
    data: Table | Batch[],
    options?: { signal?: AbortSignal },
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
   * the file stays usable for other batches, unless its schema message or its
   * dictionaries are malformed (then every later call rejects).
   *
   * ```js
   * using batch = await file.batch(3);
   * ```
   */
  batch(index: number): Promise<Batch>;
}

/**
 * What `StreamReader.from` and `tableFromIPCAsync` read: a fetch `Response` (which must be
 * OK), a `ReadableStream` of `Uint8Array` (a Response's `body`, a Blob's `stream()`), a
 * `Blob` or `File`, or any async iterable of `Uint8Array` (a Node stream, a generator).
 */
export type ByteSource = Response | ReadableStream<Uint8Array> | Blob | AsyncIterable<Uint8Array>;

/** The reader's limits, and a signal that cancels the source and rejects with its reason. */
export interface SourceOptions extends ReaderOptions {
  signal?: AbortSignal;
}

interface StreamReaderFrom<Reader> {
  /**
   * A reader for `source`, which `for await` reads: it pushes each chunk as it arrives
   * (each byte is copied once, into wasm memory) and yields the batches, each yours to
   * `free()`. The reader is yours to free too; its `stats`, `schema` and `ended` work as
   * for one you push to. ReadableStreams are read with `getReader()`, so this works in
   * Safari too.
   *
   * - The end of the source ends the stream: the loop throws if it ended inside a
   *   message or before the schema.
   * - Leaving the loop early (`break`, an error) cancels the source.
   * - `signal` cancels the source at once, and the loop rejects with `signal.reason`.
   * - Throws at once for a Response that is not OK, naming its status.
   *
   * A source is read once: a second `for await` throws.
   *
   * ```js
   * using reader = StreamReader.from(await fetch('/data.arrows'), { signal });
   * for await (const batch of reader) { console.log(batch.numRows); batch.free(); }
   * console.log(reader.stats.bytesCopied);
   * ```
   */
  (source: ByteSource, options?: SourceOptions): Reader;
}

interface AsyncIterableReader<Batch> {
  /**
   * The batches of the source a reader from `StreamReader.from` was made for, as they
   * arrive; each is yours to `free()`. Throws for a reader made with `new StreamReader()`.
   */
  [Symbol.asyncIterator](): AsyncIterator<Batch>;
}

/**
 * A whole IPC stream or file from `source` (what `StreamReader.from` takes), in one
 * `Table` that is yours to free. A stream's chunks are pushed as they arrive, so the body
 * is never held whole in JavaScript; a file (it starts with the magic `ARROW1`) is read
 * through its footer, so its chunks are kept until the last one and then copied into
 * wasm memory once, as `tableFromIPC` reads them. `tableFromIPC(bytes)` stays
 * synchronous, for bytes you already have; `openFile` reads one batch of a file at a time.
 *
 * ```js
 * using table = await tableFromIPCAsync(await fetch('/data.arrows'));
 * ```
 */
export function tableFromIPCAsync<T extends Row = Row>(
  source: ByteSource,
  options?: SourceOptions,
): Promise<Table<T>>;

interface StreamWriterTransformStream<Batch, Options> {
  /**
   * The writer as a `TransformStream`: Quiver batches in, the IPC stream's bytes out, in
   * the writer's right-sized chunks (one per message, or pieces of at most
   * `maxChunkBytes`). The first batch sets the schema; closing writes the end-of-stream
   * marker, and closing before any batch errors the stream.
   *
   * - Each batch written becomes the stream's, which frees it once written (write
   *   `table.batches`, new handles on every read, to keep a table).
   * - Each chunk is a `Uint8Array` over an `ArrayBuffer` of its own, which you may keep,
   *   transfer or hand to `fetch` or a `Blob`: it is copied out of wasm memory when its
   *   batch is written, and never changes after.
   *
   * ```js
   * const encoder = StreamWriter.transformStream({ compression: 'zstd' });
   * const upload = fetch(url, { method: 'POST', body: encoder.readable, duplex: 'half' });
   * const writer = encoder.writable.getWriter();
   * for (const batch of table.batches) await writer.write(batch);
   * await writer.close();
   * await upload;
   * ```
   */
  (options?: Options): TransformStream<Batch, Uint8Array<ArrayBuffer>>;
}

interface FlightClientRenew {
  /**
   * Asks the server to keep an endpoint readable for longer (the RenewFlightEndpoint
   * action, which the gateway encodes) and resolves with the endpoint the server answers,
   * with its new `expirationTimeMs`. The endpoint goes whole, with its `appMetadata`. A
   * bad endpoint or option throws a `TypeError`; aborting `signal` rejects with
   * CANCELLED.
   *
   * ```js
   * const renewed = await client.renewFlightEndpoint(info.endpoints[0]);
   * ```
   */
  // The endpoint type is spelled out: the decode-only build has no FlightEndpoint.
  renewFlightEndpoint(
    endpoint: {
      ticket: Uint8Array | string;
      locations?: string[];
      expirationTimeMs?: number;
      appMetadata?: Uint8Array | string;
    },
    options?: { signal?: AbortSignal },
  ): Promise<{ ticket: Uint8Array; locations: string[]; expirationTimeMs?: number; appMetadata: Uint8Array }>;
}

/** The FlightInfo type of a client, read from its `getFlightInfo` (absent in decode-only). */
type InfoOf<Client> = Client extends { getFlightInfo(descriptor: never): Promise<infer Info> } ? Info : never;

/** The schema type of a FlightInfo type. */
type SchemaOf<Info> = Info extends { schema: infer Schema } ? Schema : never;

/** Options of every `client.sql` call: aborting the signal rejects the call with CANCELLED. */
interface SqlCallOptions {
  /**
   * Aborting rejects the call with a `FlightError` (code 1, CANCELLED) and cancels it on
   * the server, except `prepare`, which is left to finish so that its statement is closed.
   */
  signal?: AbortSignal;
}

/** Options of the `client.sql` calls that read results: `fetchAll`'s (see `FetchAllOptions`). */
interface SqlFetchOptions extends SqlCallOptions {
  /** Endpoints read at once (default: all of them). */
  concurrency?: number;
  /** Read endpoints one after another, in order. */
  ordered?: boolean;
  /** Sockets to spread the endpoints over (default 1); extra ones are closed after. */
  connections?: number;
  creditWindow?: number;
}

interface FlightClientSql<Batch, Table> {
  /**
   * Flight SQL on this connection. The gateway encodes Flight SQL's messages; tables
   * returned are yours to `free()`.
   *
   * ```js
   * using table = await client.sql.execute('SELECT * FROM trips WHERE fare > 10');
   * ```
   */
  readonly sql: FlightSqlClient<Batch, Table, InfoOf<this>>;
}

/** The Flight SQL calls of a FlightClient (`client.sql`). */
interface FlightSqlClient<Batch, Table, Info> {
  /** The FlightInfo of a query; `fetchAll` or `doGet` read its endpoints. */
  query(sql: string, options?: SqlCallOptions): Promise<Info>;
  /** Runs a query and reads all of its endpoints into one Table (`fetchAll`'s options apply). */
  execute(sql: string, options?: SqlFetchOptions): Promise<Table>;
  /** Runs a query and yields its batches as they arrive; each is yours to `free()`. */
  stream(sql: string, options?: SqlCallOptions): AsyncGenerator<Batch, void, undefined>;
  /** Runs an update (CommandStatementUpdate); resolves with the affected row count. */
  executeUpdate(sql: string, options?: SqlCallOptions): Promise<number>;
  /**
   * Prepares a statement.
   *
   * ```js
   * const stmt = await client.sql.prepare('SELECT * FROM trips WHERE city_id = $1');
   * await stmt.bind(batchFromColumns({ $1: BigInt64Array.of(3n) }));
   * using table = await stmt.execute();
   * await stmt.close();
   * ```
   */
  prepare(sql: string, options?: SqlCallOptions): Promise<PreparedStatement<Batch, Table, Info>>;
  /** The catalogs: column `catalog_name`. */
  getCatalogs(options?: SqlCallOptions): Promise<Table>;
  /** The schemas of `catalog` whose names match `pattern` (SQL LIKE: `%`, `_`). */
  getDbSchemas(options?: SqlCallOptions & { catalog?: string; pattern?: string }): Promise<Table>;
  /** The tables matching the filters; `includeSchema` adds `table_schema`, each an IPC schema. */
  getTables(options?: SqlCallOptions & {
    catalog?: string;
    dbSchemaPattern?: string;
    tablePattern?: string;
    tableTypes?: string[];
    includeSchema?: boolean;
  }): Promise<Table>;
  /** The table types of the server. */
  getTableTypes(options?: SqlCallOptions): Promise<Table>;
  /** SqlInfo entries by id (Flight SQL's SqlInfo enum); none asks for all. */
  getSqlInfo(options?: SqlCallOptions & { info?: number[] }): Promise<Table>;
  /** The primary key columns of `table`. */
  getPrimaryKeys(options: SqlCallOptions & { catalog?: string; dbSchema?: string; table: string }): Promise<Table>;
  /** Asks the server to cancel the query of `info` (CancelFlightInfo). */
  cancel(info: Info, options?: SqlCallOptions): Promise<'cancelled' | 'cancelling' | 'notCancellable' | 'unspecified'>;
}

/** A prepared statement on the server; `close()` it when done. */
interface PreparedStatement<Batch, Table, Info> {
  /** The schema of its results, as the server announced it. */
  readonly datasetSchema: SchemaOf<Info>;
  /** The schema of its parameters (`$1`, `$2`, ... for DataFusion). */
  readonly parameterSchema: SchemaOf<Info>;
  /** Binds parameters (one row) for `execute`, through DoPut. The data stays yours. */
  bind(parameters: Batch | Table | Batch[], options?: SqlCallOptions): Promise<void>;
  /** The FlightInfo of the statement with its bound parameters. */
  query(options?: SqlCallOptions): Promise<Info>;
  /** Runs it and reads all of its endpoints into one Table. */
  execute(options?: SqlFetchOptions): Promise<Table>;
  /** Runs it as an update with `parameters`, if given; resolves with the row count the server reports. */
  executeUpdate(parameters?: Batch | Table | Batch[], options?: SqlCallOptions): Promise<number>;
  /**
   * Releases it on the server, after the `bind` calls in flight have settled (so the
   * handle released is the last one the server gave). From the call on, the other calls
   * reject; once released, a second `close()` does nothing. A `close()` made while one is
   * in progress shares it; one that failed (an abort) can be retried.
   */
  close(options?: SqlCallOptions): Promise<void>;
}

declare module './quiver.js' {
  interface StreamReader extends IterableReader<RecordBatch>, AsyncIterableReader<RecordBatch> {}
  namespace StreamReader {
    const from: StreamReaderFrom<StreamReader>;
  }
  namespace StreamWriter {
    const transformStream: StreamWriterTransformStream<RecordBatch, WriterOptions>;
  }
  interface FlightStream extends IterableFlightStream<RecordBatch> {}
  interface FlightClient extends FlightClientDoPut<RecordBatch, Table>, FlightClientSql<RecordBatch, Table>,
    FlightClientRenew {}
  interface ArrowFile extends FileBatches<RecordBatch> {}
}
