// The benchmark suites, in the order bench.sh runs them. Each exports `run(libs, files,
// options)` returning result rows and `tables(results, env)` returning markdown.
import { runAccessorsBench, accessorsTables } from './accessors.js';
import { runFilesBench, filesTables } from './files.js';
import { runFlightBench, flightTables } from './flight.js';
import { runFlightSqlBench, flightSqlTables } from './flight_sql.js';
import { runReaderBench, readerTables } from './reader.js';
import { runScanBench, scanTables } from './scan.js';
import { runViewsBench, viewsTables } from './views.js';
import { runWriterBench, writerTables } from './writer.js';

export const suites = {
  reader: { run: runReaderBench, tables: readerTables },
  files: { run: runFilesBench, tables: filesTables },
  views: { run: runViewsBench, tables: viewsTables },
  scan: { run: runScanBench, tables: scanTables },
  accessors: { run: runAccessorsBench, tables: accessorsTables },
  writer: { run: runWriterBench, tables: writerTables },
  // Browsers only: it needs the gateway bench/browser.mjs starts (in Node it reports nothing).
  flight: { run: runFlightBench, tables: flightTables },
  // Chromium only: the Flight SQL fixture, its gateway and arrow-flight's native client.
  flightsql: { run: runFlightSqlBench, tables: flightSqlTables },
};

/**
 * The suites bench.sh also runs in Firefox and WebKit (issue 34): reading streams and
 * files, column access and Flight. The writer runs in Chromium and Node only.
 */
export const EVERY_ENGINE = ['reader', 'files', 'views', 'scan', 'accessors', 'flight'];

/** Few rounds and no minimum time per cell (bench.sh --quick): checks the path, not the figures. */
export const QUICK = { rounds: 1, minMs: 0 };
