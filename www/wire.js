// Just enough of the quiver-flight.v1 protocol (docs/protocol.md) to capture a DoGet's
// frames as they came off the socket. The decode panel replays the same frames into two
// decoders; FlightClient, which the live stream uses, decodes them itself and hands out
// batches only.

const SUBPROTOCOL = 'quiver-flight.v1';
const HEADER_LEN = 12;
const STREAM = 1;
const DATA = 0;

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
 * Runs one DoGet on a new socket and resolves with the IPC bytes of each data frame, as
 * views of the received messages (no copy). Credit is granted back frame by frame.
 */
export function captureFrames(url, ticket) {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url, [SUBPROTOCOL]);
    socket.binaryType = 'arraybuffer';
    const frames = [];
    let settled = false;
    const settle = (error) => {
      settled = true;
      socket.close();
      if (error) reject(error);
      else resolve(frames);
    };
    socket.onmessage = ({ data }) => {
      if (settled) return;
      if (typeof data !== 'string') {
        const header = new DataView(data);
        if (header.getUint8(4) === DATA) {
          frames.push(new Uint8Array(data, HEADER_LEN + header.getUint32(8, true)));
        }
        socket.send(JSON.stringify({ type: 'credit', stream: STREAM, bytes: data.byteLength - HEADER_LEN }));
        return;
      }
      const message = JSON.parse(data);
      if (message.type === 'hello') {
        const bytes = new TextEncoder().encode(ticket);
        socket.send(JSON.stringify({ type: 'doGet', stream: STREAM, ticket: btoa(String.fromCharCode(...bytes)) }));
      } else if (message.type === 'status') {
        settle(message.code === 0 ? undefined : new Error(`${message.name}: ${message.message}`));
      } else if (message.type === 'error') {
        settle(new Error(message.message));
      }
    };
    socket.onclose = ({ code }) => settled || settle(new Error(`the connection closed (code ${code})`));
  });
}
