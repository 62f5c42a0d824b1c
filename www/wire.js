// The DoGet half of the quiver-flight.v1 protocol (docs/protocol.md), small enough to
// read in one go: the page needs each frame's IPC bytes as they arrive (to graph them
// and to replay them into a second decoder), which a higher-level client hides.

const SUBPROTOCOL = 'quiver-flight.v1';
const HEADER_LEN = 12;
const STREAM = 1;
const DATA = 0;

/** A non-zero `status` from the gateway: `code` and `codeName` are the Flight code. */
export class FlightStatusError extends Error {
  constructor({ code, name, message }) {
    super(`${name} (code ${code}): ${message || 'no message'}`);
    this.code = code;
    this.codeName = name;
  }
}

/** `ws://host/flight` of the page's own origin, or what the user typed (host:port or a URL). */
export function gatewayUrl(text) {
  const value = text.trim();
  const scheme = location.protocol === 'https:' ? 'wss:' : 'ws:';
  if (!value) return `${scheme}//${location.host}/flight`;
  const url = new URL(/^[a-z]+:\/\//i.test(value) ? value : `${scheme}//${value}`);
  if (url.protocol === 'http:') url.protocol = 'ws:';
  if (url.protocol === 'https:') url.protocol = 'wss:';
  if (url.pathname === '/') url.pathname = '/flight';
  return url.href;
}

/**
 * Runs one DoGet on a new socket. `onFrame(ipcBytes, payloadBytes)` is called for each
 * data frame, in order, in the socket's own message task, so the page handles input
 * between frames. Credit for a frame is granted once `onFrame` returns, so the gateway
 * never runs more than `credit` bytes ahead of the decoder. Resolves with the final
 * status; rejects with an Error that says what went wrong.
 */
export function doGet(url, ticket, { credit, signal, onHello, onFrame }) {
  return new Promise((resolve, reject) => {
    let socket;
    try {
      socket = new WebSocket(url, [SUBPROTOCOL]);
    } catch (error) {
      reject(new Error(`cannot open ${url}: ${error.message}`));
      return;
    }
    socket.binaryType = 'arraybuffer';
    let hello;
    let settled = false;
    const settle = (error, value) => {
      if (settled) return;
      settled = true;
      signal?.removeEventListener('abort', cancel);
      socket.close();
      if (error) reject(error);
      else resolve(value);
    };
    // The gateway answers a cancel with status CANCELLED once the upstream call stopped.
    const cancel = () => {
      if (hello) socket.send(JSON.stringify({ type: 'cancel', stream: STREAM }));
      else settle(new FlightStatusError({ code: 1, name: 'CANCELLED', message: 'stopped' }));
    };
    signal?.addEventListener('abort', cancel);

    socket.onmessage = ({ data }) => {
      if (settled) return;
      if (typeof data === 'string') {
        const message = JSON.parse(data);
        if (message.type === 'hello') {
          hello = message;
          onHello?.(hello);
          const bytes = new TextEncoder().encode(ticket);
          socket.send(JSON.stringify({
            type: 'doGet', stream: STREAM, ticket: btoa(String.fromCharCode(...bytes)),
            credit: credit || hello.creditWindow,
          }));
        } else if (message.type === 'status') {
          if (message.code === 0) settle(null, message);
          else settle(new FlightStatusError(message));
        } else if (message.type === 'error') {
          settle(new Error(`the gateway closed the connection: ${message.message}`));
        }
        return;
      }
      const frame = new DataView(data);
      const metadataLength = frame.getUint32(8, true);
      try {
        if (frame.getUint8(4) === DATA) {
          onFrame(new Uint8Array(data, HEADER_LEN + metadataLength), data.byteLength - HEADER_LEN);
        }
      } catch (error) {
        settle(error);
        return;
      }
      socket.send(JSON.stringify({ type: 'credit', stream: STREAM, bytes: data.byteLength - HEADER_LEN }));
    };
    socket.onclose = ({ code, reason }) => {
      const why = `code ${code}${reason ? `, ${reason}` : ''}`;
      settle(new Error(hello
        ? `the connection to the gateway was lost during the stream (${why})`
        : `could not connect to the gateway at ${url} (${why}); is it running, and does it allow this page's origin?`));
    };
  });
}
