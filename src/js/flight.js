// What the Flight client needs from JavaScript: its error class, and a socket that stays
// quiet after the client let go of it.

/**
 * A failed Flight call: `code` is the gRPC/Flight status code (1 CANCELLED, 7
 * PERMISSION_DENIED, 14 UNAVAILABLE, 16 UNAUTHENTICATED, ...), `codeName` its name,
 * `details` the bytes of gRPC's `grpc-status-details-bin`.
 */
export class FlightError extends Error {
  constructor(code, codeName, message, details) {
    super(`${codeName}: ${message}`);
    this.name = 'FlightError';
    this.code = code;
    this.codeName = codeName;
    this.details = details;
  }
}

// `details` arrives as a view of wasm memory; the error keeps its own copy.
export function flightError(code, codeName, message, details) {
  return new FlightError(code, codeName, message, details.slice());
}

// After the client removed its listeners: Node's `ws` throws on an 'error' event that no
// one listens to, so a late network error would crash the process. A no-op `onerror`
// (a plain JS function, no Rust closure behind it) absorbs it.
export function quiet(socket) {
  socket.onerror = () => {};
}
