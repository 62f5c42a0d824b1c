//! The memory budget: bytes the gateway holds for its clients, counted in three nested
//! budgets (the whole gateway, each client IP, each connection), so that one client
//! cannot take it all.
//!
//! What is counted ([`Held`] guards, given back on drop):
//! - each call's HTTP/2 stream window, reserved when it opens: what its upstream may send
//!   before the gateway reads;
//! - each DoGet's upstream message in hand, and its frames queued for the socket until
//!   written;
//! - each DoPut's credit window, reserved when it opens, and the messages it has not yet
//!   forwarded, the one in progress at its declared size (as it is allocated);
//! - control messages queued for the socket, which are small.
//!
//! Past a budget, a call is refused, and a running call whose next message or frame does
//! not fit fails ([`Account::reserve`]), with `RESOURCE_EXHAUSTED` naming the budget and
//! what is held: nothing is dropped from a stream that goes on. Only control messages
//! are counted whatever the budget ([`Account::hold`]). A connection that holds bytes
//! while a budget it shares with others (its client IP's, the gateway's) has no room for
//! another call, whose streams wait on its
//! client, and whose client moves less than [`MIN_STREAM_WINDOW`] bytes (credit granted,
//! upload sent) in the stall timeout, is closed by `conn`.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

use tonic::Status;

/// The HTTP/2 flow-control window of one upstream stream, from the smallest (for calls
/// whose answers are small, and DoGets opened with little credit) to the largest: what a
/// stalled stream may hold.
pub(crate) const MIN_STREAM_WINDOW: u32 = 64 << 10;
pub(crate) const MAX_STREAM_WINDOW: u32 = 2 << 20;

/// The three limits, in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    pub total: u64,
    pub per_client: u64,
    pub per_connection: u64,
}

/// The gateway's budgets, shared by every connection.
pub(crate) struct Budget {
    limits: Limits,
    held: Mutex<Totals>,
}

#[derive(Default)]
struct Totals {
    total: u64,
    clients: HashMap<IpAddr, u64>,
}

/// One of the three budgets as a connection sees it: what is used of it, and its option.
struct Level {
    used: u64,
    limit: u64,
    option: &'static str,
    whose: &'static str,
}

/// One connection's share of the budget.
pub(crate) struct Account {
    budget: Arc<Budget>,
    ip: IpAddr,
    /// Bytes held for this connection; changed only under `budget.held`'s lock.
    held: Mutex<u64>,
    /// What the client has moved since it last moved [`MIN_STREAM_WINDOW`] bytes.
    progress: Mutex<Progress>,
    /// Streams waiting on the client: DoGets for credit, DoPuts for the next frame.
    waiting: AtomicUsize,
}

/// When the client last moved [`MIN_STREAM_WINDOW`] bytes (or the connection opened), and
/// what it has moved since: a grant of a byte now and then does not count as reading.
struct Progress {
    at: Instant,
    bytes: u64,
}

/// A stream waiting on the client, counted in its account until dropped.
pub(crate) struct Waiting<'a>(&'a Account);

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.0.waiting.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Bytes held for a connection, given back when dropped.
pub(crate) struct Held {
    account: Arc<Account>,
    bytes: u64,
}

impl Budget {
    pub fn new(limits: Limits) -> Arc<Self> {
        Arc::new(Budget {
            limits,
            held: Mutex::new(Totals::default()),
        })
    }

    /// A new connection's account, from client address `ip`.
    pub fn open(self: &Arc<Self>, ip: IpAddr) -> Arc<Account> {
        Arc::new(Account {
            budget: self.clone(),
            ip,
            held: Mutex::new(0),
            progress: Mutex::new(Progress {
                at: Instant::now(),
                bytes: 0,
            }),
            waiting: AtomicUsize::new(0),
        })
    }

    fn totals(&self) -> MutexGuard<'_, Totals> {
        lock(&self.held)
    }
}

impl Account {
    /// Reserves `bytes` for `what` (a call, a message, a frame), or refuses them with
    /// `RESOURCE_EXHAUSTED` naming the budget that is full and what it holds. Reserving
    /// nothing is still refused by a full budget.
    pub fn reserve(self: &Arc<Self>, bytes: u64, what: &str) -> Result<Held, Status> {
        let mut totals = self.budget.totals();
        let mut held = lock(&self.held);
        if let Some(level) = first_full(self.levels(&totals, *held), bytes.max(1)) {
            return Err(Status::resource_exhausted(format!(
                "{what} needs {bytes} bytes, over the {} budget: {} holds {} of its {} bytes",
                level.option, level.whose, level.used, level.limit
            )));
        }
        add(&mut totals, &mut held, self.ip, bytes);
        Ok(Held {
            account: self.clone(),
            bytes,
        })
    }

    /// Counts `bytes` that are already held, whatever the budget.
    pub fn hold(self: &Arc<Self>, bytes: u64) -> Held {
        let mut totals = self.budget.totals();
        add(&mut totals, &mut lock(&self.held), self.ip, bytes);
        Held {
            account: self.clone(),
            bytes,
        }
    }

    fn release(&self, bytes: u64) {
        let mut totals = self.budget.totals();
        let mut held = lock(&self.held);
        *held -= bytes;
        totals.total -= bytes;
        if let Some(client) = totals.clients.get_mut(&self.ip) {
            *client -= bytes;
            // Addresses that hold nothing are forgotten, so the map cannot grow without end.
            if *client == 0 {
                totals.clients.remove(&self.ip);
            }
        }
    }

    /// Records `bytes` the client moved: credit it granted, or upload bytes it sent.
    pub fn moved(&self, bytes: u64) {
        let mut progress = lock(&self.progress);
        progress.bytes = progress.bytes.saturating_add(bytes);
        if progress.bytes >= u64::from(MIN_STREAM_WINDOW) {
            *progress = Progress {
                at: Instant::now(),
                bytes: 0,
            };
        }
    }

    /// If this connection holds bytes and a budget it shares with other connections (its
    /// client IP's or the gateway's) has no room for a call that reserves `room`: that
    /// budget's option, and what the connection holds. Its own budget is left out: when
    /// only that one is full, the connection keeps nobody else from anything.
    pub fn full_shared_budget(&self, room: u64) -> Option<(&'static str, u64)> {
        let totals = self.budget.totals();
        let held = *lock(&self.held);
        if held == 0 {
            return None;
        }
        let [_own, shared @ ..] = self.levels(&totals, held);
        let level = first_full(shared, room)?;
        Some((level.option, held))
    }

    /// The three budgets, innermost first, given what the gateway (`totals`) and this
    /// connection (`held`) hold.
    fn levels(&self, totals: &Totals, held: u64) -> [Level; 3] {
        let limits = self.budget.limits;
        let client = totals.clients.get(&self.ip).copied().unwrap_or(0);
        [
            Level {
                used: held,
                limit: limits.per_connection,
                option: "--max-buffered-bytes-per-connection",
                whose: "this connection",
            },
            Level {
                used: client,
                limit: limits.per_client,
                option: "--max-buffered-bytes-per-client",
                whose: "this client IP",
            },
            Level {
                used: totals.total,
                limit: limits.total,
                option: "--max-buffered-bytes",
                whose: "the gateway",
            },
        ]
    }

    /// When the client last moved [`MIN_STREAM_WINDOW`] bytes (see `moved`).
    pub fn last_progress(&self) -> Instant {
        lock(&self.progress).at
    }

    /// Counts a stream as waiting on the client while the guard lives.
    pub fn wait_on_client(&self) -> Waiting<'_> {
        self.waiting.fetch_add(1, Ordering::Relaxed);
        Waiting(self)
    }

    /// Whether a stream waits on the client.
    pub fn is_waiting_on_client(&self) -> bool {
        self.waiting.load(Ordering::Relaxed) > 0
    }
}

/// The first of `levels` that has no room for `bytes` more.
fn first_full(levels: impl IntoIterator<Item = Level>, bytes: u64) -> Option<Level> {
    levels
        .into_iter()
        .find(|level| level.used.saturating_add(bytes) > level.limit)
}

fn add(totals: &mut Totals, held: &mut u64, ip: IpAddr, bytes: u64) {
    // Nothing held makes no entry: `release` would never remove it.
    if bytes == 0 {
        return;
    }
    *held += bytes;
    totals.total += bytes;
    *totals.clients.entry(ip).or_insert(0) += bytes;
}

/// A poisoned lock only means another holder panicked; the counts are still valid.
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Held {
    /// Gives back what this guard holds beyond `bytes`.
    pub fn shrink_to(&mut self, bytes: u64) {
        if bytes < self.bytes {
            self.account.release(self.bytes - bytes);
            self.bytes = bytes;
        }
    }

    /// Moves `bytes` of what this guard holds (at most all of it) to a new guard.
    pub fn split_off(&mut self, bytes: u64) -> Held {
        let bytes = bytes.min(self.bytes);
        self.bytes -= bytes;
        Held {
            account: self.account.clone(),
            bytes,
        }
    }

    /// Changes what this guard holds to `bytes`: an increase is reserved as by
    /// [`Account::reserve`], and refused past a budget.
    pub fn reserve_to(&mut self, bytes: u64, what: &str) -> Result<(), Status> {
        if bytes <= self.bytes {
            self.shrink_to(bytes);
            return Ok(());
        }
        let mut more = self.account.reserve(bytes - self.bytes, what)?;
        self.bytes += std::mem::take(&mut more.bytes);
        Ok(())
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        if self.bytes > 0 {
            self.account.release(self.bytes);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIMITS: Limits = Limits {
        total: 1000,
        per_client: 600,
        per_connection: 400,
    };

    fn ip(last: u8) -> IpAddr {
        IpAddr::from([127, 0, 0, last])
    }

    #[test]
    fn each_budget_refuses_what_would_exceed_it() {
        let budget = Budget::new(LIMITS);
        let a = budget.open(ip(1));
        let held = a.reserve(400, "a DoGet").unwrap();
        assert_eq!(
            a.reserve(1, "a DoGet").err().unwrap().message(),
            "a DoGet needs 1 bytes, over the --max-buffered-bytes-per-connection budget: this \
             connection holds 400 of its 400 bytes"
        );
        assert_eq!(a.full_shared_budget(1), None, "only its own budget is full");
        let b = budget.open(ip(1));
        let _b = b.reserve(200, "a DoGet").unwrap();
        assert_eq!(
            b.reserve(0, "a call").err().unwrap().message(),
            "a call needs 0 bytes, over the --max-buffered-bytes-per-client budget: this client \
             IP holds 600 of its 600 bytes"
        );
        let c = budget.open(ip(2));
        let _c = c.reserve(400, "a DoGet").unwrap();
        let d = budget.open(ip(3));
        assert_eq!(
            d.reserve(1, "a DoPut").err().unwrap().code(),
            tonic::Code::ResourceExhausted
        );
        assert_eq!(
            a.full_shared_budget(1),
            Some(("--max-buffered-bytes-per-client", 400))
        );
        assert_eq!(d.full_shared_budget(1), None, "d holds nothing");
        drop(held);
        assert_eq!(a.full_shared_budget(1), None);
        d.reserve(400, "a DoGet")
            .expect("room once a's bytes are given back");
    }

    #[test]
    fn held_bytes_count_past_the_budget_and_are_given_back() {
        let budget = Budget::new(LIMITS);
        let a = budget.open(ip(1));
        let mut held = a.hold(900);
        assert_eq!(
            a.full_shared_budget(1),
            Some(("--max-buffered-bytes-per-client", 900))
        );
        held.shrink_to(100);
        assert_eq!(a.full_shared_budget(1), None);
        assert_eq!(
            held.reserve_to(401, "a message").unwrap_err().message(),
            "a message needs 301 bytes, over the --max-buffered-bytes-per-connection budget: \
             this connection holds 100 of its 400 bytes"
        );
        held.reserve_to(400, "a message").unwrap();
        assert_eq!(*lock(&a.held), 400);
        held.reserve_to(100, "a message").unwrap();
        assert_eq!(
            a.full_shared_budget(301),
            None,
            "only its own budget is full"
        );
        assert_eq!(
            a.full_shared_budget(501),
            Some(("--max-buffered-bytes-per-client", 100)),
            "no room for 501 bytes"
        );
        drop(held);
        assert_eq!(*lock(&a.held), 0);
        assert!(
            budget.totals().clients.is_empty(),
            "{:?}",
            budget.totals().total
        );
    }

    #[test]
    fn an_address_that_holds_nothing_is_forgotten() {
        let budget = Budget::new(LIMITS);
        for last in 1..=3 {
            // A ping or a close: a message of no bytes.
            drop(budget.open(ip(last)).hold(0));
            drop(budget.open(ip(last)).reserve(0, "a call").unwrap());
        }
        assert!(budget.totals().clients.is_empty());
    }

    #[test]
    fn a_split_off_guard_gives_back_its_own_part() {
        let budget = Budget::new(LIMITS);
        let a = budget.open(ip(1));
        let mut held = a.reserve(300, "messages").unwrap();
        let first = held.split_off(100);
        let rest = held.split_off(500);
        assert_eq!((first.bytes, rest.bytes, held.bytes), (100, 200, 0));
        drop(first);
        assert_eq!(*lock(&a.held), 200);
        drop((rest, held));
        assert_eq!(*lock(&a.held), 0);
        assert!(budget.totals().clients.is_empty());
    }
}
