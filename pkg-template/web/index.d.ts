import type { ArrowFile, ReaderOptions, RecordBatch, Table } from './quiver.js';

export * from './quiver.js';
export { default } from './quiver.js';

declare module './quiver.js' {
  interface StreamReader extends IterableReader<RecordBatch> {}
  interface FlightStream extends IterableFlightStream<RecordBatch> {}
  interface FlightClient extends FlightClientDoPut<RecordBatch, Table> {}
  interface ArrowFile extends FileBatches<RecordBatch> {}
}
