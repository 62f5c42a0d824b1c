//! Counters that make hidden copies visible.

/// What a reader has done so far. `bytes_copied == bytes_pushed` for an uncompressed
/// stream whose buffers need no realigning: each received byte was copied exactly once.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReadStats {
    /// Bytes handed to the reader.
    pub bytes_pushed: u64,
    /// Bytes copied by the reader: each pushed byte once, plus the bytes of compressed
    /// buffers stored uncompressed (length -1), which move into the decompressed body,
    /// buffers arrow-rs realigns, the bodies of batches whose short sparse union children
    /// are padded with nulls (`reader/repair.rs`: the body, then the padded buffers), and,
    /// with ruzstd, each ZSTD buffer's output, which it copies out of its own window.
    pub bytes_copied: u64,
    /// Complete messages read, of every kind.
    pub messages: u64,
    /// Record batches decoded.
    pub batches: u64,
}
