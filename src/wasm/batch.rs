//! `RecordBatch` and `Table`, the decoded data as JavaScript holds it.
//!
//! Both own their Arrow buffers in wasm memory. `free()` (or `using`) releases them at
//! once; otherwise a FinalizationRegistry releases them after garbage collection.

use std::sync::Arc;

use arrow_schema::{Schema, SchemaRef};
use js_sys::{Array, Object};
use wasm_bindgen::prelude::*;

use super::error::{usage, WasmResult};
use super::layout::{batch_layout, column_nodes, types_of};
use super::schema::{batch_metadata_from_js, batch_metadata_to_js, schema_to_js};
use crate::ipc::BatchMetadata;

#[wasm_bindgen(module = "/src/js/column.js")]
extern "C" {
    /// Builds the JS column object for column `index` of a batch of schema `types` from
    /// `nodes`, that column's nodes (see `column_nodes`).
    #[wasm_bindgen(js_name = makeColumn)]
    fn make_column(
        nodes: &[u32],
        types: &JsValue,
        index: usize,
        token: &Object,
        memory: &JsValue,
    ) -> JsValue;

    /// Builds every column of a batch layout.
    #[wasm_bindgen(js_name = makeColumns)]
    fn make_columns(layout: &JsValue, token: &Object, memory: &JsValue) -> Array;

    /// Every row of the batch layouts, as plain objects, converted as value `options` say.
    #[wasm_bindgen(js_name = makeRows, catch)]
    fn make_rows(
        layouts: &Array,
        token: &Object,
        memory: &JsValue,
        options: &JsValue,
    ) -> Result<Array, JsValue>;
}

#[wasm_bindgen(module = "/src/js/chunked.js")]
extern "C" {
    /// Builds the column `index` spanning every batch of a table from `nodes`, that
    /// column's nodes in each batch (see `column_nodes`).
    #[wasm_bindgen(js_name = makeChunkedColumn)]
    fn make_chunked_column(
        nodes: &[u32],
        types: &JsValue,
        index: usize,
        token: &Object,
        memory: &JsValue,
    ) -> JsValue;
}

#[wasm_bindgen(module = "/src/js/owner.js")]
extern "C" {
    /// Sets `token.freed`, which every column getter checks. A JS function, not
    /// `Reflect::set`, which would make the key's JS string from UTF-8 on every drop.
    #[wasm_bindgen(js_name = markFreed)]
    fn mark_token_freed(token: &Object);

    /// A token whose `freed` is false: one shape before and after it is marked.
    #[wasm_bindgen(js_name = newToken)]
    fn new_token() -> Object;
}

#[wasm_bindgen(module = "/src/js/dispatch.js")]
extern "C" {
    /// `source[method](first, second)` for a Quiver batch or table, or an error naming
    /// `function` (wasm-bindgen cannot borrow either class from a `JsValue`).
    #[wasm_bindgen(js_name = callOnBatchOrTable, catch)]
    pub(crate) fn call_on_batch_or_table(
        function: &str,
        method: &str,
        source: &JsValue,
        first: &JsValue,
        second: &JsValue,
    ) -> Result<JsValue, JsValue>;
}

#[wasm_bindgen(module = "/src/js/arrowjs.js")]
extern "C" {
    /// An apache-arrow JS RecordBatch over a batch layout, with the metadata of `schema`
    /// (a `Schema` object); `keeper` shares the batch's buffers.
    #[wasm_bindgen(js_name = arrowRecordBatch, catch)]
    fn arrow_record_batch(
        layout: &JsValue,
        schema: &JsValue,
        arrow: &JsValue,
        options: &JsValue,
        memory: &JsValue,
        keeper: JsValue,
    ) -> Result<JsValue, JsValue>;

    /// An apache-arrow JS Table over batch layouts (see `arrow_record_batch`).
    #[wasm_bindgen(js_name = arrowTable, catch)]
    fn arrow_table(
        types: &JsValue,
        layouts: &Array,
        schema: &JsValue,
        arrow: &JsValue,
        options: &JsValue,
        memory: &JsValue,
        keeper: JsValue,
    ) -> Result<JsValue, JsValue>;
}

#[wasm_bindgen(typescript_custom_section)]
const TO_ARROW_JS_TS: &str = r#"
/** Options of `toArrowJS`. */
export interface ToArrowJSOptions {
  /**
   * Hand out views of wasm memory instead of copies. Default: `true` where wasm memory is
   * a resizable buffer (views survive growth), `false` elsewhere (e.g. Node 20). `true`
   * on a non-resizable memory gives views that DETACH, and read as empty, once wasm
   * memory grows: use the result before the next decode.
   */
  zeroCopy?: boolean;
}
"#;

#[wasm_bindgen]
extern "C" {
    /// `ToArrowJSOptions` as JavaScript passes it (read by `src/js/arrowjs.js`).
    #[wasm_bindgen(typescript_type = "ToArrowJSOptions")]
    pub type ToArrowJSOptionsJs;
}

#[wasm_bindgen]
extern "C" {
    /// `ValueOptions` as JavaScript passes it (checked by `src/js/value_options.js`).
    #[wasm_bindgen(typescript_type = "ValueOptions")]
    pub type ValueOptionsJs;
}

/// The options as the JS snippet takes them: the object, or `undefined`.
pub(crate) fn options_value(options: Option<ToArrowJSOptionsJs>) -> JsValue {
    options.map_or(JsValue::UNDEFINED, Into::into)
}

/// "no column named "x" in this batch; the columns are: a, b".
fn missing_column(schema: &Schema, key: &JsValue, holder: &str) -> JsError {
    let names: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
    usage(format!(
        "no column {} in this {holder}; the columns are: {}",
        key.as_string()
            .map(|n| format!("named {n:?}"))
            .unwrap_or_else(|| format!("at index {}", key.as_f64().unwrap_or(f64::NAN))),
        names.join(", ")
    ))
}

/// The index of column `key` (a number or a name) in `schema`.
fn column_index(schema: &Schema, key: &JsValue, holder: &str) -> WasmResult<usize> {
    let found = match key.as_f64() {
        Some(i) if i >= 0.0 && i.fract() == 0.0 && (i as usize) < schema.fields().len() => {
            Some(i as usize)
        }
        Some(_) => None,
        None => key.as_string().and_then(|name| schema.index_of(&name).ok()),
    };
    found.ok_or_else(|| missing_column(schema, key, holder))
}

/// Sets `token.freed`, so that JS columns of dropped buffers throw instead of reading.
fn mark_freed(token: &Option<Object>) {
    if let Some(token) = token {
        mark_token_freed(token);
    }
}

/// One decoded record batch. Its column buffers live in wasm memory until `free()`.
#[wasm_bindgen]
#[derive(Debug)]
pub struct RecordBatch {
    inner: arrow_array::RecordBatch,
    /// Its message's custom metadata, read with it and written with it.
    metadata: BatchMetadata,
    /// Shared with every column handed out, and marked `freed` when this batch is
    /// dropped, so that a column of a freed batch throws instead of reading freed memory.
    token: Option<Object>,
    layout: Option<JsValue>,
}

impl RecordBatch {
    pub fn new(inner: arrow_array::RecordBatch) -> Self {
        RecordBatch::with_metadata(inner, BatchMetadata::new())
    }

    pub fn with_metadata(inner: arrow_array::RecordBatch, metadata: BatchMetadata) -> Self {
        RecordBatch {
            inner,
            metadata,
            token: None,
            layout: None,
        }
    }

    fn token(&mut self) -> Object {
        self.token.get_or_insert_with(new_token).clone()
    }

    pub fn as_arrow(&self) -> &arrow_array::RecordBatch {
        &self.inner
    }

    pub fn metadata_ref(&self) -> &BatchMetadata {
        &self.metadata
    }
}

#[wasm_bindgen]
impl RecordBatch {
    /// Number of rows.
    #[wasm_bindgen(getter, js_name = numRows)]
    pub fn num_rows(&self) -> usize {
        self.inner.num_rows()
    }

    /// Number of columns.
    #[wasm_bindgen(getter, js_name = numColumns)]
    pub fn num_columns(&self) -> usize {
        self.inner.num_columns()
    }

    /// The batch's schema, as a new plain object.
    #[wasm_bindgen(getter, unchecked_return_type = "Schema")]
    pub fn schema(&self) -> JsValue {
        schema_to_js(self.inner.schema_ref())
    }

    /// The custom metadata of the batch's message, as a new plain object: what pyarrow
    /// writes with `write_batch(batch, custom_metadata=...)`, `{}` if there was none.
    /// Writers write it with the batch; set it to change what they write.
    ///
    /// ```js
    /// batch.metadata = { page: '3' };
    /// writer.write(batch);
    /// ```
    #[wasm_bindgen(getter, unchecked_return_type = "Record<string, string>")]
    pub fn metadata(&self) -> JsValue {
        batch_metadata_to_js(&self.metadata)
    }

    #[wasm_bindgen(setter)]
    pub fn set_metadata(
        &mut self,
        #[wasm_bindgen(unchecked_param_type = "Record<string, string>")] metadata: JsValue,
    ) -> WasmResult<()> {
        self.metadata = batch_metadata_from_js(metadata)?;
        Ok(())
    }

    /// Every buffer address and length of the batch, in one call (see `BatchLayout`).
    /// The addresses stay valid until this batch is freed.
    #[wasm_bindgen(unchecked_return_type = "BatchLayout")]
    pub fn layout(&mut self) -> JsValue {
        self.layout
            .get_or_insert_with(|| batch_layout(&self.inner))
            .clone()
    }

    /// One column, by index or name: `{ type, length, nullCount, values, validity,
    /// offsets, children, get(i), toArray() }`. Its views point into this batch's memory
    /// (no copy) and stay readable until the batch is freed; after that, reading them
    /// throws. Keep the batch alive while you use its columns.
    ///
    /// ```js
    /// const prices = batch.column("price");
    /// let sum = 0;
    /// for (let i = 0; i < prices.length; i++) sum += prices.values[i];
    /// ```
    #[wasm_bindgen(unchecked_return_type = "Column")]
    pub fn column(
        &mut self,
        #[wasm_bindgen(unchecked_param_type = "number | string")] key: JsValue,
    ) -> WasmResult<JsValue> {
        let index = column_index(self.inner.schema_ref(), &key, "batch")?;
        Ok(make_column(
            &column_nodes(std::slice::from_ref(&self.inner), index),
            &types_of(self.inner.schema_ref()),
            index,
            &self.token(),
            &wasm_bindgen::memory(),
        ))
    }

    /// All columns, in schema order (see `column`).
    #[wasm_bindgen(unchecked_return_type = "Column[]")]
    pub fn columns(&mut self) -> Array {
        let layout = self.layout();
        make_columns(&layout, &self.token(), &wasm_bindgen::memory())
    }

    /// Every row as a plain object `{ [column]: value }`, copied out of wasm memory (see
    /// `Column.toArray` for how each type is represented). The batch keeps its buffers.
    ///
    /// ```js
    /// for (const { id, name } of batch.toArray()) console.log(id, name);
    /// const rows = batch.toArray({ useDate: true }); // timestamps as Date
    /// ```
    ///
    /// `options` convert values as in `Column.get` (see `ValueOptions`).
    #[wasm_bindgen(js_name = toArray, unchecked_return_type = "Record<string, unknown>[]")]
    pub fn to_array(&mut self, options: Option<ValueOptionsJs>) -> Result<Array, JsValue> {
        let layouts = Array::of1(&self.layout());
        let options = options.map_or(JsValue::UNDEFINED, Into::into);
        make_rows(&layouts, &self.token(), &wasm_bindgen::memory(), &options)
    }

    /// This batch as an apache-arrow JS `RecordBatch`, built with your own `arrow` module
    /// (Quiver bundles none). Where wasm memory is resizable its `Data` buffers are views
    /// of this batch's memory (no copy), which the result keeps alive by holding a clone
    /// of this batch: freeing this batch does not invalidate it. Elsewhere the buffers are
    /// copied unless `{ zeroCopy: true }` (see `ToArrowJSOptions` for the risk). Throws
    /// for a type Arrow JS cannot represent (run-end encoded), naming the field.
    ///
    /// ```js
    /// import * as arrow from "apache-arrow";
    /// const arrowBatch = batch.toArrowJS(arrow);
    /// console.log(arrowBatch.getChild("price").get(0));
    /// ```
    #[wasm_bindgen(js_name = toArrowJS, unchecked_return_type = "import('apache-arrow').RecordBatch")]
    pub fn to_arrow_js(
        &mut self,
        #[wasm_bindgen(unchecked_param_type = "typeof import('apache-arrow')")] arrow: JsValue,
        options: Option<ToArrowJSOptionsJs>,
    ) -> Result<JsValue, JsValue> {
        let keeper = RecordBatch::with_metadata(self.inner.clone(), self.metadata.clone());
        let memory = wasm_bindgen::memory();
        let schema = schema_to_js(self.inner.schema_ref());
        let layout = self.layout();
        let options = options_value(options);
        arrow_record_batch(&layout, &schema, &arrow, &options, &memory, keeper.into())
    }
}

impl Drop for RecordBatch {
    fn drop(&mut self) {
        mark_freed(&self.token);
    }
}

/// Decoded batches that share one schema.
///
/// ```js
/// using table = tableFromIPC(bytes);
/// console.log(table.numRows, table.schema.fields.map((f) => f.name));
/// ```
#[wasm_bindgen]
#[derive(Debug)]
pub struct Table {
    schema: SchemaRef,
    batches: Vec<arrow_array::RecordBatch>,
    /// Each batch's message metadata, in the order of `batches`.
    metadata: Vec<BatchMetadata>,
    /// As in `RecordBatch`: marked `freed` on drop, shared by the columns handed out.
    token: Option<Object>,
    /// Every batch's layout, built on first use.
    layouts: Option<Array>,
}

impl Table {
    pub fn new(schema: SchemaRef, batches: Vec<arrow_array::RecordBatch>) -> Self {
        let metadata = vec![BatchMetadata::new(); batches.len()];
        Table::with_metadata(schema, batches, metadata)
    }

    /// `metadata` holds one entry per batch.
    pub fn with_metadata(
        schema: SchemaRef,
        batches: Vec<arrow_array::RecordBatch>,
        metadata: Vec<BatchMetadata>,
    ) -> Self {
        debug_assert_eq!(batches.len(), metadata.len());
        Table {
            schema,
            batches,
            metadata,
            token: None,
            layouts: None,
        }
    }

    /// One layout per batch, one call each (never one per column or buffer).
    fn layouts(&mut self) -> Array {
        let batches = &self.batches;
        self.layouts
            .get_or_insert_with(|| batches.iter().map(batch_layout).collect())
            .clone()
    }

    fn token(&mut self) -> Object {
        self.token.get_or_insert_with(new_token).clone()
    }

    pub fn schema_ref(&self) -> &SchemaRef {
        &self.schema
    }

    pub fn arrow_batches(&self) -> &[arrow_array::RecordBatch] {
        &self.batches
    }

    /// Each batch's message metadata, in the order of `arrow_batches`.
    pub fn batch_metadata(&self) -> &[BatchMetadata] {
        &self.metadata
    }
}

#[wasm_bindgen]
impl Table {
    /// Total rows over all batches.
    #[wasm_bindgen(getter, js_name = numRows)]
    pub fn num_rows(&self) -> usize {
        self.batches.iter().map(|b| b.num_rows()).sum()
    }

    /// Number of columns.
    #[wasm_bindgen(getter, js_name = numColumns)]
    pub fn num_columns(&self) -> usize {
        self.schema.fields().len()
    }

    /// The table's schema, as a new plain object.
    #[wasm_bindgen(getter, unchecked_return_type = "Schema")]
    pub fn schema(&self) -> JsValue {
        schema_to_js(&self.schema)
    }

    /// The batches, as new `RecordBatch` handles that share this table's buffers (no copy
    /// of the data), each with its message metadata. Each handle keeps the buffers alive
    /// until it is freed too.
    #[wasm_bindgen(getter)]
    pub fn batches(&self) -> Vec<RecordBatch> {
        let metadata = self.metadata.iter().cloned();
        self.batches
            .iter()
            .cloned()
            .zip(metadata)
            .map(|(batch, metadata)| RecordBatch::with_metadata(batch, metadata))
            .collect()
    }

    /// One column over all batches, by index or name: `{ type, name, length, nullCount,
    /// chunks, get(i), isValid(i), toArray() }`, where `chunks` are the batches' columns
    /// (views, no copy, see `RecordBatch.column`). Reading it after the table is freed
    /// throws.
    ///
    /// ```js
    /// const names = table.getChild("name").toArray();
    /// ```
    #[wasm_bindgen(js_name = getChild, unchecked_return_type = "ChunkedColumn")]
    pub fn get_child(
        &mut self,
        #[wasm_bindgen(unchecked_param_type = "number | string")] key: JsValue,
    ) -> WasmResult<JsValue> {
        let index = column_index(&self.schema, &key, "table")?;
        let types = types_of(&self.schema);
        let token = self.token();
        Ok(make_chunked_column(
            &column_nodes(&self.batches, index),
            &types,
            index,
            &token,
            &wasm_bindgen::memory(),
        ))
    }

    /// Every row of every batch as a plain object `{ [column]: value }`, copied out of
    /// wasm memory (see `Column.toArray` for how each type is represented), converted as
    /// value `options` say (see `ValueOptions`).
    #[wasm_bindgen(js_name = toArray, unchecked_return_type = "Record<string, unknown>[]")]
    pub fn to_array(&mut self, options: Option<ValueOptionsJs>) -> Result<Array, JsValue> {
        let layouts = self.layouts();
        let options = options.map_or(JsValue::UNDEFINED, Into::into);
        make_rows(&layouts, &self.token(), &wasm_bindgen::memory(), &options)
    }

    /// This table as an apache-arrow JS `Table` (see `RecordBatch.toArrowJS`: views where
    /// memory is resizable, kept alive by a clone of this table that the result holds;
    /// copies elsewhere unless `{ zeroCopy: true }`).
    ///
    /// ```js
    /// import * as arrow from "apache-arrow";
    /// const arrowTable = table.toArrowJS(arrow);
    /// ```
    #[wasm_bindgen(js_name = toArrowJS, unchecked_return_type = "import('apache-arrow').Table")]
    pub fn to_arrow_js(
        &mut self,
        #[wasm_bindgen(unchecked_param_type = "typeof import('apache-arrow')")] arrow: JsValue,
        options: Option<ToArrowJSOptionsJs>,
    ) -> Result<JsValue, JsValue> {
        let keeper = Table::with_metadata(
            Arc::clone(&self.schema),
            self.batches.clone(),
            self.metadata.clone(),
        );
        let types = types_of(&self.schema);
        let layouts = self.layouts();
        let memory = wasm_bindgen::memory();
        let schema = schema_to_js(&self.schema);
        let options = options_value(options);
        arrow_table(
            &types,
            &layouts,
            &schema,
            &arrow,
            &options,
            &memory,
            keeper.into(),
        )
    }
}

impl Drop for Table {
    fn drop(&mut self) {
        mark_freed(&self.token);
    }
}

/// A table of decoded batches, each with its message metadata, over the given schema
/// (used by readers, which know it before any batch).
pub(crate) fn table_with_metadata(
    schema: &SchemaRef,
    batches: Vec<(arrow_array::RecordBatch, BatchMetadata)>,
) -> Table {
    let (batches, metadata) = batches.into_iter().unzip();
    Table::with_metadata(Arc::clone(schema), batches, metadata)
}
