//! A DoGet stream's credit, shared by the connection (which adds the client's grants)
//! and the stream's task (which waits for credit before sending, and so before polling
//! the upstream for more).

use std::sync::Mutex;

use quiver::flight::credit::Credit;
use quiver::flight::ProtocolError;
use tokio::sync::Notify;

pub(crate) struct SharedCredit {
    credit: Mutex<Credit>,
    granted: Notify,
}

impl SharedCredit {
    pub fn new(initial: u64) -> Result<Self, ProtocolError> {
        Ok(SharedCredit {
            credit: Mutex::new(Credit::new(initial)?),
            granted: Notify::new(),
        })
    }

    /// Adds a client grant; an overflowing grant is a protocol error.
    pub fn grant(&self, bytes: u64) -> Result<(), ProtocolError> {
        self.with(|c| c.grant(bytes))?;
        self.granted.notify_one();
        Ok(())
    }

    /// Waits until at least `min` bytes are available, then takes up to `max`.
    pub async fn take(&self, min: usize, max: usize) -> usize {
        loop {
            // Register before checking, so that a grant in between is not missed.
            let granted = self.granted.notified();
            let taken = self.with(|c| {
                if c.balance() >= min as u64 {
                    c.take_up_to(max)
                } else {
                    0
                }
            });
            if taken > 0 || min == 0 {
                return taken;
            }
            granted.await;
        }
    }

    fn with<T>(&self, f: impl FnOnce(&mut Credit) -> T) -> T {
        // A poisoned lock only means another holder panicked; the counter is still valid.
        let mut guard = self.credit.lock().unwrap_or_else(|e| e.into_inner());
        f(&mut guard)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::time::Duration;

    #[tokio::test]
    async fn take_waits_for_grant() {
        let c = Arc::new(SharedCredit::new(3).unwrap());
        assert_eq!(c.take(1, 2).await, 2);
        assert_eq!(c.take(1, 10).await, 1);
        let waiter = tokio::spawn({
            let c = c.clone();
            async move { c.take(4, 100).await }
        });
        tokio::time::sleep(Duration::from_millis(20)).await;
        c.grant(2).unwrap();
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert!(!waiter.is_finished(), "2 bytes are less than the 4 needed");
        c.grant(3).unwrap();
        let got = tokio::time::timeout(Duration::from_secs(5), waiter)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(got, 5);
        assert!(c.grant(u64::MAX).is_err());
    }
}
