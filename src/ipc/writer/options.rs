//! What a writer is asked to do: body compression, how output is cut into chunks, and
//! how a changed dictionary is sent.

use crate::ipc::codec::Compression;
use crate::ipc::error::{QuiverError, Result};

/// The default cap on one chunk: 1 MiB.
pub const DEFAULT_MAX_CHUNK_BYTES: usize = 1 << 20;

/// The smallest chunk cap: the 8-byte message prefix (and the end-of-stream marker) fits.
pub const MIN_MAX_CHUNK_BYTES: usize = 8;

/// How chunks are allocated.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ChunkSizing {
    /// Each chunk is allocated at the exact size of what it will hold (at most the cap).
    #[default]
    Exact,
    /// The old way, kept only so that tests and benchmarks can show what it cost: every
    /// chunk is a zeroed allocation of the cap, copied to its used size once full.
    Fixed,
}

/// Options of a [`StreamEncoder`](super::StreamEncoder).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WriteOptions {
    /// Body compression, or none.
    pub compression: Option<Compression>,
    /// The requested ZSTD level, 1..=22. The C zstd backend (`zstd-c`) honours it; ruzstd
    /// implements only its `Fastest` level (about zstd level 1).
    pub zstd_level: i32,
    /// The largest chunk; a longer message is split into chunks of exactly this size.
    pub max_chunk_bytes: usize,
    pub chunk_sizing: ChunkSizing,
    /// Whether a stream sends a dictionary that extends the one sent before as a delta
    /// (only the new values). Off by default, as pyarrow's `emit_dictionary_deltas`: the
    /// whole dictionary is sent again as a replacement, since some readers (polars)
    /// refuse deltas. A file always extends with deltas, as its format allows nothing else.
    pub dictionary_deltas: bool,
}

impl Default for WriteOptions {
    fn default() -> Self {
        WriteOptions {
            compression: None,
            zstd_level: 1,
            max_chunk_bytes: DEFAULT_MAX_CHUNK_BYTES,
            chunk_sizing: ChunkSizing::Exact,
            dictionary_deltas: false,
        }
    }
}

/// The error for a chunk cap outside 8 bytes to `u32::MAX`, which a caller whose number
/// does not fit a `usize` (above 4 GiB on wasm32) also gives.
pub fn max_chunk_bytes_refused(found: u64) -> QuiverError {
    QuiverError::Usage(format!(
        "maxChunkBytes must be between {MIN_MAX_CHUNK_BYTES} and {} bytes, found {found}",
        u32::MAX
    ))
}

impl WriteOptions {
    /// Refuses a chunk cap below 8 bytes or above what a `Uint32Array` of lengths can hold,
    /// and a ZSTD level outside zstd's range.
    pub fn validate(&self) -> Result<()> {
        if !(MIN_MAX_CHUNK_BYTES..=u32::MAX as usize).contains(&self.max_chunk_bytes) {
            return Err(max_chunk_bytes_refused(self.max_chunk_bytes as u64));
        }
        if !(1..=22).contains(&self.zstd_level) {
            return Err(QuiverError::Usage(format!(
                "zstdLevel must be a whole number from 1 to 22, found {}",
                self.zstd_level
            )));
        }
        Ok(())
    }
}
