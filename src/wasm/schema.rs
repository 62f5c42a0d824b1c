//! Schemas as plain JS objects: `{ fields: [{ name, type, nullable, metadata, children }],
//! metadata }`, with `type` written as arrow-rs displays it (`Int64`, `Utf8`, ...); and a
//! record batch message's custom metadata, to and from a plain object of strings.

use arrow_schema::{DataType, Field, Metadata, Schema};
use js_sys::{Array, Object, Reflect};
use wasm_bindgen::prelude::*;

use super::error::{usage, WasmResult};
use super::object::{object, strings};
use super::options::shown;
use crate::ipc::BatchMetadata;

#[wasm_bindgen(typescript_custom_section)]
const SCHEMA_TS: &str = r#"
/** A column's description. */
export interface Field {
  name: string;
  /** The Arrow type as arrow-rs writes it, e.g. `Int64`, `Utf8`, `Timestamp(ms, "UTC")`. */
  type: string;
  nullable: boolean;
  metadata: Record<string, string>;
  /** Child fields of nested types (list, struct, map, union). */
  children: Field[];
}
/** The columns of a stream, with its custom metadata. */
export interface Schema {
  fields: Field[];
  metadata: Record<string, string>;
}
"#;

fn field_js(field: &Field) -> JsValue {
    use DataType::*;
    // No catch-all arm: a nested type arrow-rs adds is a compile error, not a field
    // without children.
    let children: Array = match field.data_type() {
        List(f)
        | LargeList(f)
        | ListView(f)
        | LargeListView(f)
        | FixedSizeList(f, _)
        | Map(f, _) => std::iter::once(field_js(f)).collect(),
        Struct(fields) => fields.iter().map(|f| field_js(f)).collect(),
        Union(fields, _) => fields.iter().map(|(_, f)| field_js(f)).collect(),
        RunEndEncoded(ends, values) => [field_js(ends), field_js(values)].into_iter().collect(),
        Null | Boolean | Int8 | Int16 | Int32 | Int64 | UInt8 | UInt16 | UInt32 | UInt64
        | Float16 | Float32 | Float64 | Timestamp(..) | Date32 | Date64 | Time32(_) | Time64(_)
        | Duration(_) | Interval(_) | Binary | FixedSizeBinary(_) | LargeBinary | BinaryView
        | Utf8 | LargeUtf8 | Utf8View | Dictionary(..) | Decimal32(..) | Decimal64(..)
        | Decimal128(..) | Decimal256(..) => Array::new(),
    };
    object(&[
        ("name", field.name().into()),
        ("type", field.data_type().to_string().into()),
        ("nullable", field.is_nullable().into()),
        ("metadata", metadata_js(field.metadata())),
        ("children", children.into()),
    ])
}

/// Metadata as a plain object, its keys in sorted order: `Metadata` is a `BTreeMap`, whose
/// order this is (sorting again into a map of its own linked a sort, docs/size.md).
fn metadata_js(metadata: &Metadata) -> JsValue {
    strings(metadata.iter().map(|(k, v)| (k.as_str(), v.as_str())))
}

/// The schema as a fresh JS object (a copy: changing it changes nothing in wasm).
pub(crate) fn schema_to_js(schema: &Schema) -> JsValue {
    let fields: Array = schema.fields().iter().map(|f| field_js(f)).collect();
    object(&[
        ("fields", fields.into()),
        ("metadata", metadata_js(schema.metadata())),
    ])
}

/// A record batch message's custom metadata as a fresh plain object.
pub(crate) fn batch_metadata_to_js(metadata: &BatchMetadata) -> JsValue {
    strings(metadata.iter().map(|(k, v)| (k.as_str(), v.as_str())))
}

/// Custom metadata from a plain object of string values.
pub(crate) fn batch_metadata_from_js(value: JsValue) -> WasmResult<BatchMetadata> {
    let refuse = |found: String| {
        usage(format!(
            "batch metadata must be an object of string keys and string values, found {found}"
        ))
    };
    if !value.is_object() {
        return Err(refuse(shown(&value)));
    }
    Object::entries(value.unchecked_ref())
        .iter()
        .map(|entry| {
            let (key, value) = (Reflect::get_u32(&entry, 0), Reflect::get_u32(&entry, 1));
            let key = key.ok().and_then(|k| k.as_string()).unwrap_or_default();
            match value.ok().and_then(|v| v.as_string()) {
                Some(value) => Ok((key, value)),
                None => Err(refuse(format!("a value that is not a string at {key:?}"))),
            }
        })
        .collect()
}
