//! `RecordBatch` and `Table`, the decoded data as JavaScript holds it.
//!
//! Both own their Arrow buffers in wasm memory. `free()` (or `using`) releases them at
//! once; otherwise a FinalizationRegistry releases them after garbage collection.

use std::sync::Arc;

use arrow_schema::SchemaRef;
use wasm_bindgen::prelude::*;

use super::schema::schema_to_js;

/// One decoded record batch. Its column buffers live in wasm memory until `free()`.
#[wasm_bindgen]
#[derive(Debug)]
pub struct RecordBatch {
    inner: arrow_array::RecordBatch,
}

impl RecordBatch {
    pub fn new(inner: arrow_array::RecordBatch) -> Self {
        RecordBatch { inner }
    }

    pub fn as_arrow(&self) -> &arrow_array::RecordBatch {
        &self.inner
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
}

impl Table {
    pub fn new(schema: SchemaRef, batches: Vec<arrow_array::RecordBatch>) -> Self {
        Table { schema, batches }
    }

    pub fn schema_ref(&self) -> &SchemaRef {
        &self.schema
    }

    pub fn arrow_batches(&self) -> &[arrow_array::RecordBatch] {
        &self.batches
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
    /// of the data). Each handle keeps the buffers alive until it is freed too.
    #[wasm_bindgen(getter)]
    pub fn batches(&self) -> Vec<RecordBatch> {
        self.batches.iter().cloned().map(RecordBatch::new).collect()
    }
}

/// A table over the given schema (used by readers, which know it before any batch).
pub(crate) fn table(schema: &SchemaRef, batches: Vec<arrow_array::RecordBatch>) -> Table {
    Table::new(Arc::clone(schema), batches)
}
