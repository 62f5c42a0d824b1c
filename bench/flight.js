// The Flight benchmark (issues 5 and 28), in a browser only: bench/browser.mjs starts a
// pyarrow upstream (bench/flight_upstream.py), a release quiver-gateway in front of it and
// a bare WebSocket server (bench/bare_ws.mjs), and opens the page with no devtools client
// attached (bench/launch.mjs). Per batch size, in interleaved rounds, the same bytes:
// - "bare": from the bare server, in the gateway's frames: the browser's WebSocket capacity;
// - "raw": a DoGet from the gateway, counted and dropped: the gateway's raw delivery;
// - "decoded": the same DoGet through FlightClient.doGet;
// - "bare decoded": FlightClient.doGet from the bare server: what decoding costs the page
//   with no gateway or upstream sharing the cores.
// With each transfer, the CPU seconds the gateway and the upstream spent during it
// (/proc/<pid>/stat) and how busy the machine was (/proc/stat); then fetchAll over 4
// endpoints on 4 sockets against 1.
import { frameCounter } from './raw_frames.js';
import { table, fmt } from './timing.js';

const MiB = 1 << 20;
const SUBPROTOCOL = 'quiver-flight.v1';

/**
 * Raw delivery (from the gateway or the bare server): the protocol by hand, granting
 * credit back as bytes arrive; resolves with the payload bytes received.
 */
function rawDoGet(url, ticket, window) {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, [SUBPROTOCOL]);
    ws.binaryType = 'arraybuffer';
    const frames = frameCounter(ws, 1, window);
    ws.onmessage = ({ data }) => {
      if (typeof data !== 'string') return frames.count(data);
      const message = JSON.parse(data);
      if (message.type === 'hello') {
        const bytes = btoa(ticket);
        ws.send(JSON.stringify({ type: 'doGet', stream: 1, ticket: bytes, credit: window }));
      } else if (message.type === 'status') {
        ws.close();
        if (message.code === 0) resolve(frames.received);
        else reject(new Error(`${message.name}: ${message.message}`));
      }
    };
    ws.onerror = () => reject(new Error('raw socket failed'));
  });
}

/** Decoded delivery: FlightClient.doGet, each batch counted and freed. */
async function decodedDoGet(client, ticket) {
  const stream = client.doGet(ticket);
  let rows = 0;
  for await (const batch of stream) {
    rows += batch.numRows;
    batch.free();
  }
  const stats = stream.stats;
  stream.free();
  return { rows, bytes: stats.bytesReceived };
}

/** One timed transfer, with the CPU the gateway, the upstream and the machine spent during it. */
async function timed(flight, run) {
  const cpu0 = await flight.cpu();
  const start = performance.now();
  const bytes = await run();
  const seconds = (performance.now() - start) / 1000;
  const cpu1 = await flight.cpu();
  const gb = bytes / 1e9;
  return {
    bytes, seconds, mibPerS: bytes / MiB / seconds,
    gatewayCpuPerGB: (cpu1.gateway - cpu0.gateway) / gb,
    upstreamCpuPerGB: (cpu1.upstream - cpu0.upstream) / gb,
    machineBusy: (cpu1.busy - cpu0.busy) / (cpu1.total - cpu0.total),
  };
}

/** Sums timed transfers of one cell: bytes over seconds, CPU per GB over all its bytes. */
function total(runs) {
  const bytes = runs.reduce((n, r) => n + r.bytes, 0);
  const seconds = runs.reduce((n, r) => n + r.seconds, 0);
  const weighted = (k) => runs.reduce((n, r) => n + r[k] * r.bytes, 0) / bytes;
  return {
    bytes, seconds, mibPerS: bytes / MiB / seconds, gatewayCpuPerGB: weighted('gatewayCpuPerGB'),
    upstreamCpuPerGB: weighted('upstreamCpuPerGB'),
    machineBusy: runs.reduce((n, r) => n + r.machineBusy * r.seconds, 0) / seconds,
  };
}

/** The transfers per batch size, in the order of the table's columns (and of report.mjs's lines). */
export const MODES = ['bare', 'bareDecoded', 'raw', 'decoded'];

/**
 * Runs the matrix and returns result rows; without a gateway (Node) there is nothing to
 * run. `flight.mib` (default 1024) is the volume per batch size and mode, moved in eight
 * rounds that each run every mode once, in a rotating order, so all see the same load:
 * rounds of 128 MiB, not 256, so that a swing in the machine's load reaches every mode.
 */
export async function runFlightBench({ quiver }, files, { flight, log = () => {} } = {}) {
  if (!flight) return [];
  const volume = (flight.mib ?? 1024) * MiB;
  const rounds = 8;
  const client = await quiver.FlightClient.connect(flight.url);
  const first = client.doGet('rows=1&batches=1');
  const window = first.creditWindow;
  (await first.readAll()).free();
  first.free();
  const results = [];
  try {
    for (const rows of [16384, 65536, 262144]) {
      const probe = await decodedDoGet(client, `rows=${rows}&batches=1`);
      // The bare server records the gateway's frames for this size on its first request.
      await rawDoGet(flight.bare, `rows=${rows}&batches=1`, window);
      const ticket = `rows=${rows}&batches=${Math.ceil(volume / rounds / probe.bytes)}`;
      const runs = Object.fromEntries(MODES.map((mode) => [mode, []]));
      for (let round = 0; round < rounds; round++) {
        for (const mode of [...MODES.slice(round % MODES.length), ...MODES.slice(0, round % MODES.length)]) {
          // The bare server replays stream 1's frames: a client of its own per DoGet.
          const bareClient = mode === 'bareDecoded' ? await quiver.FlightClient.connect(flight.bare) : undefined;
          runs[mode].push(await timed(flight, async () => {
            if (mode === 'decoded') return (await decodedDoGet(client, ticket)).bytes;
            if (mode === 'bareDecoded') return (await decodedDoGet(bareClient, ticket)).bytes;
            return rawDoGet(mode === 'bare' ? flight.bare : flight.url, ticket, window);
          }));
          bareClient?.close();
        }
      }
      for (const mode of MODES) {
        const row = { rows, batchBytes: probe.bytes, mode, ...total(runs[mode]) };
        results.push(row);
        log(`${rows} rows/batch ${mode}: ${fmt(row.mibPerS, 0)} MiB/s, gateway ${fmt(row.gatewayCpuPerGB, 2)} CPU s/GB`);
      }
    }
    // fetchAll: 4 endpoints of volume/8 each, on 1 and on 4 sockets, twice each.
    const rows = 65536;
    const probe = await decodedDoGet(client, `rows=${rows}&batches=1`);
    const batches = Math.ceil(volume / 8 / probe.bytes);
    const info = await client.getFlightInfo({ cmd: `rows=${rows}&batches=${batches}&partitions=4` });
    for (const connections of [1, 4, 4, 1]) {
      const t = await timed(flight, async () => {
        const all = await client.fetchAll(info, { connections });
        if (all.numRows !== 4 * batches * rows) throw new Error(`fetchAll read ${all.numRows} rows, expected ${4 * batches * rows}`);
        all.free();
        return 4 * batches * probe.bytes;
      });
      results.push({ mode: 'fetchAll', connections, ...t });
      log(`fetchAll over ${connections} socket(s): ${fmt(t.mibPerS, 0)} MiB/s`);
    }
  } finally {
    client.close();
  }
  return results;
}

/** The best of a fetchAll's runs over `connections` sockets (the machine is shared). */
export function bestFetchAll(results, connections) {
  return results.filter((r) => r.connections === connections).reduce((a, b) => (b.mibPerS > a.mibPerS ? b : a));
}

export function flightTables(results, env) {
  if (results.length === 0) return '';
  const pick = (rows, mode) => results.find((r) => r.rows === rows && r.mode === mode);
  const sizes = [...new Set(results.filter((r) => r.rows).map((r) => r.rows))];
  const pct = (x) => `${fmt(100 * x, 0)}%`;
  const body = sizes.map((rows) => {
    const [bare, bareDec, raw, dec] = MODES.map((mode) => pick(rows, mode));
    return [rows, `${fmt(dec.batchBytes / MiB, 2)} MiB`, fmt(bare.mibPerS, 0), fmt(bareDec.mibPerS, 0), fmt(raw.mibPerS, 0),
      fmt(dec.mibPerS, 0), fmt(raw.mibPerS / bare.mibPerS, 2) + '×', fmt(bareDec.mibPerS / bare.mibPerS, 2) + '×',
      fmt(dec.mibPerS / raw.mibPerS, 2) + '×',
      fmt(raw.gatewayCpuPerGB, 2), fmt(dec.gatewayCpuPerGB, 2), fmt(raw.upstreamCpuPerGB, 2),
      pct(bare.machineBusy), pct(raw.machineBusy)];
  });
  const header = ['rows/batch', 'batch', 'bare server MiB/s', 'decoded from bare MiB/s', 'gateway raw MiB/s',
    'decoded MiB/s', 'raw ÷ bare', 'decoded ÷ bare (from bare)', 'decoded ÷ raw', 'gateway CPU s/GB (raw)',
    'gateway CPU s/GB (decoded)', 'upstream CPU s/GB (raw)', 'machine busy (bare)', 'machine busy (raw)'];
  const fetch = [1, 4].map((n) => {
    const best = bestFetchAll(results, n);
    return [n, fmt(best.mibPerS, 0), fmt(best.gatewayCpuPerGB, 2), pct(best.machineBusy)];
  });
  const part = results.find((r) => r.connections).bytes / 4 / MiB;
  const volume = fmt(pick(sizes[0], 'raw').bytes / MiB, 0);
  return `#### Flight DoGet through quiver-gateway from a pyarrow upstream, ${env}, ${volume} MiB per cell\n\n${table([header, ...body])}\n\n`
    + `#### fetchAll, 4 endpoints × ${fmt(part, 0)} MiB, best of 2, ${env}\n\n`
    + table([['sockets', 'MiB/s', 'gateway CPU s/GB', 'machine busy'], ...fetch]);
}
