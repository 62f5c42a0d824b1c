//! `RecordBatch` and `Table`, the decoded data as JavaScript holds it.
//!
//! Both own their Arrow buffers in wasm memory. `free()` (or `using`) releases them at
//! once; otherwise a FinalizationRegistry releases them after garbage collection.

use std::sync::Arc;

use arrow_schema::SchemaRef;
use js_sys::{Array, Object, Reflect, Uint32Array};
use wasm_bindgen::prelude::*;

use super::error::{usage, WasmResult};
use super::layout::{encode_nodes, field_descriptor};
use super::schema::schema_to_js;

#[wasm_bindgen(module = "/src/js/views.js")]
extern "C" {
    /// Builds the JS column object for column `index` from a batch layout.
    #[wasm_bindgen(js_name = makeColumn)]
    fn make_column(layout: &JsValue, index: usize, token: &Object, memory: &JsValue) -> JsValue;
}

/// One decoded record batch. Its column buffers live in wasm memory until `free()`.
#[wasm_bindgen]
#[derive(Debug)]
pub struct RecordBatch {
    inner: arrow_array::RecordBatch,
    /// Shared with every column handed out, and marked `freed` when this batch is
    /// dropped, so that a column of a freed batch throws instead of reading freed memory.
    token: Option<Object>,
    layout: Option<JsValue>,
}

impl RecordBatch {
    pub fn new(inner: arrow_array::RecordBatch) -> Self {
        RecordBatch {
            inner,
            token: None,
            layout: None,
        }
    }

    fn column_index(&self, key: &JsValue) -> WasmResult<usize> {
        let schema = self.inner.schema_ref();
        let found = match key.as_f64() {
            Some(i) if i >= 0.0 && i.fract() == 0.0 && (i as usize) < schema.fields().len() => {
                Some(i as usize)
            }
            Some(_) => None,
            None => key.as_string().and_then(|name| schema.index_of(&name).ok()),
        };
        found.ok_or_else(|| {
            let names: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
            usage(format!(
                "no column {} in this batch; the columns are: {}",
                key.as_string()
                    .map(|n| format!("named {n:?}"))
                    .unwrap_or_else(|| format!("at index {}", key.as_f64().unwrap_or(f64::NAN))),
                names.join(", ")
            ))
        })
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

    /// Every buffer address and length of the batch, in one call (see `BatchLayout`).
    /// The addresses stay valid until this batch is freed.
    #[wasm_bindgen(unchecked_return_type = "BatchLayout")]
    pub fn layout(&mut self) -> JsValue {
        if let Some(layout) = &self.layout {
            return layout.clone();
        }
        let mut nodes = Vec::new();
        for column in self.inner.columns() {
            encode_nodes(&column.to_data(), &mut nodes);
        }
        let fields: Vec<_> = self
            .inner
            .schema_ref()
            .fields()
            .iter()
            .map(|f| field_descriptor(f))
            .collect();
        let layout = Object::new();
        let types = serde_json::to_string(&fields).unwrap_or_default();
        // Reflect::set on a fresh plain object cannot fail.
        let _ = Reflect::set(&layout, &"numRows".into(), &self.inner.num_rows().into());
        let _ = Reflect::set(&layout, &"types".into(), &types.into());
        let _ = Reflect::set(&layout, &"nodes".into(), &Uint32Array::from(&nodes[..]));
        self.layout = Some(layout.clone().into());
        layout.into()
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
        let index = self.column_index(&key)?;
        let layout = self.layout();
        let token = self.token.get_or_insert_with(Object::new).clone();
        Ok(make_column(&layout, index, &token, &wasm_bindgen::memory()))
    }

    /// All columns, in schema order (see `column`).
    #[wasm_bindgen(unchecked_return_type = "Column[]")]
    pub fn columns(&mut self) -> Array {
        let layout = self.layout();
        let token = self.token.get_or_insert_with(Object::new).clone();
        let memory = wasm_bindgen::memory();
        (0..self.inner.num_columns())
            .map(|i| make_column(&layout, i, &token, &memory))
            .collect()
    }
}

impl Drop for RecordBatch {
    fn drop(&mut self) {
        if let Some(token) = &self.token {
            let _ = Reflect::set(token, &"freed".into(), &JsValue::TRUE);
        }
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
