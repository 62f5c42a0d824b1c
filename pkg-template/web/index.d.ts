import type { ArrowFile, ReaderOptions, RecordBatch, Row, Table, WriterOptions } from './quiver.js';

export * from './quiver.js';
export { default } from './quiver.js';

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
