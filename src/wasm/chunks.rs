//! `Chunks`: what one write produced, in wasm memory, handed to JavaScript without a copy
//! where memory allows it.

use js_sys::{Array, Uint8Array};
use wasm_bindgen::prelude::*;

use super::error::{usage, WasmResult};
use crate::ipc::writer;

#[wasm_bindgen(module = "/src/js/chunks.js")]
extern "C" {
    /// A view of wasm memory where it is a resizable buffer, else a copy.
    #[wasm_bindgen(js_name = chunkBytes)]
    fn chunk_bytes(memory: &JsValue, address: u32, length: u32) -> Uint8Array;
    /// `chunkBytes` of every (address, length) pair of `table`, as one JS array.
    #[wasm_bindgen(js_name = chunkArray)]
    fn chunk_array(memory: &JsValue, table: &[u32]) -> Array;
}

/// The chunks of one `write()` or `finish()`: the stream's next bytes, in order.
///
/// They live in wasm memory until `free()` (or the end of a `using` block), which releases
/// them; any view from `chunk(i)` must not be used after that. Keep the `Chunks` object
/// alive while you use its views.
///
/// ```js
/// using chunks = writer.write(batch);
/// for (const bytes of chunks.toArray()) socket.send(bytes);
/// ```
#[wasm_bindgen]
pub struct Chunks {
    inner: writer::Chunks,
}

impl Chunks {
    pub fn new(inner: writer::Chunks) -> Self {
        Chunks { inner }
    }
}

#[wasm_bindgen]
impl Chunks {
    /// Number of chunks.
    #[wasm_bindgen(getter)]
    pub fn count(&self) -> usize {
        self.inner.count()
    }

    /// Total bytes over all chunks.
    #[wasm_bindgen(getter, js_name = byteLength)]
    pub fn byte_length(&self) -> usize {
        self.inner.byte_length()
    }

    /// Where each chunk starts in the concatenated bytes, all in one new `Uint32Array`.
    ///
    /// ```js
    /// const offsets = chunks.offsets();
    /// for (let i = 0; i < chunks.count; i++) out.set(chunks.chunk(i), at + offsets[i]);
    /// ```
    pub fn offsets(&self) -> Vec<u32> {
        self.inner.offsets()
    }

    /// The length of each chunk, all in one new `Uint32Array`.
    pub fn lengths(&self) -> Vec<u32> {
        self.inner.lengths()
    }

    /// Chunk `i` as a `Uint8Array`.
    ///
    /// Where wasm memory is a resizable buffer (`WebAssembly.Memory.prototype.
    /// toResizableBuffer()`, which the web build switches to) this is a view with no copy,
    /// valid until `free()`, also when memory grows. Elsewhere (Node 20) a view would
    /// silently read as empty after the next growth, so this is a copy.
    #[wasm_bindgen(unchecked_return_type = "Uint8Array<ArrayBuffer>")]
    pub fn chunk(&self, i: usize) -> WasmResult<Uint8Array> {
        let bytes = self.inner.chunk(i).ok_or_else(|| {
            usage(format!(
                "chunk {i} does not exist: these Chunks hold {}",
                self.inner.count()
            ))
        })?;
        // Addresses and lengths fit in u32 on wasm32.
        Ok(chunk_bytes(
            &wasm_bindgen::memory(),
            bytes.as_ptr() as u32,
            bytes.len() as u32,
        ))
    }

    /// Every chunk, each as `chunk(i)` gives it, in one call.
    ///
    /// ```js
    /// for (const bytes of chunks.toArray()) socket.send(bytes);
    /// ```
    #[wasm_bindgen(js_name = toArray, unchecked_return_type = "Uint8Array<ArrayBuffer>[]")]
    pub fn to_array(&self) -> Array {
        let table: Vec<u32> = self
            .inner
            .iter()
            .flat_map(|c| [c.as_ptr() as u32, c.len() as u32])
            .collect();
        chunk_array(&wasm_bindgen::memory(), &table)
    }

    /// All chunks in one new `Uint8Array` (a copy, owned by JavaScript).
    #[wasm_bindgen(js_name = toUint8Array, unchecked_return_type = "Uint8Array<ArrayBuffer>")]
    pub fn to_uint8_array(&self) -> Uint8Array {
        let out = Uint8Array::new_with_length(self.inner.byte_length() as u32);
        let mut at = 0;
        for chunk in self.inner.iter() {
            let end = at + chunk.len() as u32;
            out.subarray(at, end).copy_from(chunk);
            at = end;
        }
        out
    }
}
