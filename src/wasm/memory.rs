//! Installs the counting allocator, which tells JS when memory grew, and exposes its
//! counters as `memoryStats()`.

use std::alloc::{GlobalAlloc, Layout};
use std::arch::wasm32::memory_size;

use wasm_bindgen::prelude::*;

use super::object::object;

use crate::memory::CountingAllocator;

#[global_allocator]
static ALLOCATOR: GrowthReporting = GrowthReporting(CountingAllocator::new());

#[wasm_bindgen(module = "/src/js/handed_out.js")]
extern "C" {
    /// Makes the `values` of every column JS holds again, over the grown memory's buffer
    /// (growing a fixed-length memory detaches each view of it). Calls nothing in wasm.
    #[wasm_bindgen(js_name = memoryGrew)]
    fn memory_grew();
}

/// The counting allocator, which calls `memory_grew` whenever a call grew memory: only
/// the allocator grows it, so JS hears of every growth before the call into wasm that
/// grew it returns.
struct GrowthReporting(CountingAllocator);

impl GrowthReporting {
    /// `allocate()`, then `memory_grew()` if memory grew meanwhile.
    fn reporting<T>(allocate: impl FnOnce() -> T) -> T {
        let pages = memory_size::<0>();
        let result = allocate();
        if memory_size::<0>() != pages {
            memory_grew();
        }
        result
    }
}

// SAFETY: every call is forwarded unchanged to `CountingAllocator`; `memory_grew` runs JS
// that reads wasm memory and does not call into wasm, so it cannot reenter the allocator.
unsafe impl GlobalAlloc for GrowthReporting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        Self::reporting(|| unsafe { self.0.alloc(layout) })
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        Self::reporting(|| unsafe { self.0.alloc_zeroed(layout) })
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { self.0.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        Self::reporting(|| unsafe { self.0.realloc(ptr, layout, new_size) })
    }
}

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
    let stats = ALLOCATOR.0.stats();
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
