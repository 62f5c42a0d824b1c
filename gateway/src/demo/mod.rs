//! `--demo`: an in-process Flight service with generated data, so that one command
//! starts a gateway with something to read. Tickets and `cmd` descriptors are
//! `key=value` pairs joined by `&` (see `docs/protocol.md`):
//!
//! - `rows=65536&batches=16&compression=zstd&part=0`: generated batches of
//!   `id: int64, value: float64, label: utf8`; `part` offsets the ids.
//! - `put=NAME`: replays what a DoPut to descriptor path `[NAME]` stored.
//!
//! GetFlightInfo on a `cmd` descriptor with `partitions=N` answers N endpoints, one per
//! part, each with no location (meaning: this same server). PollFlightInfo on one with
//! `polls=P` runs a query that completes at the P-th poll.
//!
//! - `ticket`: parsing tickets and writing them back for endpoints.
//! - `generate`: the generated batches and their schema.
//! - `service`: the Flight service (the upload store, FlightInfo, DoGet, DoPut).

mod generate;
mod service;
mod ticket;

pub use generate::{schema, Generated};
pub use service::{spawn, Demo};
pub use ticket::DemoTicket;
