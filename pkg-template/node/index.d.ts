import type { ArrowFile, ReaderOptions, RecordBatch, Row, Table, WriterOptions } from './quiver.cjs';

export * from './quiver.cjs';

/**
 * Does nothing: in Node the module is ready once imported. It exists so that code written
 * for the web build (`await init()`) runs unchanged.
 */
export default function init(moduleOrPath?: unknown): Promise<void>;

/** Does nothing in Node; see `init`. */
export function initSync(module?: unknown): void;

declare module './quiver.cjs' {
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
