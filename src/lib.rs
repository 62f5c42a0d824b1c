//! Quiver moves [Apache Arrow] record batches in and out of web pages.
//!
//! - [`ipc`] is the pure-Rust core: an incremental [IPC stream] decoder that copies each
//!   received byte once, a right-sized encoder, the LZ4/ZSTD codecs and the limits.
//! - [`flight`] is the Flight-over-WebSocket wire protocol (see `docs/protocol.md`).
//! - `import` (feature `writer`) builds arrays from buffers JavaScript filled
//!   (`fromArrowJS`, `batchFromColumns`).
//! - [`memory`] counts allocations, so a hidden allocation shows up as a number.
//! - `wasm` (only on `wasm32`) holds every `#[wasm_bindgen]` export.
//!
//! [Apache Arrow]: https://arrow.apache.org/
//! [IPC stream]: https://arrow.apache.org/docs/format/Columnar.html#serialization-and-interprocess-communication-ipc

// A panic aborts the wasm instance, so library code returns errors instead: clippy refuses
// `unwrap`/`expect` outside tests. Unit tests return `TestResult` and use `?`; they keep
// `unwrap_err()` where a test asserts that a call fails.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

mod fields;
pub mod flight;
#[cfg(feature = "writer")]
pub mod import;
pub mod ipc;
pub mod memory;
#[cfg(target_arch = "wasm32")]
pub mod wasm;

/// What a unit test returns, so that a failed step fails it through `?`.
#[cfg(test)]
type TestResult<T = ()> = Result<T, Box<dyn std::error::Error>>;
