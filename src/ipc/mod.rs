//! The pure-Rust core: Arrow IPC streams in and out, with no wasm-bindgen.

pub mod codec;
pub mod error;
pub mod limits;
pub mod reader;
pub mod stats;
#[cfg(feature = "writer")]
pub mod writer;

use std::collections::HashMap;

pub use error::{QuiverError, Result};
pub use limits::ReadLimits;
pub use reader::{batch_bytes, FileDecoder, StreamDecoder};
pub use stats::ReadStats;
#[cfg(feature = "writer")]
pub use writer::{Chunks, StreamEncoder, WriteOptions};

/// The custom metadata of one record batch message: the key-value pairs pyarrow writes
/// with `write_batch(batch, custom_metadata=...)` and reads with
/// `read_next_batch_with_custom_metadata()`. Of duplicate keys the last wins.
pub type BatchMetadata = HashMap<String, String>;
