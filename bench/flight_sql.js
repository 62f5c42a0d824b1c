// The Flight SQL benchmark (issue 30), in Chromium: bench/browser.mjs starts the Flight SQL
// fixture (tests/fixtures/flight-sql-server, `serve --bench`: datafusion-flight-sql-server
// over an in-memory table of int64, int32, float64 and utf8 columns in DataFusion's 8192-row
// batches) and a release quiver-gateway in front of it, and opens the page with no devtools
// client attached (bench/launch.mjs). In interleaved rounds, in a rotating order, the same
// query of about 256 MiB of Arrow IPC (`SELECT ... FROM bench LIMIT n`) three ways:
// - "native": arrow-flight's own Flight SQL client (the fixture's `flight-sql-read`, a
//   release build), decoding every batch, run by browser.mjs while the page waits;
// - "raw": GetFlightInfo and DoGet through the gateway, the protocol by hand, frames counted
//   and dropped: the gateway's raw delivery;
// - "decoded": `client.sql.stream(sql)`, each batch counted and freed.
// Each clock starts once connected, at the query. Every mode's MiB/s is over the IPC bytes
// the gateway delivers for the query, so that their ratios are ratios of time.
import { frameCounter } from './raw_frames.js';
import { table, fmt } from './timing.js';

const MiB = 1 << 20;
const SUBPROTOCOL = 'quiver-flight.v1';
const MODES = ['native', 'raw', 'decoded'];

const query = (rows) => `SELECT id, city_id, fare, tip, label FROM bench LIMIT ${rows}`;

/**
 * The query through the gateway at `url`, the protocol by hand: GetFlightInfo with a `sql`
 * descriptor, then a DoGet of its one endpoint, granting credit back as bytes arrive.
 * Resolves with the payload bytes received and the seconds from the query to the status.
 */
function rawQuery(url, sql) {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, [SUBPROTOCOL]);
    ws.binaryType = 'arraybuffer';
    let window;
    let frames;
    let start;
    let endpoints;
    const fail = (error) => {
      ws.close();
      reject(error);
    };
    ws.onmessage = ({ data }) => {
      if (typeof data !== 'string') return frames.count(data);
      const message = JSON.parse(data);
      if (message.type === 'hello') {
        window = message.creditWindow;
        frames = frameCounter(ws, 2, window);
        start = performance.now();
        const descriptor = { sql: JSON.stringify({ type: 'statementQuery', query: sql }) };
        ws.send(JSON.stringify({ type: 'getFlightInfo', stream: 1, descriptor }));
      } else if (message.type === 'flightInfo') {
        endpoints = message.info.endpoints;
      } else if (message.type === 'status' && message.code !== 0) {
        fail(new Error(`${message.name}: ${message.message}`));
      } else if (message.type === 'status' && message.stream === 1) {
        if (endpoints?.length !== 1) return fail(new Error(`expected a FlightInfo with one endpoint, found ${endpoints?.length ?? 'none'}`));
        const { ticket } = endpoints[0];
        ws.send(JSON.stringify({ type: 'doGet', stream: 2, ticket, credit: window }));
      } else if (message.type === 'status') {
        ws.close();
        resolve({ bytes: frames.received, seconds: (performance.now() - start) / 1000 });
      }
    };
    ws.onerror = () => reject(new Error('raw socket failed'));
  });
}

/** The query through `client.sql.stream`, each batch counted and freed; resolves with its rows. */
async function decodedQuery(client, sql) {
  let rows = 0;
  for await (const batch of client.sql.stream(sql)) {
    rows += batch.numRows;
    batch.free();
  }
  return rows;
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/**
 * Runs the query `rounds` times each way (default 7) after one untimed round, and returns
 * a row per mode; without a Flight SQL gateway (Node) there is nothing to run. `sql.mib`
 * (default 256) is the query's volume, `sql.native(query)` runs it natively.
 */
export async function runFlightSqlBench({ quiver }, files, { sql, rounds = 7, log = () => {} } = {}) {
  if (!sql) return [];
  const probeRows = 65536;
  const probe = await rawQuery(sql.url, query(probeRows));
  const rows = Math.round(((sql.mib ?? 256) * MiB) / probe.bytes * probeRows);
  const text = query(rows);
  const client = await quiver.FlightClient.connect(sql.url);
  let bytes;
  let nativeBytes;
  const seconds = { native: [], raw: [], decoded: [] };
  try {
    const run = {
      native: async () => {
        const native = await sql.native(text);
        if (native.rows !== rows) throw new Error(`flight-sql-read read ${native.rows} rows, expected ${rows}`);
        nativeBytes = native.bytes;
        return native.seconds;
      },
      raw: async () => {
        const raw = await rawQuery(sql.url, text);
        bytes ??= raw.bytes;
        if (raw.bytes !== bytes) throw new Error(`the gateway delivered ${bytes} bytes for the query, then ${raw.bytes}`);
        return raw.seconds;
      },
      decoded: async () => {
        const start = performance.now();
        const read = await decodedQuery(client, text);
        if (read !== rows) throw new Error(`client.sql.stream read ${read} rows, expected ${rows}`);
        return (performance.now() - start) / 1000;
      },
    };
    for (let round = 0; round <= rounds; round++) {
      for (const mode of [...MODES.slice(round % 3), ...MODES.slice(0, round % 3)]) {
        const s = await run[mode]();
        if (round > 0) seconds[mode].push(s);
      }
      if (round === 0) log(`${rows} rows: ${bytes} IPC bytes through the gateway, ${nativeBytes} FlightData bytes natively`);
      else log(`round ${round}: ${MODES.map((m) => `${m} ${fmt(bytes / MiB / seconds[m].at(-1), 0)}`).join(', ')} MiB/s`);
    }
  } finally {
    client.close();
  }
  return MODES.map((mode) => {
    const mibPerS = seconds[mode].map((s) => bytes / MiB / s);
    return { mode, rows, bytes, rounds: mibPerS.length, mibPerS: median(mibPerS), min: Math.min(...mibPerS), max: Math.max(...mibPerS) };
  });
}

export function flightSqlTables(results, env) {
  if (results.length === 0) return '';
  const [native, raw, decoded] = MODES.map((mode) => results.find((r) => r.mode === mode));
  const range = (r) => `${fmt(r.mibPerS, 0)} (${fmt(r.min, 0)}–${fmt(r.max, 0)})`;
  const header = ['rows', 'native MiB/s', 'gateway raw MiB/s', 'decoded MiB/s', 'decoded ÷ raw', 'decoded ÷ native', 'raw ÷ native'];
  const body = [decoded.rows, range(native), range(raw), range(decoded),
    fmt(decoded.mibPerS / raw.mibPerS, 2) + '×', fmt(decoded.mibPerS / native.mibPerS, 2) + '×',
    fmt(raw.mibPerS / native.mibPerS, 2) + '×'];
  return `#### Flight SQL query through quiver-gateway from datafusion-flight-sql-server, ${env}, `
    + `${fmt(decoded.bytes / MiB, 0)} MiB, median (min–max) of ${decoded.rounds} rounds\n\n${table([header, body])}`;
}
