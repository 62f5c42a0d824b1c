//! What each call answered by a few control messages and a status answers (Handshake,
//! GetFlightInfo, PollFlightInfo, ListFlights, GetSchema, DoAction, ListActions): which
//! messages it collects and how many it must have; and the IPC schema messages that
//! FlightInfo and GetSchema carry. The gateway holds the server's PollInfo to
//! Flight.proto ([`check_poll_info`](crate::flight::control::check_poll_info)); the
//! client does not check it again, which would cost the `.wasm` about 0.2 KiB it does
//! not have (docs/size.md).

use std::sync::Arc;

use arrow_schema::SchemaRef;

use super::status::INTERNAL;
use super::Failure;
use crate::flight::control::{Descriptor, FlightInfo, ServerMessage};
use crate::ipc::{ReadLimits, StreamDecoder};

/// Which call was made, which decides what its answer holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallKind {
    ListFlights,
    FlightInfo,
    Schema,
    Action,
    Handshake,
    ListActions,
    Poll,
}

/// A call's answer: one value, or a list, of what its kind takes.
#[derive(Debug, Clone, PartialEq)]
pub enum Answer {
    /// GetFlightInfo's one `flightInfo`, PollFlightInfo's one `pollInfo`, GetSchema's
    /// first `schema`.
    One(Item),
    /// ListFlights' `flightInfo`s, DoAction's `result` bodies, Handshake's payloads,
    /// ListActions' `actionType`s, in order.
    List(Vec<Item>),
}

/// One value of an answer.
#[derive(Debug, Clone, PartialEq)]
pub enum Item {
    FlightInfo(FlightInfo),
    Poll(PollInfo),
    /// Decoded from its IPC message.
    Schema(SchemaRef),
    Bytes(Vec<u8>),
    ActionType {
        name: String,
        description: String,
    },
}

impl CallKind {
    /// What call `self` answered with `messages`, the control messages it received. Items
    /// of one type, gathered in one loop: a `Vec` and a loop per kind cost the `.wasm`
    /// about 0.5 KiB more (brotli).
    pub fn answer(self, messages: Vec<ServerMessage>) -> Result<Answer, Failure> {
        use CallKind as K;
        use ServerMessage as M;
        let mut items = Vec::new();
        for message in messages {
            let item = match (self, message) {
                (K::ListFlights | K::FlightInfo, M::FlightInfo { info, .. }) => {
                    Item::FlightInfo(info)
                }
                (
                    K::Poll,
                    M::PollInfo {
                        info,
                        descriptor,
                        progress,
                        expiration_time_ms,
                        ..
                    },
                ) => Item::Poll(PollInfo {
                    info,
                    descriptor,
                    progress,
                    expiration_time_ms,
                }),
                (K::Schema, M::Schema { schema, .. }) => {
                    return Ok(Answer::One(Item::Schema(schema_from_ipc(&schema)?)))
                }
                (K::Action, M::Result { body, .. })
                | (K::Handshake, M::Handshake { payload: body, .. }) => Item::Bytes(body),
                (
                    K::ListActions,
                    M::ActionType {
                        name, description, ..
                    },
                ) => Item::ActionType { name, description },
                _ => continue,
            };
            items.push(item);
        }
        match self {
            K::FlightInfo => Ok(Answer::One(only(items, "flightInfo")?)),
            K::Poll => match only(items, "pollInfo")? {
                // Complete without results: typed as impossible, so refused.
                Item::Poll(PollInfo {
                    descriptor: None,
                    info: None,
                    ..
                }) => Err(Failure::new(
                    INTERNAL,
                    "a complete pollInfo (no descriptor) must hold the query's info",
                )),
                poll => Ok(Answer::One(poll)),
            },
            K::Schema => Err(Failure::new(
                INTERNAL,
                "expected a schema answer, found none",
            )),
            _ => Ok(Answer::List(items)),
        }
    }
}

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

/// The one item of `found`, or how many there were.
fn only(mut found: Vec<Item>, what: &str) -> Result<Item, Failure> {
    match (found.len(), found.pop()) {
        (1, Some(answer)) => Ok(answer),
        (count, _) => Err(Failure::new(
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

    fn info(total_records: i64) -> FlightInfo {
        FlightInfo {
            schema: Vec::new(),
            descriptor: None,
            endpoints: Vec::new(),
            total_records,
            total_bytes: -1,
            ordered: false,
            app_metadata: Vec::new(),
        }
    }

    fn info_message(total_records: i64) -> ServerMessage {
        ServerMessage::FlightInfo {
            stream: 1,
            info: info(total_records),
        }
    }

    /// An encapsulated IPC schema message of one column, `name`.
    fn schema_message(name: &str) -> TestResult<Vec<u8>> {
        let schema = Schema::new(vec![Field::new(name, DataType::Int32, false)]);
        let mut ipc = StreamWriter::try_new(Vec::new(), &schema)?.into_inner()?;
        ipc.truncate(ipc.len() - 8); // the end-of-stream marker
        Ok(ipc)
    }

    fn schema(name: &str) -> TestResult<ServerMessage> {
        Ok(ServerMessage::Schema {
            stream: 1,
            schema: schema_message(name)?,
        })
    }

    #[test]
    fn get_flight_info_answers_exactly_one_flight_info() {
        let one = CallKind::FlightInfo.answer(vec![info_message(7)]);
        assert_eq!(one, Ok(Answer::One(Item::FlightInfo(info(7)))));
        for n in [0, 2] {
            let answer = CallKind::FlightInfo.answer((0..n).map(info_message).collect());
            let expected = format!("expected one flightInfo answer, found {n}");
            assert_eq!(answer, Err(Failure::new(INTERNAL, expected)));
        }
    }

    #[test]
    fn get_schema_answers_the_first_schema_decoded() -> TestResult {
        let answer = CallKind::Schema.answer(vec![info_message(1), schema("a")?, schema("b")?]);
        let Ok(Answer::One(Item::Schema(first))) = answer else {
            return Err(format!("expected a schema, found {answer:?}").into());
        };
        assert_eq!(first.field(0).name(), "a");
        let none = Failure::new(INTERNAL, "expected a schema answer, found none");
        assert_eq!(CallKind::Schema.answer(vec![info_message(1)]), Err(none));
        Ok(())
    }

    #[test]
    fn each_call_collects_its_own_messages() {
        let messages = || {
            vec![
                info_message(1),
                ServerMessage::Result {
                    stream: 1,
                    body: vec![1],
                },
                ServerMessage::Handshake {
                    stream: 1,
                    payload: vec![2],
                },
                ServerMessage::ActionType {
                    stream: 1,
                    name: "refresh".into(),
                    description: "reload".into(),
                },
                info_message(2),
            ]
        };
        let list = |kind: CallKind| match kind.answer(messages()) {
            Ok(Answer::List(items)) => items,
            other => panic!("{kind:?} answered {other:?}"),
        };
        let infos = [Item::FlightInfo(info(1)), Item::FlightInfo(info(2))];
        assert_eq!(list(CallKind::ListFlights), infos);
        assert_eq!(list(CallKind::Action), [Item::Bytes(vec![1])]);
        assert_eq!(list(CallKind::Handshake), [Item::Bytes(vec![2])]);
        let action = Item::ActionType {
            name: "refresh".into(),
            description: "reload".into(),
        };
        assert_eq!(list(CallKind::ListActions), [action]);
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
