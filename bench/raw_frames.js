// The receiving end of a DoGet by hand, for the benchmarks' raw modes (bench/flight.js,
// bench/flight_sql.js): binary frames are counted and dropped, and credit is granted back
// as they arrive, in steps of a quarter window (1 MiB at least), so the sender never waits
// on a consumer.

const MiB = 1 << 20;
/** Each binary frame starts with a 12-byte header (docs/protocol.md); the rest is payload. */
const FRAME_HEADER = 12;

/** Counts the payload of `stream`'s frames on `ws` and grants its `window` back. */
export function frameCounter(ws, stream, window) {
  const step = Math.max(window / 4, MiB);
  let received = 0;
  let returned = 0;
  return {
    /** Payload bytes received so far. */
    get received() {
      return received;
    },
    /** Counts one binary frame, and sends the credit owed once it is a step's worth. */
    count(frame) {
      received += frame.byteLength - FRAME_HEADER;
      if (received - returned >= step) {
        ws.send(JSON.stringify({ type: 'credit', stream, bytes: received - returned }));
        returned = received;
      }
    },
  };
}
