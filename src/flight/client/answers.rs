//! The answers of PollFlightInfo and RenewFlightEndpoint: what their control messages
//! must hold before they reach the caller. The gateway checks its server's answers; these
//! checks hold the gateway to the protocol in turn.

use super::status::INTERNAL;
use super::Failure;
use crate::flight::control::{check_poll_info, Descriptor, Endpoint, FlightInfo, ServerMessage};

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
    /// The one `pollInfo` of a PollFlightInfo call's answer, if Flight.proto allows it.
    pub fn from_answer(messages: Vec<ServerMessage>) -> Result<PollInfo, Failure> {
        let polls: Vec<PollInfo> = messages
            .into_iter()
            .filter_map(|m| match m {
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
            .collect();
        let poll = only(polls, "pollInfo")?;
        check_poll_info(poll.info.as_ref(), poll.descriptor.as_ref(), poll.progress).map_err(
            |reason| {
                Failure::new(
                    INTERNAL,
                    format!("the gateway's pollInfo breaks Flight.proto: {reason}"),
                )
            },
        )?;
        Ok(poll)
    }
}

/// The one `endpoint` of a RenewFlightEndpoint call's answer.
pub fn renewed_endpoint(messages: Vec<ServerMessage>) -> Result<Endpoint, Failure> {
    let endpoints = messages
        .into_iter()
        .filter_map(|m| match m {
            ServerMessage::Endpoint { endpoint, .. } => Some(endpoint),
            _ => None,
        })
        .collect();
    only(endpoints, "endpoint")
}

fn only<T>(mut answers: Vec<T>, what: &str) -> Result<T, Failure> {
    match answers.len() {
        1 => Ok(answers.remove(0)),
        n => Err(Failure::new(
            INTERNAL,
            format!("expected one {what} answer, found {n}"),
        )),
    }
}
