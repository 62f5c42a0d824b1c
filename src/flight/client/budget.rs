//! The budget every DoGet of a module shares: bytes its decoder has allocated for a
//! message still arriving, and its decoded batches nobody has read yet. A message declares
//! its sizes, and the decoder allocates them (up to `maxMessageBytes`) as soon as the
//! header is in; a compressed one expands when it completes. Unchecked, a gateway could
//! make each open stream hold 256 MiB that it never fills, or frames of small messages
//! that each expand a thousandfold, until wasm memory ran out and some later allocation
//! trapped the module.

use std::cell::Cell;
use std::rc::Rc;

/// What the open DoGets of the wasm module may hold together by default.
pub const DEFAULT_BUDGET_BYTES: u64 = 1 << 30;

/// Bytes that streams (of one or several clients) hold together, against a limit.
#[derive(Debug)]
pub struct Budget {
    limit: u64,
    held: Cell<u64>,
}

impl Budget {
    pub fn new(limit: u64) -> Rc<Self> {
        Rc::new(Budget {
            limit,
            held: Cell::new(0),
        })
    }

    pub fn limit(&self) -> u64 {
        self.limit
    }

    /// What every stream holds now.
    pub fn held(&self) -> u64 {
        self.held.get()
    }
}

/// One stream's share of a budget, returned when it is dropped.
#[derive(Debug)]
pub(super) struct Reservation {
    budget: Rc<Budget>,
    held: u64,
}

impl Reservation {
    pub fn new(budget: Rc<Budget>) -> Self {
        Reservation { budget, held: 0 }
    }

    /// Records that the stream now holds `bytes`. Over the limit, returns what every
    /// stream holds together; the caller must then free its share.
    pub fn hold(&mut self, bytes: u64) -> Result<(), u64> {
        let total = self.budget.held.get() - self.held + bytes;
        self.budget.held.set(total);
        self.held = bytes;
        if total > self.budget.limit {
            return Err(total);
        }
        Ok(())
    }

    /// What this stream could hold in all, given what the others hold now.
    pub fn available(&self) -> u64 {
        self.budget
            .limit
            .saturating_sub(self.budget.held.get() - self.held)
    }

    pub fn limit(&self) -> u64 {
        self.budget.limit
    }
}

impl Drop for Reservation {
    fn drop(&mut self) {
        self.budget.held.set(self.budget.held.get() - self.held);
    }
}
