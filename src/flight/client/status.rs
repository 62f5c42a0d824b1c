//! `Failure`: why a call or a connection ended badly, as a Flight status code and message.
//! One connection failure fails many calls, so it is cloned, never consumed.

use crate::flight::ProtocolError;
use crate::ipc::QuiverError;

/// Status codes the client reports for failures it sees itself, or acts on.
pub const CANCELLED: i32 = 1;
pub const INVALID_ARGUMENT: i32 = 3;
pub const PERMISSION_DENIED: i32 = 7;
pub const RESOURCE_EXHAUSTED: i32 = 8;
pub const INTERNAL: i32 = 13;
pub const UNAVAILABLE: i32 = 14;
pub const DATA_LOSS: i32 = 15;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    pub code: i32,
    pub message: String,
    /// The bytes of gRPC's `grpc-status-details-bin`, as the gateway relayed them.
    pub details: Vec<u8>,
}

impl Failure {
    pub fn new(code: i32, message: impl Into<String>) -> Self {
        Failure {
            code,
            message: message.into(),
            details: Vec::new(),
        }
    }

    pub(super) fn cancelled() -> Self {
        Failure::new(CANCELLED, "cancelled by the client")
    }
}

impl From<QuiverError> for Failure {
    fn from(e: QuiverError) -> Self {
        // A limit the client keeps is a lack of resources, not a broken stream.
        let code = match e {
            QuiverError::LimitExceeded { .. } => RESOURCE_EXHAUSTED,
            _ => INTERNAL,
        };
        Failure::new(code, format!("the stream's IPC bytes do not decode: {e}"))
    }
}

impl From<ProtocolError> for Failure {
    fn from(e: ProtocolError) -> Self {
        Failure::new(INTERNAL, format!("the gateway broke the protocol: {e}"))
    }
}
