//! The one error type of the core. Every message says what was expected and what was
//! found, because it reaches a JavaScript user as an `Error` message.

use arrow_schema::ArrowError;

/// Everything that can go wrong while reading or writing Arrow IPC.
#[derive(Debug, thiserror::Error)]
pub enum QuiverError {
    /// The stream ended while a message was still incomplete.
    #[error("stream ended inside a message: {what} needs {needed} bytes, got {got}")]
    Truncated {
        what: &'static str,
        needed: usize,
        got: usize,
    },
    /// A length field or a declared size broke a configured limit.
    #[error("{what} of {found} bytes exceeds {limit} = {max} bytes")]
    LimitExceeded {
        what: &'static str,
        limit: &'static str,
        found: u64,
        max: u64,
    },
    /// The bytes do not follow the IPC format.
    #[error("invalid Arrow IPC: {0}")]
    Invalid(String),
    /// A compressed buffer did not decompress as declared.
    #[error("{codec} buffer is corrupt: {detail}")]
    Codec { codec: &'static str, detail: String },
    /// The data is valid Arrow but Quiver does not handle it.
    #[error("unsupported: {0}")]
    Unsupported(String),
    /// The caller used the API in a way it does not allow.
    #[error("{0}")]
    Usage(String),
    /// A broken invariant inside Quiver: a bug to report, never the caller's fault.
    #[error("internal error (please report): {0}")]
    Internal(String),
    /// An error reported by arrow-rs (boxed: it is large and rare).
    #[error(transparent)]
    Arrow(Box<ArrowError>),
}

/// The core's result type.
pub type Result<T, E = QuiverError> = std::result::Result<T, E>;

impl From<ArrowError> for QuiverError {
    fn from(error: ArrowError) -> Self {
        QuiverError::Arrow(Box::new(error))
    }
}

impl QuiverError {
    pub(crate) fn invalid(message: impl Into<String>) -> Self {
        QuiverError::Invalid(message.into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_stays_small() {
        // Results flow through every hot call; a large error bloats all of them.
        // LimitExceeded is the largest variant (two names and two counts); arrow's error is
        // boxed so that it does not set the size.
        assert_eq!(std::mem::size_of::<QuiverError>(), 56);
    }

    #[test]
    fn messages_say_expected_and_found() {
        let e = QuiverError::Truncated {
            what: "message body",
            needed: 4096,
            got: 1200,
        };
        assert_eq!(
            e.to_string(),
            "stream ended inside a message: message body needs 4096 bytes, got 1200"
        );
    }
}
