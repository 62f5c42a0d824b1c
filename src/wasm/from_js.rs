//! `fromArrowJS` and `batchFromColumns`: data built in JavaScript, copied once into
//! exactly-sized arrow-rs buffers that the writer can write.
//!
//! Per batch: `src/js/fromjs.js` describes the batch (one Uint32Array header), Rust
//! allocates every destination and hands back all addresses in one Uint32Array, JS copies
//! each buffer once (`Uint8Array.set`, or `encodeInto` for the builder's strings) onto a
//! view of wasm memory, and `crate::import` builds and validates the arrays. Nothing goes
//! through wasm-bindgen's `&[u8]` conversion, which would copy each buffer a second time.

use std::cell::Cell;
use std::collections::HashMap;

use arrow_schema::SchemaRef;
use js_sys::{Array, Reflect, Uint32Array};
use wasm_bindgen::prelude::*;

use super::batch::{RecordBatch, Table};
use super::error::{usage, WasmResult};
use super::object::object;
use crate::fields::Fields;
use crate::import::{allocate, assemble, schema_from_specs, FieldSpec, Node};

#[wasm_bindgen(module = "/src/js/fromjs.js")]
extern "C" {
    #[wasm_bindgen(js_name = describeArrowJS, catch)]
    fn describe_arrow_js(value: &JsValue, memory: &JsValue) -> Result<JsValue, JsValue>;

    #[wasm_bindgen(js_name = describeColumns, catch)]
    fn describe_columns(columns: &JsValue, memory: &JsValue) -> Result<JsValue, JsValue>;

    #[wasm_bindgen(js_name = fillBuffers, catch)]
    fn fill_buffers(
        batch: &JsValue,
        addresses: &Uint32Array,
        memory: &JsValue,
    ) -> Result<(), JsValue>;
}

thread_local! {
    /// Bytes copied into wasm memory by `fromArrowJS` and `batchFromColumns`, and batches.
    static COPIED: Cell<(u64, u64)> = const { Cell::new((0, 0)) };
}

/// The fields and metadata of the schema as `src/js/fromjs.js` describes it, in JSON.
fn read_schema(json: &str) -> Result<(Vec<FieldSpec>, HashMap<String, String>), serde_json::Error> {
    let mut schema = Fields::parse(json)?;
    let fields = schema.take("fields")?;
    let metadata = schema.take("metadata")?;
    schema.finish("the schema description")?;
    Ok((fields, metadata))
}

#[wasm_bindgen(typescript_custom_section)]
const IMPORT_STATS_TS: &str = r#"
/** What `fromArrowJS` and `batchFromColumns` copied (see `importStats()`). */
export interface ImportStats {
  /** Bytes written into wasm memory since start (cumulative): each source byte once. */
  bytesCopied: number;
  /** Batches built since start (cumulative). */
  batches: number;
}
"#;

/// Bytes that `fromArrowJS` and `batchFromColumns` copied into wasm memory, cumulative
/// since start: the difference across a call is what that call copied (each Arrow JS
/// buffer byte once, exactly the payload).
///
/// ```js
/// const before = importStats().bytesCopied;
/// using batch = fromArrowJS(arrowBatch);
/// console.log(importStats().bytesCopied - before);
/// ```
#[wasm_bindgen(js_name = importStats, unchecked_return_type = "ImportStats")]
pub fn import_stats() -> JsValue {
    let (bytes, batches) = COPIED.with(Cell::get);
    object(&[
        ("bytesCopied", (bytes as f64).into()),
        ("batches", (batches as f64).into()),
    ])
}

#[wasm_bindgen(typescript_custom_section)]
const COLUMN_INPUT_TS: &str = r#"
/**
 * A column for `batchFromColumns`: a typed array (no nulls), or an array of strings,
 * numbers, bigints or booleans, one kind per column, where `null` and `undefined` are nulls.
 */
export type ColumnInput =
  | Int8Array | Uint8Array | Int16Array | Uint16Array | Int32Array | Uint32Array
  | BigInt64Array | BigUint64Array | Float32Array | Float64Array
  | readonly (string | null | undefined)[]
  | readonly (number | null | undefined)[]
  | readonly (bigint | null | undefined)[]
  | readonly (boolean | null | undefined)[];
"#;

#[wasm_bindgen(typescript_custom_section)]
const FROM_ARROW_JS_TS: &str = r#"
/** An apache-arrow JS `Table` as a Quiver `Table` (see the declaration for either below). */
export function fromArrowJS(value: import('apache-arrow').Table): Table;
/** An apache-arrow JS `RecordBatch` as a Quiver `RecordBatch` (see the declaration for either below). */
export function fromArrowJS(value: import('apache-arrow').RecordBatch): RecordBatch;
"#;

/// An apache-arrow JS `RecordBatch` or `Table` as a Quiver `RecordBatch` or `Table`, which
/// `StreamWriter` and `tableToIPC` can write. Each Arrow JS buffer is copied once, straight
/// into its own exactly-sized buffer in wasm memory (counted by `importStats()`), and
/// every array is validated. The result owns that memory until `free()`; the Arrow JS
/// input is not kept. Throws for a type Quiver cannot take (unions, views, a dictionary in
/// several chunks), naming the field and the type.
///
/// ```js
/// import { tableFromArrays } from "apache-arrow";
/// using table = fromArrowJS(tableFromArrays({ id: Int32Array.from([1, 2]), name: ["a", "b"] }));
/// const bytes = tableToIPC(table);
/// ```
#[wasm_bindgen(
    js_name = fromArrowJS,
    unchecked_return_type = "RecordBatch | Table"
)]
pub fn from_arrow_js(
    #[wasm_bindgen(
        unchecked_param_type = "import('apache-arrow').RecordBatch | import('apache-arrow').Table"
    )]
    value: JsValue,
) -> WasmResult<JsValue> {
    let (is_table, schema, mut batches) =
        import(describe_arrow_js(&value, &wasm_bindgen::memory()).map_err(rethrow)?)?;
    match batches.pop() {
        Some(batch) if !is_table => Ok(RecordBatch::new(batch).into()),
        batch => {
            batches.extend(batch);
            Ok(Table::new(schema, batches).into())
        }
    }
}

/// A Quiver `RecordBatch` from plain JS columns, by name: a typed array (Int8 to Int64,
/// Uint8 to Uint64, Float32, Float64; no nulls), or an array of strings (Utf8), booleans,
/// numbers (Float64) or bigints (Int64), where `null`/`undefined` entries are nulls (an
/// all-null array is a Null column). Each column is copied once into wasm memory: strings
/// are encoded straight there (`encodeInto`, or by hand on a resizable memory, which
/// `encodeInto` refuses in Chromium). The result owns that memory until `free()`.
/// Throws for columns of different lengths or unsupported entries, naming the column.
///
/// ```js
/// using batch = batchFromColumns({
///   id: BigInt64Array.from([1n, 2n, 3n]),
///   name: ["a", null, "c"],
///   flag: [true, false, null],
/// });
/// const bytes = tableToIPC(batch);
/// ```
#[wasm_bindgen(js_name = batchFromColumns)]
pub fn batch_from_columns(
    #[wasm_bindgen(unchecked_param_type = "Record<string, ColumnInput>")] columns: JsValue,
) -> WasmResult<RecordBatch> {
    let (_, _, mut batches) =
        import(describe_columns(&columns, &wasm_bindgen::memory()).map_err(rethrow)?)?;
    batches
        .pop()
        .map(RecordBatch::new)
        .ok_or_else(|| usage("batchFromColumns: internal error (please report): no batch"))
}

/// A JS exception from the snippet, as the `Error` it is.
fn rethrow(error: JsValue) -> JsError {
    let message = js_sys::Error::from(error).message();
    JsError::new(&String::from(message))
}

fn get(object: &JsValue, key: &str) -> WasmResult<JsValue> {
    Reflect::get(object, &key.into()).map_err(rethrow)
}

/// Builds every described batch: one `fillBuffers` crossing per batch. Returns whether
/// the source was a table, the schema and the batches.
fn import(description: JsValue) -> WasmResult<(bool, SchemaRef, Vec<arrow_array::RecordBatch>)> {
    let json = get(&description, "schema")?.as_string().unwrap_or_default();
    let (fields, metadata) = read_schema(&json).map_err(|e| {
        usage(format!(
            "internal error (please report): schema description: {e}"
        ))
    })?;
    let schema = schema_from_specs(&fields, metadata)?;
    let memory = wasm_bindgen::memory();
    let described: Array = get(&description, "batches")?.unchecked_into();
    let mut batches = Vec::with_capacity(described.length() as usize);
    for batch in described.iter() {
        let header: Uint32Array = get(&batch, "header")?.unchecked_into();
        let header = header.to_vec();
        let (num_rows, nodes, sizes) = split_header(&header)?;
        let mut filled = allocate(sizes)?;
        let addresses: Vec<u32> = filled.addresses().into_iter().map(|a| a as u32).collect();
        fill_buffers(&batch, &Uint32Array::from(addresses.as_slice()), &memory).map_err(rethrow)?;
        let copied = filled.total_bytes() as u64;
        // SAFETY: fillBuffers wrote each source (of the size in the header) in full.
        let buffers = unsafe { filled.finish() };
        batches.push(assemble(&schema, num_rows, &nodes, buffers)?);
        COPIED.with(|c| {
            let (bytes, count) = c.get();
            c.set((bytes + copied, count + 1));
        });
    }
    Ok((get(&description, "table")?.is_truthy(), schema, batches))
}

/// `[numRows, nodeCount, (length, bitOffset) per node, size per buffer]`.
fn split_header(header: &[u32]) -> WasmResult<(usize, Vec<Node>, Vec<usize>)> {
    let bad = || usage("internal error (please report): malformed batch header");
    let (&num_rows, rest) = header.split_first().ok_or_else(bad)?;
    let (&node_count, rest) = rest.split_first().ok_or_else(bad)?;
    let (nodes, sizes) = rest
        .split_at_checked(node_count as usize * 2)
        .ok_or_else(bad)?;
    let nodes = nodes
        .chunks_exact(2)
        .map(|n| Node {
            length: n[0] as usize,
            bit_offset: n[1] as usize,
        })
        .collect();
    let sizes = sizes.iter().map(|&s| s as usize).collect();
    Ok((num_rows as usize, nodes, sizes))
}
