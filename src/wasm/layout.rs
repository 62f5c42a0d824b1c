//! The layout of a whole batch in one crossing: every buffer's address and length in one
//! `Uint32Array`, with the column types as one JSON string. `src/js/layout.js` parses
//! it, and `src/js/column.js` builds typed-array views from it, so no view costs a call
//! into wasm.
//!
//! `nodes` holds each array depth-first, columns in order:
//! `length, nullCount, offset, validityAddress, validityBytes, validityBitOffset,
//!  bufferCount, (address, bytes) × bufferCount, childCount`, then the children.
//! Dictionary values are the dictionary array's single child, as in arrow-rs.

use arrow_array::RecordBatch;
use arrow_data::ArrayData;
use std::cell::RefCell;
use std::sync::Arc;

use arrow_schema::{DataType, Field, IntervalUnit, Schema, SchemaRef, TimeUnit, UnionMode};
use wasm_bindgen::prelude::*;

#[wasm_bindgen(module = "/src/js/layout.js")]
extern "C" {
    /// The `BatchLayout` object of these parts, in one call: setting its properties from
    /// Rust would cost a call and a string conversion each. `nodes` is copied out.
    #[wasm_bindgen(js_name = batchLayout)]
    fn make_layout(num_rows: usize, types: &JsValue, nodes: &[u32]) -> JsValue;
}

/// The batch's `BatchLayout`: `{ numRows, types, nodes }`, built in one pass.
pub(crate) fn batch_layout(batch: &RecordBatch) -> JsValue {
    // Enough for flat columns of up to two buffers (ten or twelve words), so that the
    // usual batch grows nothing.
    let mut nodes = Vec::with_capacity(12 * batch.num_columns());
    for column in batch.columns() {
        encode_nodes(&column.to_data(), &mut nodes);
    }
    make_layout(batch.num_rows(), &types_of(&batch.schema()), &nodes)
}

/// The nodes of column `index` of every batch, one batch after another: a table's column
/// needs only its own, where a batch layout holds every column's.
pub(crate) fn column_nodes(batches: &[RecordBatch], index: usize) -> Vec<u32> {
    let mut nodes = Vec::with_capacity(12 * batches.len());
    for batch in batches {
        encode_nodes(&batch.column(index).to_data(), &mut nodes);
    }
    nodes
}

thread_local! {
    /// The last schema's `types` string. Batches of one stream share their schema, so its
    /// JSON is built, and its string crosses to JS, once per stream instead of per batch.
    static LAST_TYPES: RefCell<Option<(SchemaRef, JsValue)>> = const { RefCell::new(None) };
}

pub(crate) fn types_of(schema: &SchemaRef) -> JsValue {
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
fn schema_types(schema: &Schema) -> String {
    let fields: Vec<_> = schema
        .fields()
        .iter()
        .map(|f| field_descriptor(f))
        .collect();
    format!("[{}]", fields.join(","))
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

/// The field as `{ name, nullable, type, children, metadata }`, with `type` in the vocabulary
/// of apache-arrow JS (`Int`, `Utf8`, `Timestamp`, ...), so the JS needs no type parser.
///
/// Written as JSON text directly: serde_json's `Value` tree cost 20 KiB of wasm.
fn field_descriptor(field: &Field) -> String {
    let (mut kind, children) = type_descriptor(field.data_type());
    // Whether a dictionary is ordered is the field's, not its type's.
    if matches!(field.data_type(), DataType::Dictionary(..))
        && field.dict_is_ordered() == Some(true)
    {
        kind.insert_str(kind.len() - 1, r#","ordered":true"#);
    }
    let children: Vec<String> = children.iter().map(field_descriptor).collect();
    // In key order: `Metadata` is a `BTreeMap`.
    let metadata: Vec<String> = field
        .metadata()
        .iter()
        .map(|(k, v)| format!("{}:{}", quote(k), quote(v)))
        .collect();
    format!(
        r#"{{"name":{},"nullable":{},"type":{kind},"children":[{}],"metadata":{{{}}}}}"#,
        quote(field.name()),
        field.is_nullable(),
        children.join(","),
        metadata.join(",")
    )
}

/// A JSON string literal.
fn quote(text: &str) -> String {
    serde_json::to_string(text).unwrap_or_else(|_| "\"\"".to_owned())
}

fn unit(unit: &TimeUnit) -> &'static str {
    match unit {
        TimeUnit::Second => "SECOND",
        TimeUnit::Millisecond => "MILLISECOND",
        TimeUnit::Microsecond => "MICROSECOND",
        TimeUnit::Nanosecond => "NANOSECOND",
    }
}

/// The type's descriptor (JSON text) and the fields of its children. Every type has an
/// arm, and none a catch-all: a type arrow-rs adds is a compile error here, not a column
/// whose children JS cannot name.
fn type_descriptor(data_type: &DataType) -> (String, Vec<Field>) {
    use DataType::*;
    let int =
        |bits: u8, signed: bool| format!(r#"{{"id":"Int","bitWidth":{bits},"signed":{signed}}}"#);
    let id = |id: &str| format!(r#"{{"id":"{id}"}}"#);
    let leaf = |v: String| (v, Vec::new());
    match data_type {
        Null => leaf(id("Null")),
        Boolean => leaf(id("Bool")),
        Int8 => leaf(int(8, true)),
        Int16 => leaf(int(16, true)),
        Int32 => leaf(int(32, true)),
        Int64 => leaf(int(64, true)),
        UInt8 => leaf(int(8, false)),
        UInt16 => leaf(int(16, false)),
        UInt32 => leaf(int(32, false)),
        UInt64 => leaf(int(64, false)),
        Float16 => leaf(r#"{"id":"Float","bitWidth":16}"#.to_owned()),
        Float32 => leaf(r#"{"id":"Float","bitWidth":32}"#.to_owned()),
        Float64 => leaf(r#"{"id":"Float","bitWidth":64}"#.to_owned()),
        Utf8 => leaf(id("Utf8")),
        LargeUtf8 => leaf(id("LargeUtf8")),
        Utf8View => leaf(id("Utf8View")),
        Binary => leaf(id("Binary")),
        LargeBinary => leaf(id("LargeBinary")),
        BinaryView => leaf(id("BinaryView")),
        FixedSizeBinary(width) => {
            leaf(format!(r#"{{"id":"FixedSizeBinary","byteWidth":{width}}}"#))
        }
        Decimal32(p, s) | Decimal64(p, s) | Decimal128(p, s) | Decimal256(p, s) => {
            let bits = data_type.primitive_width().unwrap_or(0) * 8;
            leaf(format!(
                r#"{{"id":"Decimal","precision":{p},"scale":{s},"bitWidth":{bits}}}"#
            ))
        }
        Date32 => leaf(r#"{"id":"Date","unit":"DAY"}"#.to_owned()),
        Date64 => leaf(r#"{"id":"Date","unit":"MILLISECOND"}"#.to_owned()),
        Time32(u) => leaf(format!(
            r#"{{"id":"Time","unit":"{}","bitWidth":32}}"#,
            unit(u)
        )),
        Time64(u) => leaf(format!(
            r#"{{"id":"Time","unit":"{}","bitWidth":64}}"#,
            unit(u)
        )),
        Timestamp(u, tz) => {
            let timezone = tz.as_deref().map_or_else(|| "null".to_owned(), quote);
            leaf(format!(
                r#"{{"id":"Timestamp","unit":"{}","timezone":{timezone}}}"#,
                unit(u)
            ))
        }
        Duration(u) => leaf(format!(r#"{{"id":"Duration","unit":"{}"}}"#, unit(u))),
        Interval(u) => {
            let unit = match u {
                IntervalUnit::YearMonth => "YEAR_MONTH",
                IntervalUnit::DayTime => "DAY_TIME",
                IntervalUnit::MonthDayNano => "MONTH_DAY_NANO",
            };
            leaf(format!(r#"{{"id":"Interval","unit":"{unit}"}}"#))
        }
        List(f) => (id("List"), vec![f.as_ref().clone()]),
        LargeList(f) => (id("LargeList"), vec![f.as_ref().clone()]),
        ListView(f) => (id("ListView"), vec![f.as_ref().clone()]),
        LargeListView(f) => (id("LargeListView"), vec![f.as_ref().clone()]),
        FixedSizeList(f, size) => (
            format!(r#"{{"id":"FixedSizeList","listSize":{size}}}"#),
            vec![f.as_ref().clone()],
        ),
        Struct(fields) => (
            id("Struct"),
            fields.iter().map(|f| f.as_ref().clone()).collect(),
        ),
        Map(f, sorted) => (
            format!(r#"{{"id":"Map","keysSorted":{sorted}}}"#),
            vec![f.as_ref().clone()],
        ),
        Union(fields, mode) => {
            let mode = match mode {
                UnionMode::Sparse => "Sparse",
                UnionMode::Dense => "Dense",
            };
            let type_ids: Vec<String> = fields.iter().map(|(id, _)| id.to_string()).collect();
            (
                format!(
                    r#"{{"id":"Union","mode":"{mode}","typeIds":[{}]}}"#,
                    type_ids.join(",")
                ),
                fields.iter().map(|(_, f)| f.as_ref().clone()).collect(),
            )
        }
        Dictionary(key, value) => {
            let (index, _) = type_descriptor(key);
            (
                format!(r#"{{"id":"Dictionary","indices":{index}}}"#),
                vec![Field::new("values", value.as_ref().clone(), true)],
            )
        }
        RunEndEncoded(ends, values) => (
            id("RunEndEncoded"),
            vec![ends.as_ref().clone(), values.as_ref().clone()],
        ),
    }
}
