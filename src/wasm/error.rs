//! Errors at the boundary: core errors become JS `Error`s carrying the core's message
//! (wasm-bindgen's `From<E: std::error::Error> for JsError` does the conversion for `?`).

use wasm_bindgen::JsError;

/// The result type of every fallible export.
pub type WasmResult<T> = Result<T, JsError>;

/// An error for a caller's misuse of the JS API.
pub(crate) fn usage(message: impl std::fmt::Display) -> JsError {
    JsError::new(&message.to_string())
}
