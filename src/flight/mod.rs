//! The Flight-over-WebSocket wire protocol (pure Rust, shared by `quiver-gateway` and the
//! wasm client). The full specification is `docs/protocol.md`.
//!
//! - [`frame`]: binary frames, a 12-byte header followed by `app_metadata` and IPC bytes.
//! - [`control`]: the JSON control messages (requests, FlightInfo, credit, status).
//! - [`message`]: the IPC framing of Flight messages: the prefix the gateway writes in
//!   front of a `FlightData` header, and the splitter that cuts an uploaded IPC stream
//!   back into messages.
//! - [`credit`]: per-stream byte credit, the protocol's only backpressure.
//! - [`streams`]: the stream-id rules of a connection.
//! - [`client`] (feature `flight`): the client's rules, as a sans-IO state machine.
//!
//! Nothing here panics on hostile bytes: every malformed input is a [`ProtocolError`].

#[cfg(feature = "flight")]
pub mod client;
pub mod control;
pub mod credit;
mod error;
pub mod frame;
pub mod message;
pub mod streams;

pub use error::{ProtocolError, Result};

/// The WebSocket subprotocol name; its suffix is the protocol version.
pub const SUBPROTOCOL: &str = "quiver-flight.v1";

/// The protocol version carried in the `hello` message.
pub const VERSION: u32 = 1;

/// Default cap on a frame's payload (`app_metadata` plus IPC bytes): 1 MiB.
pub const DEFAULT_MAX_SEGMENT_BYTES: usize = 1 << 20;
