//! Installs the counting allocator and exposes it as `memoryStats()`.

use wasm_bindgen::prelude::*;

use super::object::object;

use crate::memory::CountingAllocator;

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator::new();

/// Allocation counters of this wasm instance. `allocatedBytes` and `allocations` are
/// cumulative since start, so the difference across a call is what that call cost;
/// `liveBytes` is what is allocated now; `wasmMemoryBytes` is the size of wasm memory.
///
/// ```js
/// const before = memoryStats();
/// const table = tableFromIPC(bytes);
/// console.log(memoryStats().allocatedBytes - before.allocatedBytes);
/// ```
#[wasm_bindgen(js_name = memoryStats, unchecked_return_type = "MemoryStats")]
pub fn memory_stats() -> JsValue {
    let stats = ALLOCATOR.stats();
    let memory: js_sys::WebAssembly::Memory = wasm_bindgen::memory().unchecked_into();
    let buffer: js_sys::ArrayBuffer = memory.buffer().unchecked_into();
    object(&[
        ("allocatedBytes", (stats.allocated_bytes as f64).into()),
        ("allocations", (stats.allocations as f64).into()),
        ("liveBytes", (stats.live_bytes as f64).into()),
        ("wasmMemoryBytes", (buffer.byte_length() as f64).into()),
    ])
}

#[wasm_bindgen(typescript_custom_section)]
const MEMORY_STATS_TS: &str = r#"
/** Allocation counters of the wasm instance (see `memoryStats()`). */
export interface MemoryStats {
  /** Bytes allocated since start (cumulative). */
  allocatedBytes: number;
  /** Allocations since start (cumulative); a reallocation counts as one. */
  allocations: number;
  /** Bytes allocated and not yet freed. */
  liveBytes: number;
  /** Size of the wasm linear memory. */
  wasmMemoryBytes: number;
}
"#;
