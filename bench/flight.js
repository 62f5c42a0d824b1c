// The Flight benchmark of issue 5, in headless Chromium only (it needs the gateway that
// bench/browser.mjs starts): decoded DoGet throughput from `quiver-gateway --demo`, 1 GiB
// per batch size, next to raw WebSocket delivery of the same bytes from the same gateway
// (same request, same credit, bytes counted and dropped), the gateway's CPU time per GB
// (/proc/<pid>/stat before and after each transfer),
// and fetchAll over 4 endpoints on 4 sockets against 1.
import { table, fmt } from './timing.js';

const GiB = 1 << 30;
const MiB = 1 << 20;
const SUBPROTOCOL = 'quiver-flight.v1';

/** Raw delivery: the protocol by hand, granting credit back as bytes arrive. */
function rawDoGet(url, ticket, window) {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, [SUBPROTOCOL]);
    ws.binaryType = 'arraybuffer';
    let received = 0;
    let returned = 0;
    const step = Math.max(window / 4, MiB);
    ws.onmessage = ({ data }) => {
      if (typeof data !== 'string') {
        received += data.byteLength - 12;
        if (received - returned >= step) {
          ws.send(JSON.stringify({ type: 'credit', stream: 1, bytes: received - returned }));
          returned = received;
        }
        return;
      }
      const message = JSON.parse(data);
      if (message.type === 'hello') {
        const bytes = btoa(ticket);
        ws.send(JSON.stringify({ type: 'doGet', stream: 1, ticket: bytes, credit: window }));
      } else if (message.type === 'status') {
        ws.close();
        if (message.code === 0) resolve(received);
        else reject(new Error(`${message.name}: ${message.message}`));
      }
    };
    ws.onerror = () => reject(new Error('raw socket failed'));
  });
}

async function decodedDoGet(client, ticket) {
  const stream = client.doGet(ticket);
  let rows = 0;
  for await (const batch of stream) {
    rows += batch.numRows;
    batch.free();
  }
  const stats = stream.stats;
  stream.free();
  return { rows, bytes: stats.bytesReceived, copied: stats.bytesCopied, ipc: stats.ipcBytesReceived };
}

/** One timed transfer, with the gateway's CPU seconds spent during it. */
async function timed(flight, run) {
  const cpu0 = await flight.cpuSeconds();
  const start = performance.now();
  const bytes = await run();
  const seconds = (performance.now() - start) / 1000;
  return { bytes, seconds, cpu: (await flight.cpuSeconds()) - cpu0 };
}

/**
 * Runs the matrix and returns result rows; without a gateway (Node) there is nothing to
 * run. `flight.mib` (default 1024) is the volume per batch size and mode, moved in four
 * rounds that alternate raw and decoded, so both see the same machine load.
 */
export async function runFlightBench({ quiver }, files, { flight, log = () => {} } = {}) {
  if (!flight) return [];
  const total = (flight.mib ?? 1024) * MiB;
  const rounds = 4;
  const client = await quiver.FlightClient.connect(flight.url);
  const first = client.doGet('rows=1&batches=1');
  const window = first.creditWindow;
  (await first.readAll()).free();
  first.free();
  const results = [];
  try {
    for (const rows of [16384, 65536, 262144]) {
      const probe = await decodedDoGet(client, `rows=${rows}&batches=1`);
      const batches = Math.ceil(total / rounds / probe.bytes);
      const ticket = `rows=${rows}&batches=${batches}`;
      const sum = { raw: { bytes: 0, seconds: 0, cpu: 0 }, decoded: { bytes: 0, seconds: 0, cpu: 0 } };
      for (let round = 0; round < rounds; round++) {
        for (const mode of round % 2 ? ['decoded', 'raw'] : ['raw', 'decoded']) {
          const t = await timed(flight, async () => (mode === 'raw'
            ? rawDoGet(flight.url, ticket, window)
            : (await decodedDoGet(client, ticket)).bytes));
          for (const k of ['bytes', 'seconds', 'cpu']) sum[mode][k] += t[k];
        }
      }
      for (const mode of ['raw', 'decoded']) {
        const { bytes, seconds, cpu } = sum[mode];
        const row = { rows, batchBytes: probe.bytes, mode, bytes, seconds, mibPerS: bytes / MiB / seconds, cpuPerGB: cpu / (bytes / 1e9) };
        results.push(row);
        log(`${rows} rows/batch ${mode}: ${fmt(row.mibPerS, 0)} MiB/s, gateway ${fmt(row.cpuPerGB, 2)} CPU s/GB`);
      }
    }
    // fetchAll: 4 endpoints of total/8 each, on 1 and on 4 sockets, twice each.
    const rows = 65536;
    const probe = await decodedDoGet(client, `rows=${rows}&batches=1`);
    const batches = Math.ceil(total / 8 / probe.bytes);
    const info = await client.getFlightInfo({ cmd: `rows=${rows}&batches=${batches}&partitions=4` });
    for (const connections of [1, 4, 4, 1]) {
      const t = await timed(flight, async () => {
        const all = await client.fetchAll(info, { connections });
        if (all.numRows !== 4 * batches * rows) throw new Error(`fetchAll read ${all.numRows} rows`);
        all.free();
        return 4 * batches * probe.bytes;
      });
      results.push({ mode: 'fetchAll', connections, ...t, mibPerS: t.bytes / MiB / t.seconds });
      log(`fetchAll over ${connections} socket(s): ${fmt(t.bytes / MiB / t.seconds, 0)} MiB/s`);
    }
  } finally {
    client.close();
  }
  return results;
}

export function flightTables(results, env) {
  if (results.length === 0) return '';
  const pick = (rows, mode) => results.find((r) => r.rows === rows && r.mode === mode);
  const sizes = [...new Set(results.filter((r) => r.rows).map((r) => r.rows))];
  const body = sizes.map((rows) => {
    const raw = pick(rows, 'raw');
    const dec = pick(rows, 'decoded');
    return [rows, `${fmt(dec.batchBytes / MiB, 2)} MiB`, fmt(raw.mibPerS, 0), fmt(dec.mibPerS, 0),
      fmt(dec.mibPerS / raw.mibPerS, 2) + '×', fmt(raw.cpuPerGB, 2), fmt(dec.cpuPerGB, 2)];
  });
  const header = ['rows/batch', 'batch', 'raw WebSocket MiB/s', 'Quiver decoded MiB/s', 'decoded ÷ raw',
    'gateway CPU s/GB (raw)', 'gateway CPU s/GB (decoded)'];
  // Best of two runs each: the machine is shared.
  const best = (n) => Math.max(...results.filter((r) => r.connections === n).map((r) => r.mibPerS));
  const part = results.find((r) => r.connections).bytes / 4 / MiB;
  const fetch = [['sockets', `fetchAll MiB/s (4 endpoints × ${fmt(part, 0)} MiB, best of 2)`],
    [1, fmt(best(1), 0)], [4, fmt(best(4), 0)]];
  const volume = fmt(results[0].bytes / MiB, 0);
  return `#### Flight DoGet from quiver-gateway --demo, ${env}, ${volume} MiB per cell\n\n${table([header, ...body])}\n\n`
    + `#### fetchAll, ${env}\n\n${table(fetch)}`;
}
