//! The layout of a whole batch in one crossing: every buffer's address and length in one
//! `Uint32Array`, with the column types as one JSON string. `src/js/views.js` builds the
//! typed-array views from it, so no view costs a call into wasm.
//!
//! `nodes` holds each array depth-first, columns in order:
//! `length, nullCount, offset, validityAddress, validityBytes, validityBitOffset,
//!  bufferCount, (address, bytes) × bufferCount, childCount`, then the children.
//! Dictionary values are the dictionary array's single child, as in arrow-rs.

use arrow_array::RecordBatch;
use arrow_data::ArrayData;
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::sync::Arc;

use arrow_schema::{DataType, Field, IntervalUnit, Schema, SchemaRef, TimeUnit, UnionMode};
use js_sys::{Object, Reflect, Uint32Array};
use serde_json::{json, Value};
use wasm_bindgen::JsValue;

/// The batch's `BatchLayout`: `{ numRows, types, nodes }`, built in one pass.
pub(crate) fn batch_layout(batch: &RecordBatch) -> JsValue {
    let mut nodes = Vec::new();
    for column in batch.columns() {
        encode_nodes(&column.to_data(), &mut nodes);
    }
    let layout = Object::new();
    // Reflect::set on a fresh plain object cannot fail.
    let _ = Reflect::set(&layout, &"numRows".into(), &batch.num_rows().into());
    let _ = Reflect::set(&layout, &"types".into(), &types_of(&batch.schema()));
    let _ = Reflect::set(&layout, &"nodes".into(), &Uint32Array::from(&nodes[..]));
    layout.into()
}

thread_local! {
    /// The last schema's `types` string. Batches of one stream share their schema, so its
    /// JSON is built, and its string crosses to JS, once per stream instead of per batch.
    static LAST_TYPES: RefCell<Option<(SchemaRef, JsValue)>> = const { RefCell::new(None) };
}

fn types_of(schema: &SchemaRef) -> JsValue {
    LAST_TYPES.with(|last| {
        let mut last = last.borrow_mut();
        match &*last {
            Some((cached, types)) if Arc::ptr_eq(cached, schema) => types.clone(),
            _ => {
                let types = JsValue::from(schema_types(schema));
                *last = Some((Arc::clone(schema), types.clone()));
                types
            }
        }
    })
}

/// The schema's field descriptors as one JSON string (the `types` of `BatchLayout`).
pub(crate) fn schema_types(schema: &Schema) -> String {
    let fields: Vec<_> = schema
        .fields()
        .iter()
        .map(|f| field_descriptor(f))
        .collect();
    serde_json::to_string(&fields).unwrap_or_default()
}

/// Appends the nodes of `data` and its descendants to `out`.
fn encode_nodes(data: &ArrayData, out: &mut Vec<u32>) {
    out.extend([
        data.len() as u32,
        data.null_count() as u32,
        data.offset() as u32,
    ]);
    match data.nulls() {
        Some(nulls) => out.extend([
            nulls.buffer().as_ptr() as u32,
            nulls.buffer().len() as u32,
            nulls.offset() as u32,
        ]),
        None => out.extend([0, 0, 0]),
    }
    out.push(data.buffers().len() as u32);
    for buffer in data.buffers() {
        out.extend([buffer.as_ptr() as u32, buffer.len() as u32]);
    }
    out.push(data.child_data().len() as u32);
    for child in data.child_data() {
        encode_nodes(child, out);
    }
}

/// The field as `{ name, nullable, type, children, metadata }`, with `type` in the vocabulary of
/// apache-arrow JS (`Int`, `Utf8`, `Timestamp`, ...), so views.js needs no type parser.
fn field_descriptor(field: &Field) -> Value {
    let (kind, children) = type_descriptor(field.data_type());
    json!({
        "name": field.name(),
        "nullable": field.is_nullable(),
        "type": kind,
        "children": children.iter().map(field_descriptor).collect::<Vec<_>>(),
        "metadata": field
            .metadata()
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect::<BTreeMap<_, _>>(),
    })
}

fn unit(unit: &TimeUnit) -> &'static str {
    match unit {
        TimeUnit::Second => "SECOND",
        TimeUnit::Millisecond => "MILLISECOND",
        TimeUnit::Microsecond => "MICROSECOND",
        TimeUnit::Nanosecond => "NANOSECOND",
    }
}

/// The type's descriptor and the fields of its children.
fn type_descriptor(data_type: &DataType) -> (Value, Vec<Field>) {
    use DataType::*;
    let int = |bits: u8, signed: bool| json!({ "id": "Int", "bitWidth": bits, "signed": signed });
    let leaf = |v: Value| (v, Vec::new());
    match data_type {
        Null => leaf(json!({ "id": "Null" })),
        Boolean => leaf(json!({ "id": "Bool" })),
        Int8 => leaf(int(8, true)),
        Int16 => leaf(int(16, true)),
        Int32 => leaf(int(32, true)),
        Int64 => leaf(int(64, true)),
        UInt8 => leaf(int(8, false)),
        UInt16 => leaf(int(16, false)),
        UInt32 => leaf(int(32, false)),
        UInt64 => leaf(int(64, false)),
        Float16 => leaf(json!({ "id": "Float", "bitWidth": 16 })),
        Float32 => leaf(json!({ "id": "Float", "bitWidth": 32 })),
        Float64 => leaf(json!({ "id": "Float", "bitWidth": 64 })),
        Utf8 => leaf(json!({ "id": "Utf8" })),
        LargeUtf8 => leaf(json!({ "id": "LargeUtf8" })),
        Utf8View => leaf(json!({ "id": "Utf8View" })),
        Binary => leaf(json!({ "id": "Binary" })),
        LargeBinary => leaf(json!({ "id": "LargeBinary" })),
        BinaryView => leaf(json!({ "id": "BinaryView" })),
        FixedSizeBinary(width) => leaf(json!({ "id": "FixedSizeBinary", "byteWidth": width })),
        Decimal32(p, s) | Decimal64(p, s) | Decimal128(p, s) | Decimal256(p, s) => {
            let bits = data_type.primitive_width().unwrap_or(0) * 8;
            leaf(json!({ "id": "Decimal", "precision": p, "scale": s, "bitWidth": bits }))
        }
        Date32 => leaf(json!({ "id": "Date", "unit": "DAY" })),
        Date64 => leaf(json!({ "id": "Date", "unit": "MILLISECOND" })),
        Time32(u) => leaf(json!({ "id": "Time", "unit": unit(u), "bitWidth": 32 })),
        Time64(u) => leaf(json!({ "id": "Time", "unit": unit(u), "bitWidth": 64 })),
        Timestamp(u, tz) => {
            leaf(json!({ "id": "Timestamp", "unit": unit(u), "timezone": tz.as_deref() }))
        }
        Duration(u) => leaf(json!({ "id": "Duration", "unit": unit(u) })),
        Interval(u) => {
            let unit = match u {
                IntervalUnit::YearMonth => "YEAR_MONTH",
                IntervalUnit::DayTime => "DAY_TIME",
                IntervalUnit::MonthDayNano => "MONTH_DAY_NANO",
            };
            leaf(json!({ "id": "Interval", "unit": unit }))
        }
        List(f) => (json!({ "id": "List" }), vec![f.as_ref().clone()]),
        LargeList(f) => (json!({ "id": "LargeList" }), vec![f.as_ref().clone()]),
        FixedSizeList(f, size) => (
            json!({ "id": "FixedSizeList", "listSize": size }),
            vec![f.as_ref().clone()],
        ),
        Struct(fields) => (
            json!({ "id": "Struct" }),
            fields.iter().map(|f| f.as_ref().clone()).collect(),
        ),
        Map(f, sorted) => (
            json!({ "id": "Map", "keysSorted": sorted }),
            vec![f.as_ref().clone()],
        ),
        Union(fields, mode) => {
            let mode = match mode {
                UnionMode::Sparse => "Sparse",
                UnionMode::Dense => "Dense",
            };
            let type_ids: Vec<i8> = fields.iter().map(|(id, _)| id).collect();
            (
                json!({ "id": "Union", "mode": mode, "typeIds": type_ids }),
                fields.iter().map(|(_, f)| f.as_ref().clone()).collect(),
            )
        }
        Dictionary(key, value) => {
            let (index, _) = type_descriptor(key);
            (
                json!({ "id": "Dictionary", "indices": index }),
                vec![Field::new("values", value.as_ref().clone(), true)],
            )
        }
        RunEndEncoded(ends, values) => (
            json!({ "id": "RunEndEncoded" }),
            vec![ends.as_ref().clone(), values.as_ref().clone()],
        ),
        other => leaf(json!({ "id": "Unsupported", "name": other.to_string() })),
    }
}
