//! The budget every DoGet shares: bytes its decoder has allocated for a message still
//! arriving, and its decoded batches nobody has read yet. A message declares its sizes,
//! and the decoder allocates them (up to `maxMessageBytes`) as soon as the header is in;
//! a compressed one expands when it completes. Unchecked, a gateway could make each open
//! stream hold 256 MiB that it never fills, or frames of small messages that each expand a
//! thousandfold, until wasm memory ran out and some later allocation trapped the module.

use std::cell::Cell;

/// What the open DoGets of this module may hold together: messages still arriving (their
/// metadata and bodies, allocated before their bytes arrive) and batches not yet read.
pub(super) const MAX_PENDING_BODY_BYTES: u64 = 1 << 30;

thread_local! {
    static PENDING: Cell<u64> = const { Cell::new(0) };
}

/// One stream's share of the budget, returned when it is dropped.
#[derive(Default)]
pub(super) struct BodyReservation {
    held: u64,
}

impl BodyReservation {
    /// Records that the stream now holds `bytes`. Over the budget, returns what every
    /// stream holds together; the caller must then free its share.
    pub fn hold(&mut self, bytes: u64) -> Result<(), u64> {
        let total = PENDING.get() - self.held + bytes;
        PENDING.set(total);
        self.held = bytes;
        if total > MAX_PENDING_BODY_BYTES {
            return Err(total);
        }
        Ok(())
    }
}

impl BodyReservation {
    /// What this stream could hold in all, given what the others hold now.
    pub fn available(&self) -> u64 {
        MAX_PENDING_BODY_BYTES.saturating_sub(PENDING.get() - self.held)
    }
}

impl Drop for BodyReservation {
    fn drop(&mut self) {
        PENDING.set(PENDING.get() - self.held);
    }
}
