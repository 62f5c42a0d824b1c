//! Installs the counting allocator, which tells JS when memory grew, and exposes its
//! counters as `memoryStats()`.

use std::alloc::{GlobalAlloc, Layout, System};
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

/// What a growth reserves beyond what the allocation needed, as a share of memory's new
/// size (1/4) and at most `MAX_RESERVE`. The system allocator grows memory by what each
/// allocation lacks, 64 KiB at a time, and each growth makes JS remake the `values` of
/// every column it holds: reserving ahead makes the number of growths logarithmic in
/// memory's size (as emscripten's geometric growth does, by 20%) rather than linear.
const RESERVE_SHARE: usize = 4;
const MAX_RESERVE: usize = 64 << 20;
const PAGE_BYTES: usize = 64 << 10;

impl GrowthReporting {
    /// `allocate()`, then, if memory grew meanwhile, a reserve and `memory_grew()`.
    fn reporting<T>(allocate: impl FnOnce() -> T) -> T {
        let pages = memory_size::<0>();
        let result = allocate();
        if memory_size::<0>() != pages {
            reserve_ahead();
            memory_grew();
        }
        result
    }
}

/// Grows memory by a reserve that later allocations take without growing it again: an
/// allocation from the top of the heap, freed at once, which the system allocator keeps
/// (wasm memory never shrinks). Straight to `System`, so that the counters leave it out.
/// Skipped where memory cannot grow that far.
fn reserve_ahead() {
    // Pages first: 4 GiB of memory in bytes overflows a wasm32 usize.
    let bytes = (memory_size::<0>() / RESERVE_SHARE)
        .saturating_mul(PAGE_BYTES)
        .min(MAX_RESERVE);
    if bytes == 0 {
        return;
    }
    if let Ok(layout) = Layout::from_size_align(bytes, 16) {
        // SAFETY: a non-null block is freed with the layout it was allocated with.
        unsafe {
            let block = System.alloc(layout);
            if !block.is_null() {
                System.dealloc(block, layout);
            }
        }
    }
}

// SAFETY: every call is forwarded unchanged to `CountingAllocator`. `memory_grew` runs JS
// that reads wasm memory, never calls into wasm (so it cannot reenter the allocator) and
// catches what it throws: an exception would unwind the allocator mid-call.
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
