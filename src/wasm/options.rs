//! Option objects: TypeScript interfaces for users, plain Rust structs for the core.

use serde::Deserialize;
use wasm_bindgen::prelude::*;

use super::error::{usage, WasmResult};
use crate::ipc::ReadLimits;

#[wasm_bindgen(typescript_custom_section)]
const READER_OPTIONS_TS: &str = r#"
/** Limits applied to untrusted input while decoding. */
export interface ReaderOptions {
  /** Largest accepted message, metadata plus body, in bytes. Default 256 MiB. */
  maxMessageBytes?: number;
  /** Largest accepted decompressed body of one message, in bytes. Default 1 GiB. */
  maxDecompressedBytes?: number;
}
"#;

#[wasm_bindgen]
extern "C" {
    /// `ReaderOptions` as JavaScript passes it.
    #[wasm_bindgen(typescript_type = "ReaderOptions")]
    pub type ReaderOptionsJs;
}

const READER_FIELDS: [&str; 2] = ["maxMessageBytes", "maxDecompressedBytes"];

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct ReaderOptions {
    max_message_bytes: Option<f64>,
    max_decompressed_bytes: Option<f64>,
}

/// Reads `ReaderOptions` into core limits, refusing anything but positive whole numbers.
pub(crate) fn read_limits(options: Option<ReaderOptionsJs>) -> WasmResult<ReadLimits> {
    let options: ReaderOptions = match options {
        Some(value) if !value.is_undefined() && !value.is_null() => {
            check_fields(&value, "ReaderOptions", &READER_FIELDS)?;
            serde_wasm_bindgen::from_value(value.into())
                .map_err(|e| usage(format!("invalid ReaderOptions: {e}")))?
        }
        _ => ReaderOptions::default(),
    };
    let defaults = ReadLimits::default();
    Ok(ReadLimits {
        max_message_bytes: byte_count(
            "maxMessageBytes",
            options.max_message_bytes,
            defaults.max_message_bytes,
        )?,
        max_decompressed_bytes: byte_count(
            "maxDecompressedBytes",
            options.max_decompressed_bytes,
            defaults.max_decompressed_bytes,
        )?,
    })
}

/// Refuses keys an option type does not have. serde-wasm-bindgen reads only the fields a
/// struct names, so `deny_unknown_fields` never fires and a misspelled option would be
/// dropped without a word.
pub(crate) fn check_fields(value: &JsValue, type_name: &str, fields: &[&str]) -> WasmResult<()> {
    let Some(object) = value.dyn_ref::<js_sys::Object>() else {
        return Ok(());
    };
    for key in js_sys::Object::keys(object)
        .iter()
        .filter_map(|k| k.as_string())
    {
        if !fields.contains(&key.as_str()) {
            return Err(usage(format!(
                "unknown {type_name} field '{key}'; the fields are {}",
                fields.join(", ")
            )));
        }
    }
    Ok(())
}

/// A byte-count option: a positive whole number, or the default when absent.
pub(crate) fn byte_count(name: &str, value: Option<f64>, default: u64) -> WasmResult<u64> {
    match value {
        None => Ok(default),
        Some(v) if v.is_finite() && v >= 1.0 && v.fract() == 0.0 && v <= u64::MAX as f64 => {
            Ok(v as u64)
        }
        Some(v) => Err(usage(format!(
            "{name} must be a positive whole number of bytes, found {v}"
        ))),
    }
}
