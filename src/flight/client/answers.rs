//! The answer of PollFlightInfo: one `pollInfo`. The gateway holds the server's PollInfo
//! to Flight.proto ([`check_poll_info`](crate::flight::control::check_poll_info)); the
//! client does not check it again, which would cost the `.wasm` about 0.2 KiB it does
//! not have (docs/size.md).

use super::status::INTERNAL;
use super::Failure;
use crate::flight::control::{Descriptor, FlightInfo, ServerMessage};

/// Where a long-running query stands (Flight.proto's `PollInfo`).
#[derive(Debug, Clone, PartialEq)]
pub struct PollInfo {
    /// The results so far: each poll's is whole, not what was added since the last.
    pub info: Option<FlightInfo>,
    /// The descriptor to poll next; none once the query is complete.
    pub descriptor: Option<Descriptor>,
    /// From 0 to 1, when the server knows it.
    pub progress: Option<f64>,
    /// Milliseconds since the Unix epoch after which `descriptor` may be refused.
    pub expiration_time_ms: Option<i64>,
}

impl PollInfo {
    /// The one `pollInfo` of a PollFlightInfo call's answer.
    pub fn from_answer(messages: Vec<ServerMessage>) -> Result<PollInfo, Failure> {
        only(messages, "pollInfo", |m| match m {
            ServerMessage::PollInfo {
                info,
                descriptor,
                progress,
                expiration_time_ms,
                ..
            } => Some(PollInfo {
                info,
                descriptor,
                progress,
                expiration_time_ms,
            }),
            _ => None,
        })
    }
}

/// The one answer among `messages` that `pick` takes, or how many there were.
fn only<T>(
    messages: Vec<ServerMessage>,
    what: &str,
    pick: impl Fn(ServerMessage) -> Option<T>,
) -> Result<T, Failure> {
    let mut found = None;
    let mut count = 0;
    for answer in messages.into_iter().filter_map(pick) {
        found = Some(answer);
        count += 1;
    }
    match (count, found) {
        (1, Some(answer)) => Ok(answer),
        _ => Err(Failure::new(
            INTERNAL,
            format!("expected one {what} answer, found {count}"),
        )),
    }
}
