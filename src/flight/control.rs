//! JSON control messages, sent as WebSocket text frames. Byte fields are base64
//! (standard alphabet, padded); field and type names are camelCase for JavaScript.

use serde::{Deserialize, Serialize};

use super::{ProtocolError, Result};
use crate::fields::Fields;

/// A Flight descriptor: `{"path": ["a", "b"]}`, `{"cmd": "<base64>"}`, or
/// `{"sql": "<JSON text>"}`, a Flight SQL command that the gateway encodes as a `cmd`
/// (docs/protocol.md, "Flight SQL"). The client passes the JSON text through unread.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase", deny_unknown_fields)]
pub enum Descriptor {
    Path(Vec<String>),
    Cmd(#[serde(with = "b64")] Vec<u8>),
    Sql(String),
}

/// A `FlightEndpoint`. Passing `ticket` and one of `locations` back in `doGet` reads it.
/// `locations`, `expirationTimeMs` and `appMetadata` may be left out.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Endpoint {
    #[serde(with = "b64")]
    pub ticket: Vec<u8>,
    pub locations: Vec<String>,
    /// Milliseconds since the Unix epoch.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expiration_time_ms: Option<i64>,
    #[serde(with = "b64")]
    pub app_metadata: Vec<u8>,
}

/// A `FlightInfo`. `schema` is an encapsulated IPC schema message, ready for a decoder.
/// `descriptor` and `appMetadata` may be left out.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FlightInfo {
    #[serde(with = "b64")]
    pub schema: Vec<u8>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub descriptor: Option<Descriptor>,
    pub endpoints: Vec<Endpoint>,
    pub total_records: i64,
    pub total_bytes: i64,
    pub ordered: bool,
    #[serde(with = "b64")]
    pub app_metadata: Vec<u8>,
}

/// Read field by field, as [`ServerMessage`] is.
impl<'de> Deserialize<'de> for Endpoint {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        Fields::deserialize(d, "an endpoint", |f| {
            Ok(Endpoint {
                ticket: f.take::<Base64>("ticket")?.0,
                locations: f.take_or_default("locations")?,
                expiration_time_ms: f.take_or_default("expirationTimeMs")?,
                app_metadata: f.take_or_default::<Base64>("appMetadata")?.0,
            })
        })
    }
}

/// Read field by field, as [`ServerMessage`] is.
impl<'de> Deserialize<'de> for FlightInfo {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        Fields::deserialize(d, "a FlightInfo", |f| {
            Ok(FlightInfo {
                schema: f.take::<Base64>("schema")?.0,
                descriptor: f.take_or_default("descriptor")?,
                endpoints: f.take("endpoints")?,
                total_records: f.take("totalRecords")?,
                total_bytes: f.take("totalBytes")?,
                ordered: f.take("ordered")?,
                app_metadata: f.take_or_default::<Base64>("appMetadata")?.0,
            })
        })
    }
}

/// Messages from the client. Every request names a new `stream` id, higher than any the
/// connection used before.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(
    tag = "type",
    rename_all = "camelCase",
    rename_all_fields = "camelCase",
    deny_unknown_fields
)]
pub enum ClientMessage {
    /// Sets the bearer token checked by the gateway and sent upstream.
    Auth {
        token: String,
    },
    Handshake {
        stream: u32,
        #[serde(default, with = "b64")]
        payload: Vec<u8>,
    },
    /// Basic auth: the gateway exchanges the credentials for the bearer token the server
    /// returns, which the connection's later calls carry.
    BasicAuth {
        stream: u32,
        username: String,
        password: Password,
    },
    ListFlights {
        stream: u32,
        #[serde(default, with = "b64")]
        criteria: Vec<u8>,
    },
    GetFlightInfo {
        stream: u32,
        descriptor: Descriptor,
    },
    PollFlightInfo {
        stream: u32,
        descriptor: Descriptor,
    },
    GetSchema {
        stream: u32,
        descriptor: Descriptor,
    },
    DoGet {
        stream: u32,
        #[serde(with = "b64")]
        ticket: Vec<u8>,
        /// An endpoint location; absent means the gateway's upstream.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        location: Option<String>,
        /// Initial credit in bytes; absent means the gateway's window.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        credit: Option<u64>,
    },
    DoPut {
        stream: u32,
        descriptor: Descriptor,
    },
    /// The client has sent all of a DoPut's IPC stream.
    End {
        stream: u32,
    },
    DoAction {
        stream: u32,
        action: String,
        #[serde(default, with = "b64")]
        body: Vec<u8>,
    },
    ListActions {
        stream: u32,
    },
    Cancel {
        stream: u32,
    },
    Credit {
        stream: u32,
        bytes: u64,
    },
}

/// A password: its `Debug` hides it, so that no log or error text shows it.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Password(pub String);

impl std::fmt::Debug for Password {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Password(hidden)")
    }
}

/// Messages from the gateway. Optional fields (`Option`s and `details`) may be left out;
/// unknown fields are refused.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(
    tag = "type",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum ServerMessage {
    /// The first message on every connection: the limits the client must respect.
    Hello {
        version: u32,
        max_segment_bytes: u64,
        credit_window: u64,
        max_streams: u32,
        max_message_bytes: u64,
    },
    FlightInfo {
        stream: u32,
        info: FlightInfo,
    },
    PollInfo {
        stream: u32,
        #[serde(skip_serializing_if = "Option::is_none")]
        info: Option<FlightInfo>,
        #[serde(skip_serializing_if = "Option::is_none")]
        descriptor: Option<Descriptor>,
        #[serde(skip_serializing_if = "Option::is_none")]
        progress: Option<f64>,
        #[serde(skip_serializing_if = "Option::is_none")]
        expiration_time_ms: Option<i64>,
    },
    /// A GetSchema result: an encapsulated IPC schema message.
    Schema {
        stream: u32,
        #[serde(with = "b64")]
        schema: Vec<u8>,
    },
    Handshake {
        stream: u32,
        #[serde(with = "b64")]
        payload: Vec<u8>,
    },
    /// One DoAction result.
    Result {
        stream: u32,
        #[serde(with = "b64")]
        body: Vec<u8>,
    },
    ActionType {
        stream: u32,
        name: String,
        description: String,
    },
    PutResult {
        stream: u32,
        #[serde(with = "b64")]
        app_metadata: Vec<u8>,
    },
    /// Credit for the client's DoPut bytes.
    Credit {
        stream: u32,
        bytes: u64,
    },
    /// The last message of every stream. `code` 0 is success; anything else is an error.
    Status {
        stream: u32,
        code: i32,
        name: String,
        message: String,
        #[serde(with = "b64")]
        details: Vec<u8>,
    },
    /// A protocol violation; the gateway closes the connection after it.
    Error {
        message: String,
    },
}

impl ClientMessage {
    /// Parses a text frame.
    pub fn from_json(text: &str) -> Result<Self> {
        serde_json::from_str(text).map_err(|e| ProtocolError::BadControl(e.to_string()))
    }

    /// The stream a request or stream message names (`auth` names none).
    pub fn stream(&self) -> Option<u32> {
        use ClientMessage::*;
        match self {
            Auth { .. } => None,
            Handshake { stream, .. }
            | BasicAuth { stream, .. }
            | ListFlights { stream, .. }
            | GetFlightInfo { stream, .. }
            | PollFlightInfo { stream, .. }
            | GetSchema { stream, .. }
            | DoGet { stream, .. }
            | DoPut { stream, .. }
            | End { stream }
            | DoAction { stream, .. }
            | ListActions { stream }
            | Cancel { stream }
            | Credit { stream, .. } => Some(*stream),
        }
    }

    /// Names stream `id` in a request or stream message (`auth` names none).
    pub fn set_stream(&mut self, id: u32) {
        use ClientMessage::*;
        match self {
            Auth { .. } => {}
            Handshake { stream, .. }
            | BasicAuth { stream, .. }
            | ListFlights { stream, .. }
            | GetFlightInfo { stream, .. }
            | PollFlightInfo { stream, .. }
            | GetSchema { stream, .. }
            | DoGet { stream, .. }
            | DoPut { stream, .. }
            | End { stream }
            | DoAction { stream, .. }
            | ListActions { stream }
            | Cancel { stream }
            | Credit { stream, .. } => *stream = id,
        }
    }

    /// The text frame for this message.
    pub fn to_json(&self) -> Result<String> {
        serde_json::to_string(self).map_err(|e| ProtocolError::BadControl(e.to_string()))
    }
}

impl ServerMessage {
    /// Parses a text frame. Unknown fields and a key given twice are errors.
    pub fn from_json(text: &str) -> Result<Self> {
        Self::read(text).map_err(|e| ProtocolError::BadControl(e.to_string()))
    }

    /// Read field by field instead of derived: see `super::fields` for why.
    fn read(text: &str) -> serde_json::Result<Self> {
        use ServerMessage as M;
        let mut f = Fields::parse(text)?;
        let kind: String = f.take("type")?;
        let message = match kind.as_str() {
            "hello" => M::Hello {
                version: f.take("version")?,
                max_segment_bytes: f.take("maxSegmentBytes")?,
                credit_window: f.take("creditWindow")?,
                max_streams: f.take("maxStreams")?,
                max_message_bytes: f.take("maxMessageBytes")?,
            },
            "flightInfo" => M::FlightInfo {
                stream: f.take("stream")?,
                info: f.take("info")?,
            },
            "pollInfo" => M::PollInfo {
                stream: f.take("stream")?,
                info: f.take_or_default("info")?,
                descriptor: f.take_or_default("descriptor")?,
                progress: f.take_or_default("progress")?,
                expiration_time_ms: f.take_or_default("expirationTimeMs")?,
            },
            "schema" => M::Schema {
                stream: f.take("stream")?,
                schema: f.take::<Base64>("schema")?.0,
            },
            "handshake" => M::Handshake {
                stream: f.take("stream")?,
                payload: f.take::<Base64>("payload")?.0,
            },
            "result" => M::Result {
                stream: f.take("stream")?,
                body: f.take::<Base64>("body")?.0,
            },
            "actionType" => M::ActionType {
                stream: f.take("stream")?,
                name: f.take("name")?,
                description: f.take("description")?,
            },
            "putResult" => M::PutResult {
                stream: f.take("stream")?,
                app_metadata: f.take::<Base64>("appMetadata")?.0,
            },
            "credit" => M::Credit {
                stream: f.take("stream")?,
                bytes: f.take("bytes")?,
            },
            "status" => M::Status {
                stream: f.take("stream")?,
                code: f.take("code")?,
                name: f.take("name")?,
                message: f.take("message")?,
                details: f.take_or_default::<Base64>("details")?.0,
            },
            "error" => M::Error {
                message: f.take("message")?,
            },
            other => return Err(serde::de::Error::unknown_variant(other, SERVER_TYPES)),
        };
        f.finish(&format!("a `{kind}` message"))?;
        Ok(message)
    }

    /// The text frame for this message.
    pub fn to_json(&self) -> Result<String> {
        serde_json::to_string(self).map_err(|e| ProtocolError::BadControl(e.to_string()))
    }
}

/// Why a PollInfo breaks Flight.proto, if it does: a progress, when known, must be from 0
/// to 1, and a complete query (no retry descriptor) must give its FlightInfo. The gateway
/// holds its server's PollInfo to this before it sends `pollInfo` (a NaN would cross JSON
/// as `null`).
pub fn check_poll_info(
    info: Option<&FlightInfo>,
    descriptor: Option<&Descriptor>,
    progress: Option<f64>,
) -> std::result::Result<(), String> {
    if let Some(p) = progress.filter(|p| !(0.0..=1.0).contains(p)) {
        return Err(format!(
            "progress must be from 0 to 1 when known, found {p}"
        ));
    }
    if info.is_none() && descriptor.is_none() {
        let reason = "a complete query (no retry descriptor) must give its FlightInfo, \
                      found neither";
        return Err(reason.into());
    }
    Ok(())
}

/// The name of a gRPC/Flight status code, as carried in `status.name`.
pub fn code_name(code: i32) -> &'static str {
    const NAMES: [&str; 17] = [
        "OK",
        "CANCELLED",
        "UNKNOWN",
        "INVALID_ARGUMENT",
        "DEADLINE_EXCEEDED",
        "NOT_FOUND",
        "ALREADY_EXISTS",
        "PERMISSION_DENIED",
        "RESOURCE_EXHAUSTED",
        "FAILED_PRECONDITION",
        "ABORTED",
        "OUT_OF_RANGE",
        "UNIMPLEMENTED",
        "INTERNAL",
        "UNAVAILABLE",
        "DATA_LOSS",
        "UNAUTHENTICATED",
    ];
    usize::try_from(code)
        .ok()
        .and_then(|i| NAMES.get(i))
        .copied()
        .unwrap_or("UNKNOWN")
}

/// The `type` of each [`ServerMessage`], for the error that names an unknown one.
const SERVER_TYPES: &[&str] = &[
    "hello",
    "flightInfo",
    "pollInfo",
    "schema",
    "handshake",
    "result",
    "actionType",
    "putResult",
    "credit",
    "status",
    "error",
];

/// A base64 field of a message read with [`Fields`].
#[derive(Default)]
struct Base64(Vec<u8>);

impl<'de> Deserialize<'de> for Base64 {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        b64::deserialize(d).map(Base64)
    }
}

/// Base64 for `Vec<u8>` fields.
mod b64 {
    use base64::engine::general_purpose::STANDARD;
    use base64::Engine;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(bytes: &[u8], s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&STANDARD.encode(bytes))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u8>, D::Error> {
        let text = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        STANDARD
            .decode(text.as_bytes())
            .map_err(|e| serde::de::Error::custom(format!("expected base64, {e}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::TestResult;

    #[test]
    fn client_messages_round_trip() -> TestResult {
        let msgs = [
            ClientMessage::Auth { token: "t".into() },
            ClientMessage::BasicAuth {
                stream: 2,
                username: "ann".into(),
                password: Password("pw".into()),
            },
            ClientMessage::DoGet {
                stream: 3,
                ticket: b"rows=10".to_vec(),
                location: Some("grpc://127.0.0.1:1".into()),
                credit: Some(1 << 20),
            },
            ClientMessage::GetFlightInfo {
                stream: 1,
                descriptor: Descriptor::Path(vec!["a".into()]),
            },
            ClientMessage::DoPut {
                stream: 5,
                descriptor: Descriptor::Cmd(vec![0, 255]),
            },
            ClientMessage::DoAction {
                stream: 6,
                action: "clear".into(),
                body: vec![],
            },
            ClientMessage::Credit {
                stream: 3,
                bytes: 7,
            },
            ClientMessage::Cancel { stream: 3 },
            ClientMessage::End { stream: 5 },
        ];
        for m in msgs {
            let json = m.to_json()?;
            assert_eq!(ClientMessage::from_json(&json)?, m, "{json}");
        }
        Ok(())
    }

    #[test]
    fn basic_auth_keeps_its_password_out_of_debug_output() -> TestResult {
        let m = ClientMessage::from_json(
            r#"{"type":"basicAuth","stream":1,"username":"ann","password":"s3cret"}"#,
        )?;
        assert_eq!(m.stream(), Some(1));
        assert_eq!(
            format!("{m:?}"),
            r#"BasicAuth { stream: 1, username: "ann", password: Password(hidden) }"#
        );
        Ok(())
    }

    #[test]
    fn wire_shapes_are_stable() -> TestResult {
        let m = ClientMessage::from_json(
            r#"{"type":"doGet","stream":3,"ticket":"AAE=","location":"grpc://h:1"}"#,
        )?;
        assert_eq!(
            m,
            ClientMessage::DoGet {
                stream: 3,
                ticket: vec![0, 1],
                location: Some("grpc://h:1".into()),
                credit: None
            }
        );
        assert_eq!(m.stream(), Some(3));
        let d = ClientMessage::from_json(
            r#"{"type":"getSchema","stream":1,"descriptor":{"cmd":"AQ=="}}"#,
        )?;
        assert_eq!(
            d,
            ClientMessage::GetSchema {
                stream: 1,
                descriptor: Descriptor::Cmd(vec![1])
            }
        );
        let s = ServerMessage::Status {
            stream: 9,
            code: 16,
            name: code_name(16).into(),
            message: "bad token".into(),
            details: vec![],
        };
        assert_eq!(
            s.to_json()?,
            r#"{"type":"status","stream":9,"code":16,"name":"UNAUTHENTICATED","message":"bad token","details":""}"#
        );
        let h = ServerMessage::Hello {
            version: 1,
            max_segment_bytes: 8,
            credit_window: 16,
            max_streams: 2,
            max_message_bytes: 32,
        };
        assert_eq!(
            h.to_json()?,
            r#"{"type":"hello","version":1,"maxSegmentBytes":8,"creditWindow":16,"maxStreams":2,"maxMessageBytes":32}"#
        );
        assert_eq!(ServerMessage::from_json(&h.to_json()?)?, h);
        Ok(())
    }

    #[test]
    fn flight_info_round_trip() -> TestResult {
        let info = FlightInfo {
            schema: vec![1, 2, 3],
            descriptor: Some(Descriptor::Path(vec!["x".into()])),
            endpoints: vec![Endpoint {
                ticket: b"t".to_vec(),
                locations: vec!["grpc://127.0.0.1:5000".into()],
                expiration_time_ms: Some(1_700_000_000_000),
                app_metadata: vec![],
            }],
            total_records: -1,
            total_bytes: -1,
            ordered: true,
            app_metadata: vec![9],
        };
        let m = ServerMessage::FlightInfo { stream: 2, info };
        let json = m.to_json()?;
        assert!(
            json.contains(r#""expirationTimeMs":1700000000000"#),
            "{json}"
        );
        assert_eq!(ServerMessage::from_json(&json)?, m);
        Ok(())
    }

    fn bad(text: &str) -> String {
        ClientMessage::from_json(text).unwrap_err().to_string()
    }

    #[test]
    fn malformed_control() {
        assert!(bad("").starts_with("control message is not valid: EOF"));
        assert!(bad("[1]").starts_with("control message is not valid"));
        assert!(bad(r#"{"type":"doGot","stream":1}"#).contains("unknown variant `doGot`"));
        assert!(bad(r#"{"type":"doGet","stream":1}"#).contains("missing field `ticket`"));
        assert!(bad(r#"{"type":"doGet","stream":1,"ticket":"***"}"#).contains("expected base64"));
        assert!(bad(r#"{"type":"doGet","stream":-1,"ticket":""}"#).contains("invalid value"));
        assert!(bad(r#"{"type":"credit","stream":1,"bytes":1e99}"#).contains("invalid type"));
        assert!(bad(r#"{"type":"cancel","stream":1,"extra":0}"#).contains("unknown field `extra`"));
        assert!(
            bad(r#"{"type":"getSchema","stream":1,"descriptor":{"path":["a"],"cmd":""}}"#)
                .starts_with("control message is not valid")
        );
    }

    #[test]
    fn server_messages_round_trip() -> TestResult {
        let info = FlightInfo {
            schema: vec![1, 2],
            descriptor: Some(Descriptor::Cmd(vec![7])),
            endpoints: vec![Endpoint {
                ticket: vec![3],
                locations: vec!["grpc://h:1".into()],
                expiration_time_ms: Some(5),
                app_metadata: vec![4],
            }],
            total_records: 10,
            total_bytes: -1,
            ordered: false,
            app_metadata: vec![],
        };
        let msgs = [
            ServerMessage::FlightInfo {
                stream: 1,
                info: info.clone(),
            },
            ServerMessage::PollInfo {
                stream: 2,
                info: Some(info),
                descriptor: Some(Descriptor::Path(vec!["p".into()])),
                progress: Some(0.5),
                expiration_time_ms: Some(9),
            },
            ServerMessage::PollInfo {
                stream: 2,
                info: None,
                descriptor: None,
                progress: None,
                expiration_time_ms: None,
            },
            ServerMessage::Schema {
                stream: 3,
                schema: vec![0, 255],
            },
            ServerMessage::Handshake {
                stream: 4,
                payload: b"hi".to_vec(),
            },
            ServerMessage::Result {
                stream: 5,
                body: vec![1],
            },
            ServerMessage::ActionType {
                stream: 6,
                name: "clear".into(),
                description: "empties it".into(),
            },
            ServerMessage::PutResult {
                stream: 7,
                app_metadata: vec![2],
            },
            ServerMessage::Credit {
                stream: 8,
                bytes: 1 << 40,
            },
            ServerMessage::Status {
                stream: 9,
                code: 5,
                name: code_name(5).into(),
                message: "no such flight".into(),
                details: vec![8, 9],
            },
            ServerMessage::Error {
                message: "bad".into(),
            },
        ];
        for m in msgs {
            let json = m.to_json()?;
            assert_eq!(ServerMessage::from_json(&json)?, m, "{json}");
        }
        Ok(())
    }

    #[test]
    fn server_messages_leave_out_optional_fields_in_any_order() -> TestResult {
        let status = r#"{"stream":1,"message":"","name":"OK","code":0,"type":"status"}"#;
        assert_eq!(
            ServerMessage::from_json(status)?,
            ServerMessage::Status {
                stream: 1,
                code: 0,
                name: "OK".into(),
                message: String::new(),
                details: vec![],
            }
        );
        let info = r#"{"type":"flightInfo","stream":2,"info":{"schema":"AQ==","endpoints":
            [{"ticket":"Ag=="}],"totalRecords":1,"totalBytes":2,"ordered":true}}"#;
        let ServerMessage::FlightInfo { info, .. } = ServerMessage::from_json(info)? else {
            panic!("not a flightInfo");
        };
        assert_eq!((info.descriptor, info.app_metadata), (None, vec![]));
        assert_eq!(
            info.endpoints,
            [Endpoint {
                ticket: vec![2],
                locations: vec![],
                expiration_time_ms: None,
                app_metadata: vec![],
            }]
        );
        let poll = r#"{"type":"pollInfo","stream":3,"info":null,"progress":null}"#;
        assert_eq!(
            ServerMessage::from_json(poll)?,
            ServerMessage::PollInfo {
                stream: 3,
                info: None,
                descriptor: None,
                progress: None,
                expiration_time_ms: None,
            }
        );
        Ok(())
    }

    fn bad_server(text: &str) -> String {
        ServerMessage::from_json(text).unwrap_err().to_string()
    }

    #[test]
    fn malformed_server_control() {
        let cases = [
            ("", "EOF while parsing a value at line 1 column 0"),
            (
                "[1]",
                "invalid type: sequence, expected a JSON object at line 1 column 0",
            ),
            ("{}", "missing field `type`"),
            (
                r#"{"type":1}"#,
                "field `type`: invalid type: integer `1`, expected a string",
            ),
            (
                r#"{"type":"hullo"}"#,
                "unknown variant `hullo`, expected one of `hello`, `flightInfo`, `pollInfo`, \
                 `schema`, `handshake`, `result`, `actionType`, `putResult`, `credit`, \
                 `status`, `error`",
            ),
            (r#"{"type":"credit","stream":1}"#, "missing field `bytes`"),
            (
                r#"{"type":"credit","stream":1,"bytes":2,"extra":0}"#,
                "unknown field `extra`: a `credit` message has only `type`, `stream`, `bytes`",
            ),
            (
                r#"{"type":"credit","stream":"1","bytes":2}"#,
                "field `stream`: invalid type: string \"1\", expected u32",
            ),
            (
                r#"{"type":"credit","stream":1,"bytes":-2}"#,
                "field `bytes`: invalid value: integer `-2`, expected u64",
            ),
            (
                r#"{"type":"credit","stream":1,"stream":2,"bytes":2}"#,
                "duplicate field `stream` at line 1 column 38",
            ),
            (
                r#"{"type":"schema","stream":1,"schema":"***"}"#,
                "field `schema`: expected base64, Invalid symbol 42, offset 0.",
            ),
            (
                r#"{"type":"flightInfo","stream":1,"info":{"schema":"","endpoints":[{}],
                "totalRecords":0,"totalBytes":0,"ordered":true}}"#,
                "field `info`: field `endpoints`: missing field `ticket`",
            ),
            (
                r#"{"type":"flightInfo","stream":1,"info":{"schema":"","endpoints":[],
                "totalRecords":0,"totalBytes":0,"ordered":true,"x":0}}"#,
                "field `info`: unknown field `x`: a FlightInfo has only `schema`, \
                 `descriptor`, `endpoints`, `totalRecords`, `totalBytes`, `ordered`, \
                 `appMetadata`",
            ),
        ];
        for (text, reason) in cases {
            assert_eq!(
                bad_server(text),
                format!("control message is not valid: {reason}"),
                "{text}"
            );
        }
    }

    #[test]
    fn poll_info_rules() {
        let info = FlightInfo {
            schema: vec![],
            descriptor: None,
            endpoints: vec![],
            total_records: -1,
            total_bytes: -1,
            ordered: false,
            app_metadata: vec![],
        };
        let retry = Descriptor::Cmd(vec![1]);
        let check = |info, descriptor, progress| check_poll_info(info, descriptor, progress);
        assert_eq!(check(Some(&info), None, Some(1.0)), Ok(()));
        assert_eq!(check(None, Some(&retry), Some(0.0)), Ok(()));
        assert_eq!(check(Some(&info), Some(&retry), None), Ok(()));
        for (p, shown) in [
            (1.5, "1.5"),
            (-0.1, "-0.1"),
            (f64::NAN, "NaN"),
            (f64::INFINITY, "inf"),
        ] {
            assert_eq!(
                check(Some(&info), Some(&retry), Some(p)),
                Err(format!(
                    "progress must be from 0 to 1 when known, found {shown}"
                ))
            );
        }
        assert_eq!(
            check(None, None, Some(1.0)),
            Err(
                "a complete query (no retry descriptor) must give its FlightInfo, found neither"
                    .into()
            )
        );
    }

    #[test]
    fn code_names() {
        assert_eq!(code_name(0), "OK");
        assert_eq!(code_name(16), "UNAUTHENTICATED");
        assert_eq!(code_name(17), "UNKNOWN");
        assert_eq!(code_name(-1), "UNKNOWN");
    }
}
