//! `ArrowFile` (what `openFile` gives) and the file half of `tableFromIPC`: IPC files read
//! from JS arrays that hold parts of the file, each byte copied once into wasm memory.

use std::mem::MaybeUninit;
use std::ops::Range;

use js_sys::{ArrayBuffer, Object, Uint8Array, WebAssembly};
use wasm_bindgen::prelude::*;

use super::batch::{table_with_metadata, RecordBatch, Table};
use super::error::{usage, WasmResult};
use super::options::{read_limits, ReaderOptionsJs};
use super::schema::schema_to_js;
use crate::ipc::reader::TAIL_BYTES;
use crate::ipc::{FileDecoder, ReadLimits};

#[wasm_bindgen(module = "/src/js/copy.js")]
extern "C" {
    /// Copies `length` bytes of `array`, from `start`, to `address` in wasm memory.
    #[wasm_bindgen(js_name = copyRange)]
    fn copy_range(memory: &JsValue, array: &Uint8Array, start: u32, length: u32, address: u32);
    /// Copies `length` bytes at `from` in wasm memory to `address`.
    #[wasm_bindgen(js_name = copyWithinMemory)]
    fn copy_within_memory(memory: &JsValue, from: u32, length: u32, address: u32);
}

/// Random access to the record batches of an Arrow IPC file, from `openFile`.
///
/// It holds the schema and where each batch lies; `batch(i)` reads only what batch `i`
/// needs. Free it with `free()` or `using`; the batches it gave stay valid.
///
/// ```js
/// using file = await openFile(input.files[0]);
/// using batch = await file.batch(file.numBatches - 1);
/// console.log(batch.numRows, file.bytesRead);
/// ```
#[wasm_bindgen]
pub struct ArrowFile {
    decoder: FileDecoder,
}

#[wasm_bindgen]
impl ArrowFile {
    /// Where the footer of a file of `fileLength` bytes lies, as `[start, end]`, from its
    /// last 10 bytes. Used by `openFile`.
    #[wasm_bindgen(js_name = footerRange, skip_typescript)]
    pub fn footer_range(
        tail: &[u8],
        file_length: f64,
        options: Option<ReaderOptionsJs>,
    ) -> WasmResult<Vec<f64>> {
        let range = FileDecoder::footer_range(tail, length(file_length)?, &read_limits(options)?)?;
        Ok(vec![range.start as f64, range.end as f64])
    }

    /// Opens a file of `fileLength` bytes from its footer. Used by `openFile`.
    #[wasm_bindgen(skip_typescript)]
    pub fn open(
        footer: &[u8],
        file_length: f64,
        options: Option<ReaderOptionsJs>,
    ) -> WasmResult<ArrowFile> {
        let decoder = FileDecoder::try_new(footer, length(file_length)?, read_limits(options)?)?;
        Ok(ArrowFile { decoder })
    }

    /// Where `view` starts in wasm memory, if it is a view of it. Used by `openFile`,
    /// which makes such a view again for each read, since a read may grow memory.
    #[wasm_bindgen(js_name = memoryAddress, skip_typescript)]
    pub fn memory_address(view: &Uint8Array) -> Option<u32> {
        Object::is(&view.buffer(), &memory_buffer()).then(|| view.byte_offset())
    }

    /// `length` bytes of wasm memory at `address`, in a view over memory as it is now.
    #[wasm_bindgen(js_name = memoryView, skip_typescript)]
    pub fn memory_view(address: u32, length: u32) -> Uint8Array {
        Uint8Array::new_with_byte_offset_and_length(&memory_buffer(), address, length)
    }

    /// The schema, as the file's footer declares it.
    #[wasm_bindgen(getter, unchecked_return_type = "Schema")]
    pub fn schema(&self) -> JsValue {
        schema_to_js(self.decoder.schema())
    }

    /// How many record batches the file holds.
    #[wasm_bindgen(getter, js_name = numBatches)]
    pub fn num_batches(&self) -> usize {
        self.decoder.num_batches()
    }

    /// The bytes of the file read so far, footer included.
    #[wasm_bindgen(getter, js_name = bytesRead)]
    pub fn bytes_read(&self) -> f64 {
        self.decoder.stats().bytes_pushed as f64
    }

    /// The ranges of the file that batch `index` needs, as `[start, end, start, end, ...]`,
    /// not in file order. Used by `batch`.
    #[wasm_bindgen(skip_typescript)]
    pub fn ranges(&self, index: usize) -> WasmResult<Vec<f64>> {
        let ranges = self.decoder.ranges(index)?;
        Ok(ranges
            .iter()
            .flat_map(|r| [r.start as f64, r.end as f64])
            .collect())
    }

    /// Decodes batch `index` from `parts` of the file, part `i` starting at `starts[i]`,
    /// in file order. Used by `batch`.
    #[wasm_bindgen(js_name = readBatch, skip_typescript)]
    pub fn read_batch(
        &mut self,
        index: usize,
        starts: Vec<f64>,
        parts: Vec<Uint8Array>,
    ) -> WasmResult<RecordBatch> {
        let mut offsets = Vec::with_capacity(starts.len());
        for start in starts {
            offsets.push(length(start)?);
        }
        let parts = Parts::new(offsets, parts)?;
        let (batch, metadata) = parts.read_batch(&mut self.decoder, index)?;
        Ok(RecordBatch::with_metadata(batch, metadata))
    }
}

/// A whole file, given as the segments it arrived in, as one table.
pub(super) fn table_from_file(parts: &Parts, limits: ReadLimits) -> WasmResult<Table> {
    let at = parts.end();
    let tail = parts.bytes(at.saturating_sub(TAIL_BYTES)..at);
    let footer = FileDecoder::footer_range(&tail, at, &limits)?;
    let mut decoder = FileDecoder::try_new(&parts.bytes(footer), at, limits)?;
    let all = 0..decoder.num_batches();
    let batches = parts.read_batches(&mut decoder, all)?;
    Ok(table_with_metadata(decoder.schema(), batches))
}

/// A file length or offset from JS: a whole number that a double holds exactly.
fn length(value: f64) -> WasmResult<u64> {
    if value.fract() == 0.0 && (0.0..=9_007_199_254_740_991.0).contains(&value) {
        Ok(value as u64)
    } else {
        Err(usage(format!(
            "expected a file length or offset in bytes, found {value}"
        )))
    }
}

/// Parts of a file in JS arrays, each at its offset in the file, in order.
pub(super) struct Parts {
    parts: Vec<Part>,
}

struct Part {
    /// Where the part lies in the file, as long as the array was when the read began.
    range: Range<u64>,
    array: Uint8Array,
    /// Where the array starts in wasm memory, when it is a view of it (a writer's chunk,
    /// say): growth during the read detaches such a view outside resizable memory, so
    /// its bytes are copied by address.
    in_memory: Option<u32>,
}

impl Parts {
    fn new(starts: Vec<u64>, arrays: Vec<Uint8Array>) -> WasmResult<Self> {
        if starts.len() != arrays.len() || !starts.is_sorted() {
            return Err(usage(format!(
                "expected one offset per part of the file, in order: {} offsets, {} parts",
                starts.len(),
                arrays.len()
            )));
        }
        let memory = memory_buffer();
        let parts = starts.into_iter().zip(arrays);
        Ok(Parts {
            parts: parts
                .map(|(start, a)| Part::new(start, a, &memory))
                .collect(),
        })
    }

    /// The segments a whole file arrived in, one after the other.
    pub(super) fn in_sequence(arrays: Vec<Uint8Array>) -> Self {
        let memory = memory_buffer();
        let mut at = 0;
        let mut parts = Vec::with_capacity(arrays.len());
        for array in arrays {
            let part = Part::new(at, array, &memory);
            at = part.range.end;
            parts.push(part);
        }
        Parts { parts }
    }

    /// Each part's array, to push one after the other: a view of wasm memory is made again
    /// over memory as it is when reached, since pushing the parts before may have grown it.
    pub(super) fn arrays(&self) -> impl Iterator<Item = Uint8Array> + '_ {
        self.parts.iter().map(|part| match part.in_memory {
            Some(address) => {
                let length = (part.range.end - part.range.start) as u32;
                Uint8Array::new_with_byte_offset_and_length(&memory_buffer(), address, length)
            }
            None => part.array.clone(),
        })
    }

    /// Where the last part ends.
    fn end(&self) -> u64 {
        self.parts.last().map_or(0, |part| part.range.end)
    }

    /// The bytes of `range` that the parts hold, in a new `Vec`: for the tail and footer.
    pub(super) fn bytes(&self, range: Range<u64>) -> Vec<u8> {
        let held = range.end.min(self.end()).saturating_sub(range.start) as usize;
        let mut out = Vec::with_capacity(held);
        let copied = self.copy(
            &wasm_bindgen::memory(),
            range.start,
            &mut out.spare_capacity_mut()[..held],
        );
        // SAFETY: `copy` initialized the first `copied` bytes.
        unsafe { out.set_len(copied) };
        out
    }

    /// Copies the file's bytes from `at` into `dst`, from whichever parts hold them;
    /// returns how many it copied (all of `dst` when the parts hold them).
    fn copy(&self, memory: &JsValue, mut at: u64, dst: &mut [MaybeUninit<u8>]) -> usize {
        let mut done = 0;
        for part in &self.parts {
            if done == dst.len() {
                break;
            }
            if part.range.contains(&at) {
                let n = (part.range.end - at).min((dst.len() - done) as u64) as usize;
                // Addresses and lengths fit in u32 on wasm32.
                let address = dst[done..].as_mut_ptr() as u32;
                let start = (at - part.range.start) as u32;
                match part.in_memory {
                    Some(view) => copy_within_memory(memory, view + start, n as u32, address),
                    None => copy_range(memory, &part.array, start, n as u32, address),
                }
                done += n;
                at += n as u64;
            }
        }
        done
    }

    fn read_batch(
        &self,
        decoder: &mut FileDecoder,
        index: usize,
    ) -> crate::ipc::Result<(arrow_array::RecordBatch, crate::ipc::BatchMetadata)> {
        let mut batches = self.read_batches(decoder, index..index + 1)?;
        Ok(batches.remove(0))
    }

    /// Batches `indexes`, with the parts' ranges and wasm memory looked up once for all,
    /// not once a batch: a whole file of small batches pays for each lookup per batch.
    fn read_batches(
        &self,
        decoder: &mut FileDecoder,
        indexes: Range<usize>,
    ) -> crate::ipc::Result<Vec<(arrow_array::RecordBatch, crate::ipc::BatchMetadata)>> {
        let given: Vec<Range<u64>> = self.parts.iter().map(|part| part.range.clone()).collect();
        let memory = wasm_bindgen::memory();
        let mut batches = Vec::with_capacity(indexes.len());
        for index in indexes {
            // SAFETY: the decoder asks only for bytes inside `given`, the parts' ranges, and
            // `copy` fills a destination from the parts that hold it, which are in order.
            batches.push(unsafe {
                decoder.read_batch(index, &given, |at, dst| {
                    self.copy(&memory, at, dst);
                })?
            });
        }
        Ok(batches)
    }
}

impl Part {
    fn new(start: u64, array: Uint8Array, memory: &ArrayBuffer) -> Self {
        let in_memory = Object::is(&array.buffer(), memory).then(|| array.byte_offset());
        let range = start..start + u64::from(array.length());
        Part {
            range,
            array,
            in_memory,
        }
    }
}

/// The buffer wasm memory is seen through now.
fn memory_buffer() -> ArrayBuffer {
    wasm_bindgen::memory()
        .unchecked_into::<WebAssembly::Memory>()
        .buffer()
        .unchecked_into()
}
