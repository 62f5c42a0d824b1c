//! `StreamReader` and `tableFromIPC`: decode IPC streams pushed from JavaScript.

use js_sys::{Array, Reflect, Uint8Array};
use wasm_bindgen::prelude::*;

use super::batch::{table_with_metadata, RecordBatch, Table};
use super::error::{usage, WasmResult};
use super::file::{table_from_file, Parts};
use super::object::object;
use super::options::{read_limits, ReaderOptionsJs};
use super::schema::schema_to_js;
use crate::ipc::reader::{is_file, MAGIC};
use crate::ipc::StreamDecoder;

/// Decodes an Arrow IPC stream pushed in segments of any size.
///
/// Each pushed byte is copied once, from the JS array straight into its final place in
/// wasm memory; segments are never joined first. The reader keeps no reference to a
/// pushed array, so the caller may reuse it as soon as `push` returns.
///
/// ```js
/// const reader = new StreamReader();
/// socket.binaryType = 'arraybuffer';
/// socket.onmessage = ({ data }) => {
///   reader.push(new Uint8Array(data));
///   for (const batch of reader) console.log(batch.numRows);
/// };
/// socket.onclose = () => {
///   try { reader.finish(); } finally { reader.free(); } // throws if the stream was cut short
/// };
/// ```
///
/// For a `Response`, `ReadableStream`, `Blob` or async iterable, `StreamReader.from(source)`
/// makes a reader that pushes for you, which `for await` reads.
#[wasm_bindgen]
pub struct StreamReader {
    decoder: StreamDecoder,
}

#[wasm_bindgen(typescript_custom_section)]
const READER_STATS_TS: &str = r#"
/** What a reader has done so far. For an uncompressed stream, `bytesCopied === bytesPushed`. */
export interface ReaderStats {
  /** Bytes handed to `push`. */
  bytesPushed: number;
  /** Bytes the reader copied: each pushed byte once, plus realigned or stored-uncompressed buffers, and (with ruzstd, the default ZSTD backend) ZSTD output copied out of its window. */
  bytesCopied: number;
  /** Complete messages read. */
  messages: number;
  /** Record batches decoded. */
  batches: number;
}
"#;

#[wasm_bindgen(module = "/src/js/copy.js")]
extern "C" {
    /// Copies `length` bytes of `segment`, from `start`, to `address` in wasm memory.
    #[wasm_bindgen(js_name = copyToMemory)]
    fn copy_to_memory(
        memory: &JsValue,
        segment: &Uint8Array,
        start: u32,
        length: u32,
        address: u32,
    );
}

/// Copies `segment` into `decoder`, one copy per message part it covers. The Flight
/// client pushes each frame's IPC bytes through here too, so both count copies the same way.
pub(super) fn push_js(decoder: &mut StreamDecoder, segment: &Uint8Array) -> crate::ipc::Result<()> {
    let memory = wasm_bindgen::memory();
    // SAFETY: `copy_to_memory` writes exactly `dst.len()` bytes at `dst`, from the
    // segment's bytes `start..start + dst.len()`, which `push_segment` keeps in bounds.
    // Addresses and lengths fit in u32 on wasm32.
    unsafe {
        decoder.push_segment(segment.length() as usize, |start, dst| {
            copy_to_memory(
                &memory,
                segment,
                start as u32,
                dst.len() as u32,
                dst.as_mut_ptr() as u32,
            );
        })
    }
}

impl StreamReader {
    fn push_array(&mut self, segment: &Uint8Array) -> WasmResult<()> {
        Ok(push_js(&mut self.decoder, segment)?)
    }
}

#[wasm_bindgen]
impl StreamReader {
    /// A reader with the given limits (see `ReaderOptions` for the defaults).
    #[wasm_bindgen(constructor)]
    pub fn new(options: Option<ReaderOptionsJs>) -> WasmResult<StreamReader> {
        Ok(StreamReader {
            decoder: StreamDecoder::new(read_limits(options)?),
        })
    }

    /// Feeds the next bytes of the stream. Throws on malformed input; after that the
    /// reader is unusable, but other readers and the module are unaffected.
    pub fn push(
        &mut self,
        #[wasm_bindgen(unchecked_param_type = "Uint8Array")] segment: &JsValue,
    ) -> WasmResult<()> {
        // An ArrayBuffer or another view would otherwise read as no bytes at all, or as
        // bytes of the wrong length.
        let segment = segment.dyn_ref::<Uint8Array>().ok_or_else(|| {
            usage(format!(
                "StreamReader.push expects a Uint8Array, found {}: wrap an ArrayBuffer in \
                 new Uint8Array(buffer)",
                class_of(segment)
            ))
        })?;
        self.push_array(segment)
    }

    /// The next decoded batch, or `undefined` when none is ready yet. The batch owns its
    /// buffers; free it with `free()` or `using`.
    #[wasm_bindgen(js_name = nextBatch)]
    pub fn next_batch(&mut self) -> Option<RecordBatch> {
        let (batch, metadata) = self.decoder.next_batch_with_metadata()?;
        Some(RecordBatch::with_metadata(batch, metadata))
    }

    /// Throws if the stream ended inside a message or before its schema.
    pub fn finish(&self) -> WasmResult<()> {
        Ok(self.decoder.finish()?)
    }

    /// Ends the stream as `finish()` does and takes the batches not yet taken, in a
    /// `Table` that is yours to free. Consumes the reader, also when it throws.
    ///
    /// ```js
    /// const reader = new StreamReader();
    /// for (const segment of segments) reader.push(segment);
    /// using table = reader.intoTable();
    /// ```
    #[wasm_bindgen(js_name = intoTable)]
    pub fn into_table(mut self) -> WasmResult<Table> {
        self.decoder.finish()?;
        let batches = std::iter::from_fn(|| self.decoder.next_batch_with_metadata()).collect();
        let schema = self
            .decoder
            .schema()
            .ok_or_else(|| usage("stream has no schema"))?;
        Ok(table_with_metadata(schema, batches))
    }

    /// The schema, once the first message has arrived; otherwise `undefined`.
    #[wasm_bindgen(getter, unchecked_return_type = "Schema | undefined")]
    pub fn schema(&self) -> JsValue {
        self.decoder
            .schema()
            .map_or(JsValue::UNDEFINED, |s| schema_to_js(s))
    }

    /// Whether the end-of-stream marker has been read.
    #[wasm_bindgen(getter)]
    pub fn ended(&self) -> bool {
        self.decoder.is_ended()
    }

    /// Counters of bytes pushed and copied, messages and batches (a new object each time).
    #[wasm_bindgen(getter, unchecked_return_type = "ReaderStats")]
    pub fn stats(&self) -> JsValue {
        let stats = self.decoder.stats();
        object(&[
            ("bytesPushed", (stats.bytes_pushed as f64).into()),
            ("bytesCopied", (stats.bytes_copied as f64).into()),
            ("messages", (stats.messages as f64).into()),
            ("batches", (stats.batches as f64).into()),
        ])
    }
}

/// Decodes a whole IPC stream or file, given as one array or as the segments it arrived
/// in. A file (it starts with the magic `ARROW1`) is read through its footer, like
/// `openFile`.
///
/// ```js
/// using table = tableFromIPC(new Uint8Array(await (await fetch(url)).arrayBuffer()));
/// ```
#[wasm_bindgen(js_name = tableFromIPC)]
pub fn table_from_ipc(
    #[wasm_bindgen(unchecked_param_type = "Uint8Array | Uint8Array[]")] input: JsValue,
    options: Option<ReaderOptionsJs>,
) -> WasmResult<Table> {
    let segments = if Array::is_array(&input) {
        Array::from(&input).iter().collect()
    } else {
        vec![input]
    };
    let segments = segments
        .into_iter()
        .map(|segment| segment.dyn_into::<Uint8Array>())
        .collect::<Result<Vec<_>, _>>()
        .map_err(|_| usage("tableFromIPC expects a Uint8Array or an array of Uint8Array"))?;
    let limits = read_limits(options)?;
    let parts = Parts::in_sequence(segments);
    if is_file(&parts.bytes(0..MAGIC.len() as u64)) {
        return table_from_file(&parts, limits);
    }
    let mut reader = StreamReader {
        decoder: StreamDecoder::new(limits),
    };
    for segment in parts.arrays() {
        reader.push_array(&segment)?;
    }
    reader.into_table()
}

/// A value's class (`ArrayBuffer`, `DataView`), or its type, for errors.
fn class_of(value: &JsValue) -> String {
    let name = Reflect::get(value, &"constructor".into())
        .and_then(|class| Reflect::get(&class, &"name".into()))
        .ok()
        .and_then(|name| name.as_string());
    match name {
        Some(name) if value.is_object() => name,
        _ if value.is_null() => "null".into(),
        _ => value.js_typeof().as_string().unwrap_or_default(),
    }
}
