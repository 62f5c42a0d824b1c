//! Schemas as plain JS objects: `{ fields: [{ name, type, nullable, metadata, children }],
//! metadata }`, with `type` written as arrow-rs displays it (`Int64`, `Utf8`, ...); and a
//! record batch message's custom metadata, to and from a plain object of strings.

use std::collections::BTreeMap;

use arrow_schema::{DataType, Field, Metadata, Schema};
use js_sys::{Object, Reflect};
use serde::Serialize;
use wasm_bindgen::prelude::*;

use super::error::{usage, WasmResult};
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

#[derive(Serialize)]
struct FieldJs<'a> {
    name: &'a str,
    #[serde(rename = "type")]
    data_type: String,
    nullable: bool,
    metadata: BTreeMap<&'a str, &'a str>,
    children: Vec<FieldJs<'a>>,
}

#[derive(Serialize)]
struct SchemaJs<'a> {
    fields: Vec<FieldJs<'a>>,
    metadata: BTreeMap<&'a str, &'a str>,
}

fn field_js(field: &Field) -> FieldJs<'_> {
    let children = match field.data_type() {
        DataType::List(f)
        | DataType::LargeList(f)
        | DataType::ListView(f)
        | DataType::LargeListView(f)
        | DataType::FixedSizeList(f, _)
        | DataType::Map(f, _) => vec![field_js(f)],
        DataType::Struct(fields) => fields.iter().map(|f| field_js(f)).collect(),
        DataType::Union(fields, _) => fields.iter().map(|(_, f)| field_js(f)).collect(),
        DataType::RunEndEncoded(ends, values) => vec![field_js(ends), field_js(values)],
        _ => Vec::new(),
    };
    FieldJs {
        name: field.name(),
        data_type: field.data_type().to_string(),
        nullable: field.is_nullable(),
        metadata: metadata_js(field.metadata()),
        children,
    }
}

fn metadata_js(metadata: &Metadata) -> BTreeMap<&str, &str> {
    metadata
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect()
}

/// The schema as a fresh JS object (a copy: changing it changes nothing in wasm).
pub(crate) fn schema_to_js(schema: &Schema) -> JsValue {
    let value = SchemaJs {
        fields: schema.fields().iter().map(|f| field_js(f)).collect(),
        metadata: metadata_js(schema.metadata()),
    };
    let serializer = serde_wasm_bindgen::Serializer::new().serialize_maps_as_objects(true);
    value.serialize(&serializer).unwrap_or(JsValue::UNDEFINED)
}

/// A record batch message's custom metadata as a fresh plain object.
pub(crate) fn batch_metadata_to_js(metadata: &BatchMetadata) -> JsValue {
    let object = Object::new();
    for (key, value) in metadata {
        // Setting a string key on a fresh plain object cannot fail.
        let _ = Reflect::set(&object, &key.into(), &value.into());
    }
    object.into()
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
