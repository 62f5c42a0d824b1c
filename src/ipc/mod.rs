//! The pure-Rust core: Arrow IPC streams in and out, with no wasm-bindgen.

pub mod codec;
pub mod error;
pub mod limits;
pub mod reader;
pub mod stats;
#[cfg(feature = "writer")]
pub mod writer;

pub use error::{QuiverError, Result};
pub use limits::ReadLimits;
pub use reader::StreamDecoder;
pub use stats::ReadStats;
#[cfg(feature = "writer")]
pub use writer::{Chunks, StreamEncoder, WriteOptions};
