// Uses the whole public API, so that `tsc --strict` checks the package's declarations
// (compiled twice by package.test.js: with Node's resolution and with a bundler's).
import init, {
  StreamReader,
  tableFromIPC,
  memoryStats,
  type MemoryStats,
  type ReaderOptions,
  type RecordBatch,
  type Schema,
  type Table,
} from 'quiver-arrow';

export async function decode(chunks: AsyncIterable<Uint8Array>): Promise<number> {
  await init();
  const options: ReaderOptions = { maxMessageBytes: 1 << 20 };
  using reader = new StreamReader(options);
  let rows = 0;
  for await (const chunk of chunks) {
    reader.push(chunk);
    for (const batch of reader) {
      const b: RecordBatch = batch;
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

export function whole(bytes: Uint8Array | Uint8Array[]): number {
  using table: Table = tableFromIPC(bytes);
  const stats: MemoryStats = memoryStats();
  return table.numRows + table.batches.length + table.schema.fields.length + stats.liveBytes;
}

// The Flight client: every call, its options and its results.
import {
  FlightClient,
  FlightError,
  type FlightInfo,
  type FlightStreamStats,
  type RecordBatch as Batch,
} from 'quiver-arrow';

export async function flight(url: string, table: Table): Promise<number> {
  const client = await FlightClient.connect(url, { token: 't', protocols: [] });
  const flights: FlightInfo[] = await client.listFlights();
  const info: FlightInfo = await client.getFlightInfo({ path: ['a'] });
  await client.getFlightInfo({ cmd: new Uint8Array([1]) });
  const schema: Schema = await client.getSchema({ cmd: 'SELECT 1' });
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
  const results: Uint8Array[] = await client.doPut({ path: ['up'] }, table);
  const put = client.startPut({ path: ['up'] });
  if (next) await put.write(next);
  const more: Uint8Array[] = await put.finish();
  const bodies: Uint8Array[] = await client.doAction('dump', new Uint8Array());
  const actions = await client.listActions();
  client.close();
  return rows + flights.length + schema.fields.length + stats.bytesCopied + all.numRows
    + results.length + more.length + bodies.length + actions.length;
}
