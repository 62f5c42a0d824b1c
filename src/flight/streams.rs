//! Stream ids: the client opens each stream with an id higher than any before it on the
//! connection. So the gateway needs only the highest id to tell a stream that has
//! finished (late credit or frames are dropped: they raced the end) from one that was
//! never opened (a protocol error), without remembering finished streams.

use super::{ProtocolError, Result};

/// The stream ids a connection has seen.
#[derive(Debug, Default, Clone, Copy)]
pub struct StreamIds {
    last: u32,
}

impl StreamIds {
    /// Accepts `id` for a new stream.
    pub fn open(&mut self, id: u32) -> Result<()> {
        if id <= self.last {
            return Err(ProtocolError::StreamNotIncreasing {
                found: id,
                last: self.last,
            });
        }
        self.last = id;
        Ok(())
    }

    /// Checks that `id`, which is not open now, was opened before.
    pub fn check_finished(&self, id: u32) -> Result<()> {
        if id == 0 || id > self.last {
            return Err(ProtocolError::UnknownStream(id));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::TestResult;

    #[test]
    fn ids_increase() -> TestResult {
        let mut ids = StreamIds::default();
        assert_eq!(
            ids.open(0).unwrap_err().to_string(),
            "a new stream id must be greater than 0, found 0"
        );
        ids.open(1)?;
        ids.open(5)?;
        assert_eq!(
            ids.open(5).unwrap_err().to_string(),
            "a new stream id must be greater than 5, found 5"
        );
        assert!(ids.open(3).is_err());
        ids.check_finished(3)?;
        assert_eq!(
            ids.check_finished(6).unwrap_err().to_string(),
            "stream 6 was never opened"
        );
        assert!(ids.check_finished(0).is_err());
        Ok(())
    }
}
