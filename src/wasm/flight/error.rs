//! A [`Failure`] becomes the `FlightError` a promise rejects with.

use wasm_bindgen::prelude::*;

use crate::flight::client::Failure;
use crate::flight::control::code_name;

#[wasm_bindgen(module = "/src/js/flight.js")]
extern "C" {
    #[wasm_bindgen(js_name = flightError)]
    fn flight_error(code: i32, code_name: &str, message: &str, details: &[u8]) -> JsValue;
}

/// A `FlightError` (a JS `Error` with `code`, `codeName` and `details`).
pub(super) fn to_js(failure: &Failure) -> JsValue {
    flight_error(
        failure.code,
        code_name(failure.code),
        &failure.message,
        &failure.details,
    )
}

/// What a thrown JS value says.
pub(super) fn js_message(e: &JsValue) -> String {
    js_sys::Reflect::get(e, &"message".into())
        .ok()
        .and_then(|m| m.as_string())
        .or_else(|| e.as_string())
        .unwrap_or_else(|| format!("{e:?}"))
}
