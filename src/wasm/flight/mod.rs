//! The Flight-over-WebSocket client's JavaScript side (`docs/protocol.md`): the rules
//! live in [`crate::flight::client`]; this is the web-sys socket, the promises
//! JavaScript awaits and the exported classes.
//!
//! - `socket`: a WebSocket owning its listeners; `conn`: one connection running a
//!   `Client`, and what its actions do in JavaScript;
//! - `client`, `get`, `put`: the exported `FlightClient`, `FlightStream`, `PutStream`;
//! - `call`: what a call's answer becomes; `fetch`: `fetchAll`'s readers;
//! - `abort`: an `AbortSignal` listener; `info`, `options`, `error`, `deferred`:
//!   conversions and plumbing.

mod abort;
mod call;
mod client;
mod conn;
mod deferred;
mod error;
mod fetch;
mod get;
mod info;
mod options;
mod put;
mod socket;

pub use client::FlightClient;
pub use get::FlightStream;
pub use put::PutStream;
