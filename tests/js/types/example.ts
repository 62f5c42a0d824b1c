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
