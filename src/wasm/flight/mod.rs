//! The Flight-over-WebSocket client (`docs/protocol.md`): `FlightClient` and the streams
//! its calls open. The wire format is `crate::flight`; this is the web-sys socket, the
//! state of each stream and the promises JavaScript awaits.
//!
//! - `socket`: a WebSocket owning its listeners; `conn`: one connection and its streams;
//! - `call`, `get`, `put`: the three kinds of stream; `open`: starting them;
//! - `fetch`: `fetchAll`; `client`: the exported `FlightClient`;
//! - `reserve`: the memory budget DoGets share for messages still arriving;
//! - `info`, `options`, `error`, `deferred`: conversions and plumbing.

mod call;
mod client;
mod conn;
mod deferred;
mod error;
mod fetch;
mod get;
mod info;
mod open;
mod options;
mod put;
mod reserve;
mod socket;

pub use client::FlightClient;
pub use get::FlightStream;
pub use put::PutStream;
