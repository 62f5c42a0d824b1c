// The gateway's CPU seconds per GB delivered, without a browser: a pyarrow upstream
// (bench/flight_upstream.py) behind a release quiver-gateway, and a Node `ws` client that
// speaks the protocol by hand as bench/flight.js's raw mode does (credit granted back as
// bytes arrive, frames counted and dropped). The gateway's CPU time comes from
// /proc/<pid>/stat. Prints one line per run and the median per rows/batch.
// Usage: node bench/gateway_cpu.mjs [MiB per run (256)] [runs (5)] [rows,rows,...]
// GATEWAY: a quiver-gateway binary to use instead of building the release one.
import { execFileSync } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { WebSocket } from 'ws';
import { buildGateway, pythonServer, startGateway } from '../tests/js/lib/flight-env.mjs';

const MiB = 1 << 20;
const SUBPROTOCOL = 'quiver-flight.v1';
const [mib = '256', runs = '5', sizes = '16384,65536,262144'] = process.argv.slice(2);
const ticksPerSecond = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }));

/** A process's user plus system CPU seconds (/proc/<pid>/stat fields 14 and 15). */
async function cpuSeconds(pid) {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / ticksPerSecond;
}

/** A DoGet of `ticket`, counted and dropped; resolves with the IPC bytes received. */
function rawDoGet(url, ticket) {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, [SUBPROTOCOL]);
    let received = 0;
    let returned = 0;
    let step;
    ws.on('message', (data, isBinary) => {
      if (isBinary) {
        received += data.length - 12;
        if (received - returned >= step) {
          ws.send(JSON.stringify({ type: 'credit', stream: 1, bytes: received - returned }));
          returned = received;
        }
        return;
      }
      const message = JSON.parse(data.toString());
      if (message.type === 'hello') {
        const window = message.creditWindow;
        step = Math.max(window / 4, MiB);
        const bytes = Buffer.from(ticket).toString('base64');
        ws.send(JSON.stringify({ type: 'doGet', stream: 1, ticket: bytes, credit: window }));
      } else if (message.type === 'status') {
        ws.close();
        if (message.code === 0) resolve(received);
        else reject(new Error(`${message.name}: ${message.message}`));
      }
    });
    ws.on('error', reject);
  });
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const upstream = await pythonServer([], { script: 'bench/flight_upstream.py', lifetime: 3600 });
const binary = process.env.GATEWAY ?? buildGateway({ release: true });
const gateway = await startGateway(binary, ['--upstream', upstream.location]);
console.log(`gateway pid ${gateway.pid}, upstream pid ${upstream.pid}`);
try {
  for (const rows of sizes.split(',').map(Number)) {
    const batch = await rawDoGet(gateway.url, `rows=${rows}&batches=1`);
    const ticket = `rows=${rows}&batches=${Math.ceil((Number(mib) * MiB) / batch)}`;
    const perGB = [];
    const speeds = [];
    for (let run = 0; run < Number(runs); run++) {
      const cpu0 = await cpuSeconds(gateway.pid);
      const start = performance.now();
      const bytes = await rawDoGet(gateway.url, ticket);
      const seconds = (performance.now() - start) / 1000;
      const cpu = (await cpuSeconds(gateway.pid)) - cpu0;
      perGB.push(cpu / (bytes / 1e9));
      speeds.push(bytes / MiB / seconds);
      console.log(`${rows} rows: ${(bytes / MiB).toFixed(0)} MiB in ${seconds.toFixed(2)} s, `
        + `${speeds.at(-1).toFixed(0)} MiB/s, gateway ${perGB.at(-1).toFixed(2)} CPU s/GB`);
    }
    console.log(`${rows} rows median: ${median(speeds).toFixed(0)} MiB/s, gateway ${median(perGB).toFixed(2)} CPU s/GB`);
  }
} finally {
  await gateway.stop();
  await upstream.stop();
}
