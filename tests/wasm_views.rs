//! The batch layout and the JS columns built from it, in Node and in headless Chromium:
//! the layout's nodes point at the batch's own buffers (no copy), the columns read them,
//! a dropped batch turns its columns' reads into errors, and a missing column is an error
//! naming the columns there are. (Every type against pyarrow and apache-arrow JS is in
//! tests/js/columns.test.js and tests/browser/columns.test.js.)
#![cfg(target_arch = "wasm32")]

use std::sync::Arc;

use arrow_array::types::Int32Type;
use arrow_array::{ArrayRef, Int32Array, ListArray, StringArray, StructArray};
use arrow_schema::{DataType, Field};
use js_sys::{Array, Function, Reflect, JSON};
use quiver::wasm::RecordBatch;
use wasm_bindgen::{JsCast, JsError, JsValue};
use wasm_bindgen_test::*;

fn batch() -> arrow_array::RecordBatch {
    let ids: ArrayRef = Arc::new(Int32Array::from(vec![Some(1), None, Some(3)]));
    let names: ArrayRef = Arc::new(StringArray::from(vec!["a", "bé", "c"]));
    arrow_array::RecordBatch::try_from_iter([("id", ids), ("name", names)]).unwrap()
}

fn get(value: &JsValue, key: &str) -> JsValue {
    Reflect::get(value, &key.into()).unwrap()
}

/// Calls `value[method](...args)`.
fn call(value: &JsValue, method: &str, args: &[JsValue]) -> Result<JsValue, JsValue> {
    let f: Function = get(value, method).dyn_into().unwrap();
    f.apply(value, &args.iter().collect())
}

#[wasm_bindgen_test]
fn layout_points_at_the_batch_buffers() {
    let arrow = batch();
    let id_data = arrow.column(0).to_data();
    let mut quiver = RecordBatch::new(arrow.clone());
    let layout = quiver.layout();
    assert_eq!(get(&layout, "numRows").as_f64(), Some(3.0));
    let nodes: Vec<u32> = Array::from(&get(&layout, "nodes"))
        .iter()
        .map(|n| n.as_f64().unwrap() as u32)
        .collect();
    let values = id_data.buffers()[0].as_ptr() as u32;
    let validity = id_data.nulls().unwrap().buffer().as_ptr() as u32;
    // id: length 3, 1 null, offset 0, validity (address, 1 byte, bit 0), one buffer of
    // 12 bytes, no children.
    assert_eq!(nodes[..11], [3, 1, 0, validity, 1, 0, 1, values, 12, 0, 3]);
    // The same object on a second call: one crossing per batch.
    assert!(JsValue::eq(&quiver.layout(), &layout));
}

#[wasm_bindgen_test]
fn columns_read_the_values_and_throw_once_the_batch_is_dropped() {
    let mut quiver = RecordBatch::new(batch());
    let id = quiver.column(JsValue::from("id")).unwrap();
    let name = quiver.column(JsValue::from(1)).unwrap();
    assert_eq!(call(&id, "get", &[0.into()]).unwrap().as_f64(), Some(1.0));
    assert!(call(&id, "get", &[1.into()]).unwrap().is_null());
    assert_eq!(
        call(&name, "get", &[1.into()]).unwrap().as_string(),
        Some("bé".into())
    );
    assert_eq!(get(&id, "nullCount").as_f64(), Some(1.0));
    drop(quiver);
    let error = call(&name, "get", &[0.into()]).unwrap_err();
    let message: String = js_sys::Error::from(error).message().into();
    assert!(
        message.starts_with("this column's RecordBatch was freed"),
        "{message}"
    );
}

#[wasm_bindgen_test]
fn a_missing_column_names_the_columns() {
    let mut quiver = RecordBatch::new(batch());
    let error = quiver.column(JsValue::from("price")).unwrap_err();
    let message: String = js_sys::Error::from(JsValue::from(error)).message().into();
    assert_eq!(
        message,
        r#"no column named "price" in this batch; the columns are: id, name"#
    );
    let error: JsError = quiver.column(JsValue::from(2)).unwrap_err();
    let message: String = js_sys::Error::from(JsValue::from(error)).message().into();
    assert_eq!(
        message,
        "no column at index 2 in this batch; the columns are: id, name"
    );
}

#[wasm_bindgen_test]
fn a_column_read_first_steps_over_the_nested_columns_before_it() {
    // A list and a struct of strings before an int column: reading the last column first
    // must find its nodes past every child node of the first two.
    let list = ListArray::from_iter_primitive::<Int32Type, _, _>([
        Some(vec![Some(1), Some(2)]),
        None,
        Some(vec![]),
    ]);
    let names: ArrayRef = Arc::new(StringArray::from(vec!["x", "y", "z"]));
    let person = StructArray::from(vec![(
        Arc::new(Field::new("s", DataType::Utf8, false)),
        names,
    )]);
    let last: ArrayRef = Arc::new(Int32Array::from(vec![7, 8, 9]));
    let arrow = arrow_array::RecordBatch::try_from_iter([
        ("list", Arc::new(list) as ArrayRef),
        ("person", Arc::new(person) as ArrayRef),
        ("n", last),
    ])
    .unwrap();
    let mut quiver = RecordBatch::new(arrow);
    let n = quiver.column(JsValue::from(2)).unwrap();
    assert_eq!(call(&n, "get", &[2.into()]).unwrap().as_f64(), Some(9.0));
    let person = quiver.column(JsValue::from(1)).unwrap();
    let row = call(&person, "get", &[1.into()]).unwrap();
    assert_eq!(get(&row, "s").as_string(), Some("y".into()));
    let list = quiver.column(JsValue::from(0)).unwrap();
    let first = call(&list, "get", &[0.into()]).unwrap();
    assert_eq!(
        JSON::stringify(&first).unwrap().as_string(),
        Some("[1,2]".into())
    );
    assert!(call(&list, "get", &[1.into()]).unwrap().is_null());
}
