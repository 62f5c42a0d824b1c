//! `batchFromColumns` and `fromArrowJS` at the binding, in Node and in headless Chromium:
//! plain JS columns become the arrow-rs arrays they describe, copied once (counted by
//! `importStats`), the writer writes them, and bad input gives a clear `Error`. Arrow JS
//! tables themselves are tested through the package (tests/js/from_js.test.js), where
//! apache-arrow is at hand.
#![cfg(all(target_arch = "wasm32", feature = "writer"))]

use std::sync::Arc;

use arrow_array::{ArrayRef, BooleanArray, Int32Array, Int64Array, NullArray, StringArray};
use js_sys::{Array, BigInt64Array, Int32Array as JsInt32Array, Object, Reflect};
use quiver::wasm::{batch_from_columns, from_arrow_js, import_stats, table_from_ipc, StreamWriter};
use wasm_bindgen::{JsError, JsValue};
use wasm_bindgen_test::*;

fn columns(pairs: &[(&str, JsValue)]) -> JsValue {
    let object = Object::new();
    for (key, value) in pairs {
        Reflect::set(&object, &(*key).into(), value).unwrap();
    }
    object.into()
}

fn array(values: &[JsValue]) -> JsValue {
    values.iter().collect::<Array>().into()
}

fn message(error: JsError) -> String {
    js_sys::Error::from(JsValue::from(error)).message().into()
}

fn bytes_copied() -> f64 {
    Reflect::get(&import_stats(), &"bytesCopied".into())
        .unwrap()
        .as_f64()
        .unwrap()
}

#[wasm_bindgen_test]
fn plain_columns_become_the_arrays_they_describe() {
    let before = bytes_copied();
    let batch = batch_from_columns(columns(&[
        ("i", JsInt32Array::from(&[1, 2, 3][..]).into()),
        ("x", BigInt64Array::from(&[7i64, 8, 9][..]).into()),
        ("s", array(&["é".into(), JsValue::NULL, "ab".into()])),
        ("b", array(&[true.into(), JsValue::UNDEFINED, false.into()])),
        ("n", array(&[JsValue::NULL, JsValue::NULL, JsValue::NULL])),
    ]))
    .unwrap();
    // i 12, x 24, s validity 1 + offsets 16 + UTF-8 4, b validity 1 + values 1, n nothing.
    assert_eq!(bytes_copied() - before, 59.0);
    let want: Vec<ArrayRef> = vec![
        Arc::new(Int32Array::from(vec![1, 2, 3])),
        Arc::new(Int64Array::from(vec![7, 8, 9])),
        Arc::new(StringArray::from(vec![Some("é"), None, Some("ab")])),
        Arc::new(BooleanArray::from(vec![Some(true), None, Some(false)])),
        Arc::new(NullArray::new(3)),
    ];
    assert_eq!(batch.as_arrow().columns(), want.as_slice());

    let mut writer = StreamWriter::for_batch(&batch, None).unwrap();
    let mut bytes = writer.write(&batch).unwrap().to_uint8_array().to_vec();
    bytes.extend(writer.finish().unwrap().to_uint8_array().to_vec());
    let table = table_from_ipc(js_sys::Uint8Array::from(bytes.as_slice()).into(), None).unwrap();
    assert_eq!(
        table.arrow_batches(),
        std::slice::from_ref(batch.as_arrow())
    );
    let again = table.to_ipc(None).unwrap().to_vec();
    assert_eq!(again, bytes);
}

#[wasm_bindgen_test]
fn bad_columns_are_errors_naming_the_column() {
    let error = batch_from_columns(columns(&[
        ("a", JsInt32Array::from(&[1, 2][..]).into()),
        ("b", array(&["x".into()])),
    ]))
    .unwrap_err();
    assert_eq!(
        message(error),
        r#"batchFromColumns: column "b" has 1 rows, expected 2 like column "a""#
    );
    let error =
        batch_from_columns(columns(&[("a", array(&[true.into(), "x".into()]))])).unwrap_err();
    assert_eq!(
        message(error),
        r#"batchFromColumns: column "a": entry 1 is a string, expected a boolean like the column's first value, or null"#
    );
}

#[wasm_bindgen_test]
fn from_arrow_js_refuses_other_values() {
    let error = from_arrow_js(JsValue::from(3)).unwrap_err();
    assert_eq!(
        message(error),
        "fromArrowJS expects an apache-arrow RecordBatch or Table, found number"
    );
}
