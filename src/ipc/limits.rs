//! Limits on untrusted input. Each is checked before the allocation it guards.

use crate::ipc::error::{QuiverError, Result};

/// Bounds applied while decoding a stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReadLimits {
    /// Largest accepted message: flatbuffer metadata plus body, as declared on the wire.
    /// Default 256 MiB.
    pub max_message_bytes: u64,
    /// Largest accepted decompressed body of one message. Default 1 GiB.
    pub max_decompressed_bytes: u64,
    /// Largest total of the dictionaries a stream has sent, which the reader keeps for the
    /// whole stream (delta batches append to them). Default 1 GiB.
    pub max_dictionary_bytes: u64,
}

impl ReadLimits {
    pub const DEFAULT_MAX_MESSAGE_BYTES: u64 = 256 << 20;
    pub const DEFAULT_MAX_DECOMPRESSED_BYTES: u64 = 1 << 30;
    pub const DEFAULT_MAX_DICTIONARY_BYTES: u64 = 1 << 30;

    /// Refuses a declared size over `max_message_bytes`. What passes also fits in an
    /// `isize`, so it can be allocated on every target.
    pub(crate) fn check_message_size(&self, what: &'static str, found: u64) -> Result<()> {
        let max = self.max_message_bytes.min(isize::MAX as u64);
        if found > max {
            return Err(QuiverError::LimitExceeded {
                what,
                limit: "maxMessageBytes",
                found,
                max,
            });
        }
        Ok(())
    }
}

impl Default for ReadLimits {
    fn default() -> Self {
        ReadLimits {
            max_message_bytes: Self::DEFAULT_MAX_MESSAGE_BYTES,
            max_decompressed_bytes: Self::DEFAULT_MAX_DECOMPRESSED_BYTES,
            max_dictionary_bytes: Self::DEFAULT_MAX_DICTIONARY_BYTES,
        }
    }
}
