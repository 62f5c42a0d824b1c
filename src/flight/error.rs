//! The one error type of the wire protocol.

/// A violation of the Flight-over-WebSocket protocol. Each message says what was
/// expected and what was found, because it is sent to the peer before closing.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ProtocolError {
    #[error("frame needs a {expected}-byte header, found {found} bytes")]
    ShortFrame { expected: usize, found: usize },
    #[error("frame stream id must be non-zero, found 0")]
    ZeroStream,
    #[error("frame kind must be 0 (data) or 1 (metadata), found {0}")]
    UnknownKind(u8),
    #[error("frame flags may only set bits 0 (first) and 1 (last), found {0:#04x}")]
    ReservedFlags(u8),
    #[error("frame reserved field must be 0, found {0}")]
    ReservedField(u16),
    #[error("frame declares {declared} bytes of app_metadata, only {available} follow the header")]
    MetadataOverrun { declared: usize, available: usize },
    #[error("app_metadata may only be sent in the first segment of a message")]
    MetadataNotFirst,
    #[error("metadata frame must set both first and last flags and carry no IPC bytes")]
    BadMetadataFrame,
    #[error("data frame must carry at least one IPC byte")]
    EmptyData,
    #[error("frame payload is {found} bytes, the limit is {limit}")]
    FrameTooLarge { limit: usize, found: usize },
    #[error("IPC message must start with continuation marker 0xFFFFFFFF, found {0:#010x}")]
    NoContinuation(u32),
    #[error("IPC metadata length must be a non-negative multiple of 8, found {0}")]
    BadMetadataLength(i32),
    #[error("IPC message needs {found} bytes, the limit is {limit}")]
    MessageTooLarge { limit: usize, found: u64 },
    #[error("IPC message metadata is not a valid flatbuffer Message: {0}")]
    BadMessage(String),
    #[error("IPC body length must be non-negative, found {0}")]
    BadBodyLength(i64),
    #[error("a first segment must start a new IPC message, but {0} bytes of the previous one are missing")]
    FirstMidMessage(u64),
    #[error("a segment without the first flag must continue a message, but none is open")]
    ContinuationWithoutFirst,
    #[error("a last segment must end its IPC message, but {0} more bytes are needed")]
    LastMidMessage(u64),
    #[error("IPC stream ended inside a message: {0} more bytes were needed")]
    Truncated(u64),
    #[error("credit grant of {grant} bytes would raise the balance above {limit}")]
    CreditOverflow { grant: u64, limit: u64 },
    #[error("frame of {found} bytes exceeds the remaining credit of {credit} bytes")]
    CreditExceeded { credit: u64, found: u64 },
    #[error("a new stream id must be greater than {last}, found {found}")]
    StreamNotIncreasing { found: u32, last: u32 },
    #[error("stream {0} was never opened")]
    UnknownStream(u32),
    #[error("binary frames may only be sent on an open DoPut stream; stream {0} is not one")]
    NotUpload(u32),
    #[error("credit may only be granted to a DoGet stream; stream {0} is not one")]
    NotDownload(u32),
    #[error("binary frames from the gateway go to DoGet streams only; stream {0} is not one")]
    NotGet(u32),
    #[error("control message is not valid: {0}")]
    BadControl(String),
    #[error("DoPut stream {stream} has {limit} frames waiting for the upstream; send fewer, larger frames")]
    TooManyFrames { stream: u32, limit: usize },
    #[error("DoPut stream {0} has ended: no frame or end may follow its end")]
    AfterEnd(u32),
}

/// Results of the wire-protocol core.
pub type Result<T> = std::result::Result<T, ProtocolError>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_is_small() {
        // Errors travel in every `Result` of the hot path; keep them two words.
        assert!(std::mem::size_of::<ProtocolError>() <= 32);
    }
}
