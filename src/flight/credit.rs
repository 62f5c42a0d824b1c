//! Byte credit: the receiver of a stream grants bytes, the sender spends them on frame
//! payloads and never sends more than the balance. Browsers cannot push back on a
//! WebSocket, so this is the protocol's only backpressure.

use super::{ProtocolError, Result};

/// The largest balance a stream may hold. A grant that would exceed it is a protocol
/// error, so that a hostile peer cannot overflow the counter.
pub const MAX_BALANCE: u64 = 1 << 40;

/// A stream's remaining credit, in bytes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Credit {
    balance: u64,
}

impl Credit {
    /// Starts with `initial` bytes (the window).
    pub fn new(initial: u64) -> Result<Self> {
        let mut c = Credit::default();
        c.grant(initial)?;
        Ok(c)
    }

    /// Bytes that may be sent now.
    pub fn balance(&self) -> u64 {
        self.balance
    }

    /// Adds a grant from the receiver.
    pub fn grant(&mut self, bytes: u64) -> Result<()> {
        match self.balance.checked_add(bytes) {
            Some(b) if b <= MAX_BALANCE => {
                self.balance = b;
                Ok(())
            }
            _ => Err(ProtocolError::CreditOverflow {
                grant: bytes,
                limit: MAX_BALANCE,
            }),
        }
    }

    /// Takes up to `want` bytes for the next frame payload; returns how many were taken.
    pub fn take_up_to(&mut self, want: usize) -> usize {
        let n = (want as u64).min(self.balance);
        self.balance -= n;
        // n <= want, so it fits in usize.
        n as usize
    }

    /// Charges a received frame of `bytes`, refusing one larger than the balance.
    pub fn spend(&mut self, bytes: usize) -> Result<()> {
        let n = bytes as u64;
        if n > self.balance {
            return Err(ProtocolError::CreditExceeded {
                credit: self.balance,
                found: n,
            });
        }
        self.balance -= n;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::TestResult;

    #[test]
    fn grant_take_spend() -> TestResult {
        let mut c = Credit::new(10)?;
        assert_eq!(c.take_up_to(4), 4);
        assert_eq!(c.take_up_to(100), 6);
        assert_eq!(c.take_up_to(1), 0);
        c.grant(5)?;
        c.spend(5)?;
        assert_eq!(c.balance(), 0);
        assert_eq!(
            c.spend(1).unwrap_err().to_string(),
            "frame of 1 bytes exceeds the remaining credit of 0 bytes"
        );
        Ok(())
    }

    #[test]
    fn overflow_is_refused() -> TestResult {
        let mut c = Credit::new(MAX_BALANCE)?;
        assert_eq!(
            c.grant(1).unwrap_err().to_string(),
            "credit grant of 1 bytes would raise the balance above 1099511627776"
        );
        assert!(c.grant(u64::MAX).is_err());
        assert_eq!(c.balance(), MAX_BALANCE, "a refused grant changes nothing");
        assert!(Credit::new(u64::MAX).is_err());
        Ok(())
    }
}
