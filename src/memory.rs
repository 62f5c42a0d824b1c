//! A counting global allocator, so that users, tests and benchmarks can see what a call
//! allocated. The wasm build installs it as `#[global_allocator]`; native tests may too.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// Wraps the system allocator and counts what passes through it.
pub struct CountingAllocator {
    allocated_bytes: AtomicU64,
    allocations: AtomicU64,
    live_bytes: AtomicU64,
}

/// A snapshot of the counters. `allocated_bytes` and `allocations` only grow, so the
/// difference between two snapshots is what the code between them cost.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AllocationStats {
    pub allocated_bytes: u64,
    pub allocations: u64,
    pub live_bytes: u64,
}

impl CountingAllocator {
    pub const fn new() -> Self {
        CountingAllocator {
            allocated_bytes: AtomicU64::new(0),
            allocations: AtomicU64::new(0),
            live_bytes: AtomicU64::new(0),
        }
    }

    pub fn stats(&self) -> AllocationStats {
        AllocationStats {
            allocated_bytes: self.allocated_bytes.load(Relaxed),
            allocations: self.allocations.load(Relaxed),
            live_bytes: self.live_bytes.load(Relaxed),
        }
    }

    fn count_alloc(&self, size: usize) {
        self.allocated_bytes.fetch_add(size as u64, Relaxed);
        self.allocations.fetch_add(1, Relaxed);
        self.live_bytes.fetch_add(size as u64, Relaxed);
    }
}

impl Default for CountingAllocator {
    fn default() -> Self {
        Self::new()
    }
}

// SAFETY: every call is forwarded unchanged to `System`; the counters do not touch memory.
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let ptr = unsafe { System.alloc(layout) };
        if !ptr.is_null() {
            self.count_alloc(layout.size());
        }
        ptr
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let ptr = unsafe { System.alloc_zeroed(layout) };
        if !ptr.is_null() {
            self.count_alloc(layout.size());
        }
        ptr
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) };
        self.live_bytes.fetch_sub(layout.size() as u64, Relaxed);
    }

    /// A reallocation counts as one allocation of the new size, since that is what a
    /// growing buffer costs.
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let new = unsafe { System.realloc(ptr, layout, new_size) };
        if !new.is_null() {
            self.live_bytes.fetch_sub(layout.size() as u64, Relaxed);
            self.count_alloc(new_size);
        }
        new
    }
}
