//! `Failure`: why a stream or a connection ended badly, kept in Rust until it becomes the
//! `FlightError` a promise rejects with. One connection failure fails many streams, so it
//! is cloned, never consumed.

use wasm_bindgen::prelude::*;

use crate::flight::control::code_name;

#[wasm_bindgen(module = "/src/js/flight.js")]
extern "C" {
    #[wasm_bindgen(js_name = flightError)]
    fn flight_error(code: i32, code_name: &str, message: &str, details: &[u8]) -> JsValue;
}

/// Status codes the client reports for failures it sees itself.
pub(super) const CANCELLED: i32 = 1;
pub(super) const INVALID_ARGUMENT: i32 = 3;
pub(super) const RESOURCE_EXHAUSTED: i32 = 8;
pub(super) const INTERNAL: i32 = 13;
pub(super) const UNAVAILABLE: i32 = 14;
pub(super) const DATA_LOSS: i32 = 15;

#[derive(Debug, Clone)]
pub(super) struct Failure {
    pub code: i32,
    pub message: String,
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

    /// A `FlightError` (a JS `Error` with `code`, `codeName` and `details`).
    pub fn to_js(&self) -> JsValue {
        flight_error(
            self.code,
            code_name(self.code),
            &self.message,
            &self.details,
        )
    }
}

impl From<crate::ipc::QuiverError> for Failure {
    fn from(e: crate::ipc::QuiverError) -> Self {
        // A limit the client keeps is a lack of resources, not a broken stream.
        let code = match e {
            crate::ipc::QuiverError::LimitExceeded { .. } => RESOURCE_EXHAUSTED,
            _ => INTERNAL,
        };
        Failure::new(code, format!("the stream's IPC bytes do not decode: {e}"))
    }
}

impl From<crate::flight::ProtocolError> for Failure {
    fn from(e: crate::flight::ProtocolError) -> Self {
        Failure::new(INTERNAL, format!("the gateway broke the protocol: {e}"))
    }
}
