// Uses the whole public API, so that `tsc --strict` checks the package's declarations
// (compiled twice by package.test.js: with Node's resolution and with a bundler's).
import init, {
  StreamReader,
  tableFromIPC,
  memoryStats,
  type MemoryOptions,
  type MemoryStats,
  type ReaderOptions,
  type RecordBatch,
  type Schema,
  type Table,
} from 'quiver-arrow';

export async function decode(chunks: AsyncIterable<Uint8Array>): Promise<number> {
  const memory: MemoryOptions = { resizableMemory: true };
  await init({ module_or_path: '/assets/quiver_bg.wasm', ...memory });
  const options: ReaderOptions = { maxMessageBytes: 1 << 20 };
  using reader = new StreamReader(options);
  let rows = 0;
  for await (const chunk of chunks) {
    reader.push(chunk);
    for (const batch of reader) {
      const b: RecordBatch = batch;
      const tags: Record<string, string> = b.metadata;
      b.metadata = { ...tags, seen: 'yes' };
      rows += b.numRows * (b.numColumns > 0 ? 1 : 0);
      b.free();
    }
  }
  const next: RecordBatch | undefined = reader.nextBatch();
  next?.free();
  reader.finish();
  const schema: Schema | undefined = reader.schema;
  const names: string[] = schema?.fields.map((f) => f.name) ?? [];
  const { bytesPushed, bytesCopied, messages, batches } = reader.stats;
  return rows + names.length + bytesPushed + bytesCopied + messages + batches + (reader.ended ? 1 : 0);
}

// The sources the platform hands over: StreamReader.from and tableFromIPCAsync.
import { tableFromIPCAsync, type ByteSource, type SourceOptions } from 'quiver-arrow';

export async function fromSources(response: Response, file: File, chunks: AsyncIterable<Uint8Array>): Promise<number> {
  const options: SourceOptions = { maxMessageBytes: 1 << 20, signal: AbortSignal.timeout(1000) };
  using reader: StreamReader = StreamReader.from(response, options);
  let rows = 0;
  for await (const batch of reader) {
    const b: RecordBatch = batch;
    rows += b.numRows;
    b.free();
  }
  const sources: ByteSource[] = [file, file.stream(), chunks, response];
  using table: Table = await tableFromIPCAsync(sources[0], { signal: new AbortController().signal });
  return rows + table.numRows + reader.stats.bytesCopied;
}

export function whole(bytes: Uint8Array | Uint8Array[]): number {
  using table: Table = tableFromIPC(bytes);
  const stats: MemoryStats = memoryStats();
  return table.numRows + table.batches.length + table.schema.fields.length + stats.liveBytes;
}

// The Flight client: every call, its options and its results.
import {
  FlightClient,
  FlightError,
  type FlightEndpoint,
  type FlightInfo,
  type FlightStreamChunk,
  type FlightStreamStats,
  type PollInfo,
  type RecordBatch as Batch,
} from 'quiver-arrow';

export async function flight(url: string, table: Table): Promise<number> {
  const client = await FlightClient.connect(url, { token: 't', protocols: [], signal: AbortSignal.timeout(10_000) });
  const flights: FlightInfo[] = await client.listFlights();
  const info: FlightInfo = await client.getFlightInfo({ path: ['a'] });
  await client.getFlightInfo({ cmd: new Uint8Array([1]) });
  const schema: Schema = await client.getSchema({ cmd: 'SELECT 1' });
  let poll: PollInfo = await client.pollFlightInfo({ cmd: 'SELECT 2' });
  while (poll.descriptor) {
    const progress: number | undefined = poll.progress;
    console.log(progress, poll.expirationTimeMs, poll.info?.endpoints.length);
    poll = await client.pollFlightInfo(poll.descriptor, { signal: AbortSignal.timeout(60_000) });
  }
  // Complete: no descriptor, so `info` is there.
  const complete: FlightInfo = poll.info;
  console.log(complete.endpoints.length);
  const renewed: FlightEndpoint = await client.renewFlightEndpoint(info.endpoints[0], {});
  console.log(renewed.expirationTimeMs);
  const controller = new AbortController();
  const stream = client.doGet(info.endpoints[0], {
    signal: controller.signal,
    onProgress: (p) => console.log(p.bytesReceived, p.batches, p.rows),
    creditWindow: 1 << 24,
  });
  let rows = 0;
  try {
    for await (const batch of stream) {
      const b: Batch = batch;
      rows += b.numRows;
      b.free();
    }
  } catch (error) {
    if (error instanceof FlightError) console.log(error.code, error.codeName, error.details);
  }
  const stats: FlightStreamStats = stream.stats;
  const all: Table = await client.fetchAll(info, { concurrency: 2, ordered: false, connections: 2 });
  const next: Batch | undefined = await client.doGet('t', { location: 'grpc://h:1' }).next();
  const chunk: FlightStreamChunk | undefined = await client.doGet('t').readChunk();
  const appMetadata: Uint8Array | null | undefined = chunk?.appMetadata;
  chunk?.data?.free();
  const results: Uint8Array[] = await client.doPut({ path: ['up'] }, table);
  const put = client.startPut({ path: ['up'] });
  if (next) await put.write(next);
  if (next && appMetadata) await put.write(next, appMetadata);
  await put.writeMetadata(new Uint8Array([1]));
  const more: Uint8Array[] = await put.finish();
  const bodies: Uint8Array[] = await client.doAction('dump', new Uint8Array());
  const actions = await client.listActions();
  const sqlRows = await flightSql(client, controller.signal);
  client.close();
  return rows + flights.length + schema.fields.length + stats.bytesCopied + all.numRows
    + results.length + more.length + bodies.length + actions.length + sqlRows;
}

// Flight SQL: every `client.sql` call and a prepared statement's.
async function flightSql(client: FlightClient, signal: AbortSignal): Promise<number> {
  const sql = client.sql;
  const info: FlightInfo = await sql.query('SELECT 1', { signal });
  using table: Table = await sql.execute('SELECT 1', { signal, concurrency: 2, ordered: true, creditWindow: 1 << 20 });
  let rows = table.numRows;
  for await (const batch of sql.stream('SELECT 1', { signal })) {
    const b: Batch = batch;
    rows += b.numRows;
    b.free();
  }
  const updated: number = await sql.executeUpdate('DELETE FROM t', { signal });
  const stmt = await sql.prepare('SELECT * FROM t WHERE id = $1', { signal });
  const names: string[] = [...(stmt.datasetSchema?.fields ?? []), ...(stmt.parameterSchema?.fields ?? [])]
    .map((f) => f.name);
  const parameters: Batch = table.batches[0];
  await stmt.bind(parameters, { signal });
  await stmt.bind([parameters]);
  const prepared: FlightInfo = await stmt.query();
  using results: Table = await stmt.execute({ signal });
  const count: number = await stmt.executeUpdate(parameters, { signal });
  await stmt.close({ signal });
  const metadata: Table[] = [
    await sql.getCatalogs({ signal }),
    await sql.getDbSchemas({ catalog: 'c', pattern: 'p%', signal }),
    await sql.getTables({ catalog: 'c', dbSchemaPattern: 's', tablePattern: 't%', tableTypes: ['VIEW'], includeSchema: true }),
    await sql.getTableTypes(),
    await sql.getSqlInfo({ info: [0, 1] }),
    await sql.getPrimaryKeys({ table: 't' }),
  ];
  const status: 'cancelled' | 'cancelling' | 'notCancellable' | 'unspecified' = await sql.cancel(info);
  await client.getFlightInfo({ sql: '{"type":"getCatalogs"}' });
  for (const t of metadata) t.free();
  return rows + updated + names.length + prepared.endpoints.length + results.numRows + count + status.length;
}

// The writer, columns, apache-arrow interop and the web build's initSync.
import * as arrow from 'apache-arrow';
import {
  initSync,
  messageSize,
  StreamWriter,
  tableToIPC,
  toArrowJS,
  type BatchLayout,
  type Chunks,
  type ChunkedColumn,
  type Column,
  type ColumnValues,
  type MessageSizes,
  type TypeDescriptor,
  type ValueOptions,
  type WriterOptions,
  type WriterStats,
} from 'quiver-arrow';

export function write(table: Table, module: WebAssembly.Module): Uint8Array[] {
  initSync({ module, resizableMemory: false });
  const options: WriterOptions = { compression: 'zstd', zstdLevel: 3, maxChunkBytes: 1 << 16, chunkSizing: 'exact', dictionaryDeltas: true };
  const whole: Uint8Array = tableToIPC(table, options);
  using writer = StreamWriter.forTable(table, { compression: 'lz4' });
  const out: Uint8Array[] = [whole];
  for (const batch of table.batches) {
    const sizes: MessageSizes = writer.messageSizes(batch);
    const planned: number = messageSize(batch, options) + (sizes.schema ?? 0) + sizes.recordBatch;
    using chunks: Chunks = writer.write(batch);
    const offsets: Uint32Array = chunks.offsets();
    const lengths: Uint32Array = chunks.lengths();
    out.push(chunks.toUint8Array(), ...chunks.toArray(), chunks.chunk(0));
    console.log(planned, offsets.length + lengths.length, chunks.count, chunks.byteLength);
    batch.free();
  }
  using end = writer.finish();
  out.push(end.toUint8Array());
  const stats: WriterStats = writer.stats;
  console.log(stats.messages, stats.batches, stats.bytesWritten, stats.extraBytesCopied);
  return out;
}

// The writer as a TransformStream.
export async function upload(url: string, table: Table): Promise<Response> {
  const encoder: TransformStream<RecordBatch, Uint8Array> = StreamWriter.transformStream({ compression: 'lz4' });
  // TypeScript's DOM library does not know `duplex` yet, which streamed bodies need.
  const init: RequestInit & { duplex: 'half' } = { method: 'POST', body: encoder.readable, duplex: 'half' };
  const sent = fetch(url, init);
  const writer = encoder.writable.getWriter();
  for (const batch of table.batches) await writer.write(batch);
  await writer.close();
  return sent;
}

export function toFile(batches: ReadableStream<RecordBatch>, file: WritableStream<Uint8Array>): Promise<void> {
  return batches.pipeThrough(StreamWriter.transformStream()).pipeTo(file);
}

export function columns(table: Table): number {
  let total = 0;
  for (const batch of table.batches) {
    const layout: BatchLayout = batch.layout();
    const price: Column = batch.column('price');
    const type: TypeDescriptor = price.type;
    const all: Column[] = batch.columns();
    for (let i = 0; i < price.length; i++) if (price.isValid(i)) total += Number(price.get(i));
    const children: Column[] = price.children;
    const dictionary: Column | undefined = price.dictionary;
    const sizes: Int32Array | BigInt64Array | undefined = price.sizes;
    console.log(layout, type, all.length, children.length, dictionary?.length, sizes?.length, price.values, price.validity,
      price.offsets, price.typeIds, price.dataBuffers, price.nullCount, price.field.name, price.name);
    const rows: Record<string, unknown>[] = batch.toArray();
    const asApps: ValueOptions = { useDate: true, useBigInt: false, useDecimal: 'string', useMap: true };
    const converted: unknown[] = price.toArray({ ...asApps, typed: false });
    const maybeTyped: unknown[] | ColumnValues = price.toArray(asApps);
    total += rows.length + [...price].length + price.toArray().length + converted.length + maybeTyped.length;
    total += batch.toArray({ useDecimal: 'number' }).length + Number(price.get(0, asApps));
    const js: arrow.RecordBatch = batch.toArrowJS(arrow, { zeroCopy: true });
    total += js.numRows;
    batch.free();
  }
  const chunked: ChunkedColumn = table.getChild(0);
  total += chunked.chunks.length + chunked.toArray().length + (chunked.isValid(0) ? 1 : 0);
  total += chunked.toArray({ typed: true }).length + chunked.toArray({ typed: false, useDate: true }).length;
  total += Number(chunked.get(0, { useBigInt: false })) + table.toArray({ useMap: true }).length;
  const copied: arrow.Table = table.toArrowJS(arrow, undefined);
  const viaFunction: arrow.Table = toArrowJS(table, arrow, { zeroCopy: false });
  return total + copied.numRows + viaFunction.numRows + table.toArray().length + table.numColumns;
}

// Typed rows: Table<T> and RecordBatch<T> over the caller's row type. Each ts-
// expect-error line below fails the compile if the types stop catching its mistake.
type Trade = { id: bigint; symbol: string | null; price: number };

export async function typedRows(bytes: Uint8Array, response: Response, untyped: Table): Promise<number> {
  using trades = tableFromIPC<Trade>(bytes);
  const ids: ChunkedColumn<bigint> = trades.getChild('id');
  const id: bigint | null = ids.get(0);
  const idValues: (bigint | null)[] | BigInt64Array | BigUint64Array = ids.toArray();
  const idList: (bigint | null)[] = ids.toArray({ typed: false });
  const asNumbers = { typed: false as const, useBigInt: false };
  // @ts-expect-error: with useBigInt: false the values are numbers, so unknown.
  const numbersAsBigints: (bigint | null)[] = ids.toArray(asNumbers);
  // Strings are never a typed array.
  const symbols: (string | null)[] = trades.getChild('symbol').toArray();
  // @ts-expect-error: by default, bigints may come as a typed array.
  const notAlwaysList: (bigint | null)[] = ids.toArray();
  const rows: Trade[] = trades.toArray();
  const first: Trade | undefined = trades.batches[0]?.toArray()[0];
  const prices: Column<number> | undefined = trades.batches[0]?.column('price');
  const price: number | null | undefined = prices?.get(0);
  for (const value of ids) if (value !== null) console.log(value + 1n);
  // @ts-expect-error: not a column of Trade.
  trades.getChild('volume');
  // @ts-expect-error: ids are bigint, not number.
  const wrong: number | null = ids.get(0);
  // @ts-expect-error: options may change the value's type, so it is unknown.
  const converted: bigint | null = ids.get(0, { useBigInt: false });
  // By index, and with options, the column is untyped.
  const byIndex: ChunkedColumn = trades.getChild(0);
  const loose: Record<string, unknown>[] = trades.toArray({ useDate: true });
  using fetched = await tableFromIPCAsync<Trade>(response);
  const fetchedRows: Trade[] = fetched.toArray();
  // A table from elsewhere is typed with a cast.
  const cast = untyped as Table<Trade>;
  const castIds: ChunkedColumn<bigint> = cast.getChild('id');
  console.log(id, idValues, idList, numbersAsBigints, notAlwaysList, symbols, first, price, wrong, converted, byIndex, loose, castIds);
  return rows.length + fetchedRows.length;
}

// Data built in JavaScript: fromArrowJS and batchFromColumns.
import { batchFromColumns, fromArrowJS, importStats, type ImportStats } from 'quiver-arrow';

export function fromJavaScript(arrowTable: arrow.Table, arrowBatch: arrow.RecordBatch): Uint8Array {
  const before: ImportStats = importStats();
  using imported: Table = fromArrowJS(arrowTable);
  const batch: RecordBatch = fromArrowJS(arrowBatch);
  const arrowAgain: arrow.RecordBatch = toArrowJS(batch, arrow);
  const either: RecordBatch | Table = fromArrowJS(Math.random() < 0.5 ? arrowTable : arrowBatch);
  either.free();
  batch.free();
  using built: RecordBatch = batchFromColumns({
    id: BigInt64Array.from([1n, 2n]),
    name: ['a', null],
    flag: [true, null],
    score: [0.5, undefined],
    bytes: Uint8Array.of(1, 2),
  });
  // @ts-expect-error: a column holds one kind of value
  batchFromColumns({ mixed: ['a', 1] });
  // @ts-expect-error: a Uint8ClampedArray has no Arrow type here
  batchFromColumns({ clamped: new Uint8ClampedArray(2) });
  console.log(importStats().bytesCopied - before.bytesCopied, importStats().batches, built.numRows, arrowAgain.numRows);
  const one: Uint8Array = tableToIPC(built);
  return one.length > 0 ? tableToIPC(imported) : one;
}

// IPC files: random access with openFile, and writing them.
import { ArrowFile, FileWriter, openFile } from 'quiver-arrow';

export async function files(source: Blob | Uint8Array, table: Table): Promise<Blob> {
  using file: ArrowFile = await openFile(source, { maxMessageBytes: 1 << 20 });
  using batch: RecordBatch = await file.batch(file.numBatches - 1);
  const seen: number = batch.numRows + file.bytesRead + file.schema.fields.length;
  const bytes = tableToIPC(table, { format: 'file', compression: 'lz4' });
  using writer = FileWriter.forTable(table, { compression: 'zstd' });
  // What the writer hands out is typed over an ArrayBuffer, as fetch and Blob want it
  // (TypeScript 5.7+ tells ArrayBuffer from SharedArrayBuffer views).
  const upload: RequestInit = { method: 'POST', body: tableToIPC(table) };
  const parts: BlobPart[] = [bytes, batch.toIPC(), table.toIPC()];
  for (const b of table.batches) {
    using chunks = writer.write(b);
    parts.push(...chunks.toArray().map((c) => c.slice()));
  }
  using end = writer.finish();
  parts.push(...end.toArray().map((c) => c.slice()), end.toUint8Array(), end.chunk(0));
  console.log(upload.method);
  return new Blob(parts, { type: `${seen + bytes.length + writer.stats.bytesWritten}` });
}
