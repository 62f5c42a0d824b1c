//! Plain JS objects for what the API returns (counters, sizes, schemas), set key by key
//! with `Reflect`. serde-wasm-bindgen's serializer did this for 2.8 KiB of the package
//! (brotli), as its deserializer did for the option objects (`options.rs`).

use js_sys::{Object, Reflect};
use wasm_bindgen::JsValue;

/// Sets `key` on a plain object made here, which cannot fail.
pub(crate) fn set(target: &Object, key: &str, value: &JsValue) {
    let _ = Reflect::set(target, &key.into(), value);
}

/// A fresh plain object with `entries`, in their order.
pub(crate) fn object(entries: &[(&str, JsValue)]) -> JsValue {
    let object = Object::new();
    for (key, value) in entries {
        set(&object, key, value);
    }
    object.into()
}

/// A fresh plain object of strings.
pub(crate) fn strings<'a>(entries: impl IntoIterator<Item = (&'a str, &'a str)>) -> JsValue {
    let object = Object::new();
    for (key, value) in entries {
        set(&object, key, &value.into());
    }
    object.into()
}
