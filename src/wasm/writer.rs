//! `StreamWriter`, `messageSize` and `tableToIPC`: batches in wasm memory out as IPC
//! streams, each message in chunks of its exact size (see `crate::ipc::writer`).

use arrow_schema::SchemaRef;
use js_sys::{Array, Uint8Array};
use wasm_bindgen::prelude::*;

use super::batch::{call_on_batch_or_table, RecordBatch, Table};
use super::chunks::Chunks;
use super::error::WasmResult;
use super::object::object;
use super::writer_options::{write_options, write_options_and_format, Format, WriterOptionsJs};
use crate::ipc::writer::{self, StreamEncoder, WriteStats};
use crate::ipc::BatchMetadata;

/// Encodes record batches as an Arrow IPC stream, one `Chunks` per call.
///
/// The writer takes its schema from a batch or a table; every batch written must have
/// that schema. A dictionary that changed is sent again whole, unless `dictionaryDeltas`
/// asks for deltas. A failed `write` writes nothing, and the writer stays usable.
///
/// ```js
/// using writer = StreamWriter.forBatch(batches[0], { compression: 'zstd' });
/// for (const batch of batches) {
///   using chunks = writer.write(batch);
///   for (const bytes of chunks.toArray()) socket.send(bytes);
/// }
/// using end = writer.finish();
/// for (const bytes of end.toArray()) socket.send(bytes);
/// ```
#[wasm_bindgen]
pub struct StreamWriter {
    encoder: StreamEncoder,
}

#[wasm_bindgen(typescript_custom_section)]
const WRITER_TS: &str = r#"
/** The sizes in bytes of the messages that `write(batch)` would produce next. */
export interface MessageSizes {
  /** The schema message, on the stream's first write; otherwise null. */
  schema: number | null;
  /** Dictionary messages (new, delta or replacement), in stream order. */
  dictionaries: number[];
  recordBatch: number;
}
/** What a writer has done so far. */
export interface WriterStats {
  messages: number;
  batches: number;
  /** Bytes handed out in chunks. */
  bytesWritten: number;
  /**
   * Bytes copied beyond writing each output byte once: compressed buffers staged before
   * their chunk is sized, input the codec copies into its own buffer first (LZ4, and ZSTD
   * through ruzstd), and `chunkSizing: 'fixed'` copies. 0 when uncompressed and right-sized.
   */
  extraBytesCopied: number;
}
"#;

impl StreamWriter {
    fn with_schema(
        schema: arrow_schema::SchemaRef,
        options: Option<WriterOptionsJs>,
    ) -> WasmResult<Self> {
        Ok(StreamWriter {
            encoder: StreamEncoder::try_new(schema, write_options(options)?)?,
        })
    }
}

#[wasm_bindgen]
impl StreamWriter {
    /// A writer for batches with the schema of `batch` (which is not written).
    #[wasm_bindgen(js_name = forBatch)]
    pub fn for_batch(
        batch: &RecordBatch,
        options: Option<WriterOptionsJs>,
    ) -> WasmResult<StreamWriter> {
        Self::with_schema(batch.as_arrow().schema(), options)
    }

    /// A writer for batches with the schema of `table` (which is not written).
    #[wasm_bindgen(js_name = forTable)]
    pub fn for_table(table: &Table, options: Option<WriterOptionsJs>) -> WasmResult<StreamWriter> {
        Self::with_schema(table.schema_ref().clone(), options)
    }

    /// Encodes `batch`: the schema first on the first write, then the dictionary messages
    /// the batch needs, then the batch. The batch is only read; it stays the caller's.
    pub fn write(&mut self, batch: &RecordBatch) -> WasmResult<Chunks> {
        let chunks = self
            .encoder
            .write_with_metadata(batch.as_arrow(), batch.metadata_ref())?;
        Ok(Chunks::new(chunks))
    }

    /// Ends the stream with the end-of-stream marker (after the schema, if nothing was
    /// written). Later calls to `write` or `finish` throw.
    pub fn finish(&mut self) -> WasmResult<Chunks> {
        Ok(Chunks::new(self.encoder.finish()?))
    }

    /// The sizes of the messages `write(batch)` would produce now, without writing. With
    /// compression this compresses the batch, since that decides the sizes.
    #[wasm_bindgen(js_name = messageSizes, unchecked_return_type = "MessageSizes")]
    pub fn message_sizes(&mut self, batch: &RecordBatch) -> WasmResult<JsValue> {
        let sizes = self
            .encoder
            .message_sizes_with_metadata(batch.as_arrow(), batch.metadata_ref())?;
        let dictionaries: Array = sizes
            .dictionaries
            .iter()
            .map(|&s| JsValue::from(s as f64))
            .collect();
        Ok(object(&[
            // null after the first write, as MessageSizes declares.
            (
                "schema",
                sizes.schema.map_or(JsValue::NULL, |s| (s as f64).into()),
            ),
            ("dictionaries", dictionaries.into()),
            ("recordBatch", (sizes.record_batch as f64).into()),
        ]))
    }

    /// Counters of messages, batches and bytes (a new object each time).
    #[wasm_bindgen(getter, unchecked_return_type = "WriterStats")]
    pub fn stats(&self) -> JsValue {
        stats_to_js(self.encoder.stats())
    }
}

/// `WriterStats` for JavaScript.
pub(super) fn stats_to_js(stats: &WriteStats) -> JsValue {
    object(&[
        ("messages", (stats.messages as f64).into()),
        ("batches", (stats.batches as f64).into()),
        ("bytesWritten", (stats.bytes_written as f64).into()),
        ("extraBytesCopied", (stats.extra_bytes_copied as f64).into()),
    ])
}

/// The exact size in bytes of the record batch message that writing `batch` produces
/// (the schema and dictionary messages before it not included; see
/// `StreamWriter.messageSizes`). With compression this compresses the batch.
///
/// ```js
/// const bytes = messageSize(batch, { compression: 'lz4' });
/// ```
#[wasm_bindgen(js_name = messageSize)]
pub fn message_size(batch: &RecordBatch, options: Option<WriterOptionsJs>) -> WasmResult<usize> {
    Ok(writer::message_size(
        batch.as_arrow(),
        batch.metadata_ref(),
        &write_options(options)?,
    )?)
}

/// A whole table or batch as one IPC stream, in a new `Uint8Array` owned by JavaScript:
/// schema, dictionaries, batches and end-of-stream marker; or, with `format: 'file'`, as
/// an IPC file (the `.arrow` files pyarrow, pandas and polars read). The source is only
/// read.
///
/// ```js
/// const bytes = tableToIPC(table, { compression: 'zstd' });
/// const file = tableToIPC(table, { format: 'file' });
/// ```
#[wasm_bindgen(js_name = tableToIPC, unchecked_return_type = "Uint8Array<ArrayBuffer>")]
pub fn table_to_ipc(
    #[wasm_bindgen(unchecked_param_type = "RecordBatch | Table")] source: JsValue,
    options: Option<WriterOptionsJs>,
) -> Result<JsValue, JsValue> {
    let options = options.map_or(JsValue::UNDEFINED, Into::into);
    call_on_batch_or_table(
        "tableToIPC",
        "toIPC",
        &source,
        &options,
        &JsValue::UNDEFINED,
    )
}

#[wasm_bindgen]
impl RecordBatch {
    /// This batch as a whole IPC stream or file (see `tableToIPC`).
    #[wasm_bindgen(js_name = toIPC, unchecked_return_type = "Uint8Array<ArrayBuffer>")]
    pub fn to_ipc(&self, options: Option<WriterOptionsJs>) -> WasmResult<Uint8Array> {
        let schema = self.as_arrow().schema();
        stream_bytes(schema, &[(self.as_arrow(), self.metadata_ref())], options)
    }
}

#[wasm_bindgen]
impl Table {
    /// This table as a whole IPC stream or file (see `tableToIPC`).
    #[wasm_bindgen(js_name = toIPC, unchecked_return_type = "Uint8Array<ArrayBuffer>")]
    pub fn to_ipc(&self, options: Option<WriterOptionsJs>) -> WasmResult<Uint8Array> {
        let batches: Vec<_> = self
            .arrow_batches()
            .iter()
            .zip(self.batch_metadata())
            .collect();
        stream_bytes(self.schema_ref().clone(), &batches, options)
    }
}

/// `batches`, with their metadata, as one IPC stream or file, as the options ask. A slice,
/// so that each writer is compiled once for batches and tables.
fn stream_bytes(
    schema: SchemaRef,
    batches: &[(&arrow_array::RecordBatch, &BatchMetadata)],
    options: Option<WriterOptionsJs>,
) -> WasmResult<Uint8Array> {
    let batches = batches.iter().copied();
    let (options, format) = write_options_and_format(options)?;
    let chunks = match format {
        Format::Stream => writer::write_stream_with_metadata(schema, batches, &options)?,
        Format::File => writer::write_file_with_metadata(schema, batches, &options)?,
    };
    Ok(Chunks::new(chunks).to_uint8_array())
}
