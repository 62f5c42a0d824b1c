//! Option objects: TypeScript interfaces for users, plain Rust structs for the core.

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
  /**
   * Largest total of the dictionaries a stream has sent, in bytes: the reader keeps them
   * for the whole stream, and delta dictionary batches append to them. Default 1 GiB.
   */
  maxDictionaryBytes?: number;
}
"#;

#[wasm_bindgen]
extern "C" {
    /// `ReaderOptions` as JavaScript passes it.
    #[wasm_bindgen(typescript_type = "ReaderOptions")]
    pub type ReaderOptionsJs;
}

const READER_FIELDS: [&str; 3] = [
    "maxMessageBytes",
    "maxDecompressedBytes",
    "maxDictionaryBytes",
];

/// Reads `ReaderOptions` into core limits, refusing anything but positive whole numbers.
pub(crate) fn read_limits(options: Option<ReaderOptionsJs>) -> WasmResult<ReadLimits> {
    let options = options_object(options.map(Into::into), "ReaderOptions", &READER_FIELDS)?;
    let defaults = ReadLimits::default();
    Ok(ReadLimits {
        max_message_bytes: byte_count(
            "maxMessageBytes",
            number_field(options.as_ref(), "maxMessageBytes")?,
            defaults.max_message_bytes,
        )?,
        max_decompressed_bytes: byte_count(
            "maxDecompressedBytes",
            number_field(options.as_ref(), "maxDecompressedBytes")?,
            defaults.max_decompressed_bytes,
        )?,
        max_dictionary_bytes: byte_count(
            "maxDictionaryBytes",
            number_field(options.as_ref(), "maxDictionaryBytes")?,
            defaults.max_dictionary_bytes,
        )?,
    })
}

/// An options object with only the given fields, or `None` for undefined or null. Read
/// field by field rather than through serde, whose deserializers cost several KiB of wasm.
pub(crate) fn options_object(
    value: Option<JsValue>,
    type_name: &str,
    fields: &[&str],
) -> WasmResult<Option<JsValue>> {
    let Some(value) = value.filter(|v| !v.is_undefined() && !v.is_null()) else {
        return Ok(None);
    };
    if !value.is_object() {
        return Err(usage(format!(
            "{type_name} must be an object, found {}",
            shown(&value)
        )));
    }
    check_fields(&value, type_name, fields)?;
    Ok(Some(value))
}

/// A field of an options object: `None` when absent, undefined or null.
fn field(object: Option<&JsValue>, name: &str) -> Option<JsValue> {
    let value = js_sys::Reflect::get(object?, &name.into()).ok()?;
    (!value.is_undefined() && !value.is_null()).then_some(value)
}

/// A number field; anything else is an error naming the field.
pub(crate) fn number_field(object: Option<&JsValue>, name: &str) -> WasmResult<Option<f64>> {
    field(object, name)
        .map(|v| {
            v.as_f64()
                .ok_or_else(|| usage(format!("{name} must be a number, found {}", shown(&v))))
        })
        .transpose()
}

/// A string field; anything else is an error naming the field.
#[cfg(feature = "writer")]
pub(crate) fn string_field(object: Option<&JsValue>, name: &str) -> WasmResult<Option<String>> {
    field(object, name)
        .map(|v| {
            v.as_string()
                .ok_or_else(|| usage(format!("{name} must be a string, found {}", shown(&v))))
        })
        .transpose()
}

/// A boolean field; anything else is an error naming the field.
#[cfg(feature = "writer")]
pub(crate) fn bool_field(object: Option<&JsValue>, name: &str) -> WasmResult<Option<bool>> {
    field(object, name)
        .map(|v| {
            v.as_bool()
                .ok_or_else(|| usage(format!("{name} must be a boolean, found {}", shown(&v))))
        })
        .transpose()
}

/// A value as JSON writes it, for error messages.
pub(crate) fn shown(value: &JsValue) -> String {
    js_sys::JSON::stringify(value)
        .ok()
        .and_then(|text| text.as_string())
        .unwrap_or_else(|| format!("{value:?}"))
}

/// Refuses keys an option type does not have: the fields are read by name, so a
/// misspelled option would otherwise be dropped without a word.
fn check_fields(value: &JsValue, type_name: &str, fields: &[&str]) -> WasmResult<()> {
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
