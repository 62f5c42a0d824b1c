// The Flight benchmark's baseline: a bare WebSocket server that sends a browser the bytes
// a DoGet from quiver-gateway sends, in the same frames, from memory, with no upstream.
// What the browser receives from it is its WebSocket capacity on this machine, the
// ceiling for the gateway's raw delivery. It honours the client's credit as the gateway
// does: WebKitGTK reads a WebSocket without backpressure and holds every frame it has not
// handled in its web process, so a stream sent at once grew it past 3 GB and stalled it.
//
// For each rows/batch it first records, with the ws client, the frames of a one-batch
// DoGet from the gateway (hello, the schema message, the batch's frames, the end-of-stream
// marker and the status), then answers `doGet` for `rows=R&batches=N` with the schema,
// the batch's frames N times, the marker and the status: the stream a gateway sends.
import { WebSocket, WebSocketServer } from 'ws';

const SUBPROTOCOL = 'quiver-flight.v1';
const FIRST = 1;
const LAST = 2;
/** Bytes handed to the socket before waiting for them to reach the kernel. */
const IN_FLIGHT = 4 << 20;

/** The frames of a one-batch DoGet of `rows` rows from the gateway at `url`. */
function record(url, rows) {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, [SUBPROTOCOL]);
    const frames = [];
    let hello;
    ws.on('message', (data, isBinary) => {
      if (isBinary) {
        frames.push(data);
        ws.send(JSON.stringify({ type: 'credit', stream: 1, bytes: data.length - 12 }));
        return;
      }
      const message = JSON.parse(data.toString());
      if (message.type === 'hello') {
        hello = data.toString();
        const ticket = Buffer.from(`rows=${rows}&batches=1`).toString('base64');
        ws.send(JSON.stringify({ type: 'doGet', stream: 1, ticket, credit: 64 << 20 }));
      } else if (message.type === 'status') {
        ws.close();
        if (message.code !== 0) return reject(new Error(`recording ${rows} rows: ${message.name}: ${message.message}`));
        resolve({ hello, messages: messages(frames), status: data.toString() });
      }
    });
    ws.on('error', reject);
  });
}

/** `frames` grouped by IPC message (FIRST to LAST flags, header byte 5). */
function messages(frames) {
  const out = [];
  for (const frame of frames) {
    if (frame[5] & FIRST) out.push([]);
    out.at(-1).push(frame);
  }
  if (out.length !== 3 || !(out[2].at(-1)[5] & LAST)) {
    throw new Error(`a one-batch DoGet should be 3 messages (schema, batch, end of stream), found ${out.length}`);
  }
  return out;
}

/**
 * The credit a DoGet's client has granted and not yet used, in payload bytes (a frame's
 * bytes after its 12-byte header, as the gateway counts them).
 */
class Credit {
  constructor(bytes) {
    this.bytes = bytes;
    this.wake = () => {};
  }

  grant(bytes) {
    this.bytes += bytes;
    this.wake();
  }

  async take(bytes) {
    while (this.bytes < bytes) await new Promise((resolve) => { this.wake = resolve; });
    this.bytes -= bytes;
  }
}

/** Sends the recorded stream of `batches` batches on `ws`, each frame within `credit`. */
async function replay(ws, { messages: [schema, batch, end], status }, batches, credit) {
  let queued = 0;
  const send = async (frame) => {
    await credit.take(frame.length - 12);
    const sent = new Promise((resolve, reject) => ws.send(frame, (e) => (e ? reject(e) : resolve())));
    queued += frame.length;
    if (queued >= IN_FLIGHT) {
      await sent;
      queued = 0;
    }
  };
  for (const frame of schema) await send(frame);
  for (let i = 0; i < batches; i++) for (const frame of batch) await send(frame);
  for (const frame of end) await send(frame);
  ws.send(status);
}

/** Starts the server on 127.0.0.1; resolves with its ws:// URL and `close()`. */
export async function startBareServer(gatewayUrl) {
  const recorded = new Map();
  const server = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  await new Promise((resolve) => server.once('listening', resolve));
  server.on('connection', async (ws) => {
    // The hello the gateway sends is needed before the first recording: any size does.
    ws.send((await (recorded.values().next().value ?? recordOnce(65536))).hello);
    let credit;
    ws.on('message', async (data, isBinary) => {
      if (isBinary) return;
      const message = JSON.parse(data.toString());
      if (message.type === 'credit') credit?.grant(message.bytes);
      if (message.type !== 'doGet') return;
      credit = new Credit(message.credit);
      const ticket = new URLSearchParams(Buffer.from(message.ticket, 'base64').toString());
      try {
        await replay(ws, await recordOnce(Number(ticket.get('rows'))), Number(ticket.get('batches')), credit);
      } catch (error) {
        ws.close(1011, String(error.message).slice(0, 120));
      }
    });
  });
  function recordOnce(rows) {
    if (!recorded.has(rows)) recorded.set(rows, record(gatewayUrl, rows));
    return recorded.get(rows);
  }
  return {
    url: `ws://127.0.0.1:${server.address().port}/`,
    close: () => new Promise((resolve) => {
      for (const client of server.clients) client.terminate();
      server.close(resolve);
    }),
  };
}
