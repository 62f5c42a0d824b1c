// The benchmark suites, in the order bench.sh runs them. Each exports `run(libs, files,
// options)` returning result rows and `tables(results, env)` returning markdown.
import { runAccessorsBench, accessorsTables } from './accessors.js';
import { runFlightBench, flightTables } from './flight.js';
import { runReaderBench, readerTables } from './reader.js';
import { runScanBench, scanTables } from './scan.js';
import { runViewsBench, viewsTables } from './views.js';
import { runWriterBench, writerTables } from './writer.js';

export const suites = {
  reader: { run: runReaderBench, tables: readerTables },
  views: { run: runViewsBench, tables: viewsTables },
  scan: { run: runScanBench, tables: scanTables },
  accessors: { run: runAccessorsBench, tables: accessorsTables },
  writer: { run: runWriterBench, tables: writerTables },
  // Chromium only: it needs the gateway bench/browser.mjs starts (in Node it reports nothing).
  flight: { run: runFlightBench, tables: flightTables },
};
