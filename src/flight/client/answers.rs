//! What calls answer: the one `pollInfo` of PollFlightInfo, and the IPC schema message
//! of a FlightInfo or GetSchema. The gateway holds the server's PollInfo to Flight.proto
//! ([`check_poll_info`](crate::flight::control::check_poll_info)); the client does not
//! check it again, which would cost the `.wasm` about 0.2 KiB it does not have
//! (docs/size.md).

use std::sync::Arc;

use arrow_schema::SchemaRef;

use super::status::INTERNAL;
use super::Failure;
use crate::flight::control::{Descriptor, FlightInfo, ServerMessage};
use crate::ipc::{ReadLimits, StreamDecoder};

/// Decodes an encapsulated IPC schema message (a FlightInfo's, or GetSchema's).
pub fn schema_from_ipc(bytes: &[u8]) -> Result<SchemaRef, Failure> {
    let mut decoder = StreamDecoder::new(ReadLimits::default());
    decoder.push(bytes)?;
    decoder
        .schema()
        .map(Arc::clone)
        .ok_or_else(|| Failure::new(INTERNAL, "the schema message is incomplete"))
}

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

#[cfg(test)]
mod tests {
    use arrow_ipc::writer::StreamWriter;
    use arrow_schema::{DataType, Field, Schema};

    use super::*;
    use crate::TestResult;

    /// An encapsulated IPC schema message of one column, `name`.
    fn schema_message(name: &str) -> TestResult<Vec<u8>> {
        let schema = Schema::new(vec![Field::new(name, DataType::Int32, false)]);
        let mut ipc = StreamWriter::try_new(Vec::new(), &schema)?.into_inner()?;
        ipc.truncate(ipc.len() - 8); // the end-of-stream marker
        Ok(ipc)
    }

    #[test]
    fn a_schema_message_decodes_or_is_incomplete() -> TestResult {
        let bytes = schema_message("a")?;
        let schema = schema_from_ipc(&bytes).map_err(|f| f.message)?;
        assert_eq!(schema.field(0).name(), "a");
        let incomplete = Failure::new(INTERNAL, "the schema message is incomplete");
        assert_eq!(schema_from_ipc(&bytes[..bytes.len() / 2]), Err(incomplete));
        Ok(())
    }
}
