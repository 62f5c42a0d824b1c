//! `ArrowFile` (what `openFile` gives) and the file half of `tableFromIPC`: IPC files read
//! from JS arrays that hold parts of the file, each byte copied once into wasm memory.

use std::mem::MaybeUninit;
use std::ops::Range;

use js_sys::Uint8Array;
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
    starts: Vec<u64>,
    arrays: Vec<Uint8Array>,
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
        Ok(Parts { starts, arrays })
    }

    /// The segments a whole file arrived in, one after the other.
    pub(super) fn in_sequence(arrays: Vec<Uint8Array>) -> Self {
        let mut starts = Vec::with_capacity(arrays.len());
        let mut at = 0;
        for array in &arrays {
            starts.push(at);
            at += u64::from(array.length());
        }
        Parts { starts, arrays }
    }

    pub(super) fn arrays(&self) -> &[Uint8Array] {
        &self.arrays
    }

    /// Where the last part ends.
    fn end(&self) -> u64 {
        self.ranges().last().map_or(0, |(range, _)| range.end)
    }

    fn ranges(&self) -> impl Iterator<Item = (Range<u64>, &Uint8Array)> {
        let ends = self.arrays.iter().map(|a| u64::from(a.length()));
        self.starts
            .iter()
            .zip(ends)
            .map(|(&start, len)| start..start + len)
            .zip(&self.arrays)
    }

    /// The bytes of `range` that the parts hold, in a new `Vec`: for the tail and footer.
    pub(super) fn bytes(&self, range: Range<u64>) -> Vec<u8> {
        let mut out = Vec::new();
        for (part, array) in self.ranges() {
            let (start, end) = (range.start.max(part.start), range.end.min(part.end));
            if start < end {
                let slice = array.subarray((start - part.start) as u32, (end - part.start) as u32);
                out.extend(slice.to_vec());
            }
        }
        out
    }

    /// Copies the file's bytes from `at` into `dst`, from whichever parts hold them.
    fn copy(&self, memory: &JsValue, mut at: u64, dst: &mut [MaybeUninit<u8>]) {
        let mut done = 0;
        for (part, array) in self.ranges() {
            if done == dst.len() {
                break;
            }
            if part.contains(&at) {
                let n = (part.end - at).min((dst.len() - done) as u64) as usize;
                // Addresses and lengths fit in u32 on wasm32.
                let address = dst[done..].as_mut_ptr() as u32;
                copy_range(memory, array, (at - part.start) as u32, n as u32, address);
                done += n;
                at += n as u64;
            }
        }
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
        let given: Vec<Range<u64>> = self.ranges().map(|(range, _)| range).collect();
        let memory = wasm_bindgen::memory();
        let mut batches = Vec::with_capacity(indexes.len());
        for index in indexes {
            // SAFETY: the decoder asks only for bytes inside `given`, the parts' ranges, and
            // `copy` fills a destination from the parts that hold it, which are in order.
            batches.push(unsafe {
                decoder.read_batch(index, &given, |at, dst| self.copy(&memory, at, dst))?
            });
        }
        Ok(batches)
    }
}
