//! `FileWriter`: batches in wasm memory out as an IPC file, each message in chunks of its
//! exact size, then the footer (see `crate::ipc::writer::FileEncoder`).

use arrow_schema::SchemaRef;
use wasm_bindgen::prelude::*;

use super::batch::{RecordBatch, Table};
use super::chunks::Chunks;
use super::error::WasmResult;
use super::writer_options::{write_options, WriterOptionsJs};
use crate::ipc::writer::FileEncoder;

/// Encodes record batches as an Arrow IPC file, one `Chunks` per call; `finish` writes
/// the footer. In order, the chunks are the file, for a `Blob` or a `WritableStream`.
/// `toArray()` views stay valid until the `Chunks` are freed, and in browsers they are
/// views of resizable wasm memory, which `Blob` refuses: copy them with `slice()`.
///
/// A batch whose dictionary replaces, rather than extends, one written before is refused:
/// the file format has one dictionary per column, which only deltas extend. A dictionary
/// that grew is written as a delta, whatever `dictionaryDeltas` says. A failed `write`
/// writes nothing, and the writer stays usable.
///
/// ```js
/// using writer = FileWriter.forTable(table, { compression: 'lz4' });
/// const parts = [];
/// for (const batch of table.batches) {
///   using chunks = writer.write(batch);
///   parts.push(...chunks.toArray().map((c) => c.slice()));
/// }
/// using end = writer.finish();
/// parts.push(...end.toArray().map((c) => c.slice()));
/// const file = new Blob(parts);
/// ```
#[wasm_bindgen]
pub struct FileWriter {
    encoder: FileEncoder,
}

impl FileWriter {
    fn with_schema(schema: SchemaRef, options: Option<WriterOptionsJs>) -> WasmResult<Self> {
        Ok(FileWriter {
            encoder: FileEncoder::try_new(schema, write_options(options)?)?,
        })
    }
}

#[wasm_bindgen]
impl FileWriter {
    /// A writer for batches with the schema of `batch` (which is not written).
    #[wasm_bindgen(js_name = forBatch)]
    pub fn for_batch(
        batch: &RecordBatch,
        options: Option<WriterOptionsJs>,
    ) -> WasmResult<FileWriter> {
        Self::with_schema(batch.as_arrow().schema(), options)
    }

    /// A writer for batches with the schema of `table` (which is not written).
    #[wasm_bindgen(js_name = forTable)]
    pub fn for_table(table: &Table, options: Option<WriterOptionsJs>) -> WasmResult<FileWriter> {
        Self::with_schema(table.schema_ref().clone(), options)
    }

    /// Encodes `batch`: the magic and the schema first on the first write, then the
    /// dictionary messages the batch needs, then the batch. The batch stays the caller's.
    pub fn write(&mut self, batch: &RecordBatch) -> WasmResult<Chunks> {
        let chunks = self
            .encoder
            .write_with_metadata(batch.as_arrow(), batch.metadata_ref())?;
        Ok(Chunks::new(chunks))
    }

    /// Ends the file: the end-of-stream marker and the footer (after the magic and the
    /// schema, if nothing was written). Later calls to `write` or `finish` throw.
    pub fn finish(&mut self) -> WasmResult<Chunks> {
        Ok(Chunks::new(self.encoder.finish()?))
    }

    /// Counters of messages, batches and bytes, magic and footer included (a new object
    /// each time).
    #[wasm_bindgen(getter, unchecked_return_type = "WriterStats")]
    pub fn stats(&self) -> JsValue {
        super::writer::stats_to_js(self.encoder.stats())
    }
}
