//! PollFlightInfo and RenewFlightEndpoint (`sql.renewFlightEndpoint`) through the gateway, against an in-process
//! arrow-flight server whose answers each test picks: a query that completes after a
//! few polls, PollInfos that break Flight.proto, and renewed endpoints. (pyarrow 21's
//! FlightServerBase has no PollFlightInfo.) The same server gives the DoGet answer that
//! pyarrow cannot send: a FlightData with a body and no IPC header.

mod support;

use std::net::SocketAddr;

use arrow_flight::flight_service_server::{FlightService, FlightServiceServer};
use arrow_flight::{
    Action, ActionType, Criteria, Empty, FlightData, FlightDescriptor, FlightEndpoint, FlightInfo,
    HandshakeRequest, HandshakeResponse, PollInfo, PutResult, RenewFlightEndpointRequest,
    SchemaResult, Ticket,
};
use futures::stream::{self, BoxStream};
use futures::StreamExt;
use prost::Message;
use quiver::flight::control::{ClientMessage, Descriptor, Endpoint, ServerMessage};
use quiver_gateway::Config;
use support::{gateway, Event, Ws};
use tokio::net::TcpListener;
use tokio_stream::wrappers::TcpListenerStream;
use tonic::{Request, Response, Status, Streaming};

/// Answers PollFlightInfo by its `cmd`: `step=N` is a query at its N-th of 3 polls;
/// `nan`, `over` and `empty` break Flight.proto. RenewFlightEndpoint answers the endpoint
/// a second later, or, for ticket `garbage`, bytes that are no FlightEndpoint.
struct Server;

type Stream<T> = BoxStream<'static, Result<T, Status>>;

fn unimplemented<T>() -> Result<T, Status> {
    Err(Status::unimplemented("not in this test server"))
}

fn info(endpoints: usize) -> FlightInfo {
    FlightInfo {
        endpoint: (0..endpoints)
            .map(|i| FlightEndpoint::new().with_ticket(Ticket::new(format!("part={i}"))))
            .collect(),
        total_records: -1,
        total_bytes: -1,
        ..FlightInfo::default()
    }
}

#[tonic::async_trait]
impl FlightService for Server {
    type HandshakeStream = Stream<HandshakeResponse>;
    type ListFlightsStream = Stream<FlightInfo>;
    type DoGetStream = Stream<FlightData>;
    type DoPutStream = Stream<PutResult>;
    type DoExchangeStream = Stream<FlightData>;
    type DoActionStream = Stream<arrow_flight::Result>;
    type ListActionsStream = Stream<ActionType>;

    async fn poll_flight_info(
        &self,
        request: Request<FlightDescriptor>,
    ) -> Result<Response<PollInfo>, Status> {
        let cmd = String::from_utf8_lossy(&request.into_inner().cmd).into_owned();
        let poll = |info, descriptor: Option<&str>, progress| PollInfo {
            info,
            flight_descriptor: descriptor.map(|d| FlightDescriptor::new_cmd(d.to_string())),
            progress,
            expiration_time: None,
        };
        Ok(Response::new(match cmd.as_str() {
            "step=1" => poll(None, Some("step=2"), Some(0.0)),
            "step=2" => poll(Some(info(1)), Some("step=3"), Some(0.6)),
            "step=3" => poll(Some(info(2)), None, Some(1.0)),
            "nan" => poll(Some(info(1)), Some("nan"), Some(f64::NAN)),
            "over" => poll(Some(info(1)), Some("over"), Some(1.5)),
            "empty" => poll(None, None, None),
            other => return Err(Status::not_found(format!("no query {other}"))),
        }))
    }

    async fn do_action(
        &self,
        request: Request<Action>,
    ) -> Result<Response<Self::DoActionStream>, Status> {
        let action = request.into_inner();
        if action.r#type != "RenewFlightEndpoint" {
            return unimplemented();
        }
        let request = RenewFlightEndpointRequest::decode(action.body)
            .map_err(|e| Status::invalid_argument(e.to_string()))?;
        let mut endpoint = request.endpoint.unwrap_or_default();
        let body = match endpoint.ticket.as_ref().map(|t| t.ticket.as_ref()) {
            Some(b"garbage") => vec![0xff].into(),
            _ => {
                let expires = endpoint
                    .expiration_time
                    .get_or_insert_with(Default::default);
                expires.seconds += 1;
                endpoint.encode_to_vec().into()
            }
        };
        let result = arrow_flight::Result { body };
        Ok(Response::new(stream::iter([Ok(result)]).boxed()))
    }

    async fn handshake(
        &self,
        _: Request<Streaming<HandshakeRequest>>,
    ) -> Result<Response<Self::HandshakeStream>, Status> {
        unimplemented()
    }

    async fn list_flights(
        &self,
        _: Request<Criteria>,
    ) -> Result<Response<Self::ListFlightsStream>, Status> {
        unimplemented()
    }

    async fn get_flight_info(
        &self,
        _: Request<FlightDescriptor>,
    ) -> Result<Response<FlightInfo>, Status> {
        unimplemented()
    }

    async fn get_schema(
        &self,
        _: Request<FlightDescriptor>,
    ) -> Result<Response<SchemaResult>, Status> {
        unimplemented()
    }

    async fn do_get(&self, _: Request<Ticket>) -> Result<Response<Self::DoGetStream>, Status> {
        let headless = FlightData {
            data_body: vec![7; 100].into(),
            ..FlightData::default()
        };
        Ok(Response::new(stream::iter([Ok(headless)]).boxed()))
    }

    async fn do_put(
        &self,
        _: Request<Streaming<FlightData>>,
    ) -> Result<Response<Self::DoPutStream>, Status> {
        unimplemented()
    }

    async fn do_exchange(
        &self,
        _: Request<Streaming<FlightData>>,
    ) -> Result<Response<Self::DoExchangeStream>, Status> {
        unimplemented()
    }

    async fn list_actions(
        &self,
        _: Request<Empty>,
    ) -> Result<Response<Self::ListActionsStream>, Status> {
        unimplemented()
    }
}

/// A gateway in front of a new [`Server`], and a connection to it.
async fn connect() -> Ws {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr: SocketAddr = listener.local_addr().expect("addr");
    tokio::spawn(
        tonic::transport::Server::builder()
            .add_service(FlightServiceServer::new(Server))
            .serve_with_incoming(TcpListenerStream::new(listener)),
    );
    let config = Config::new(format!("grpc://{addr}"));
    Ws::connect(gateway(config).await, None)
        .await
        .expect("connect")
}

/// The answer of call `stream`: its messages before the status, and the status.
async fn answer(ws: &mut Ws, stream: u32) -> (Vec<ServerMessage>, i32, String) {
    let mut messages = Vec::new();
    loop {
        match ws.next().await {
            Event::Json(ServerMessage::Status {
                stream: s,
                code,
                message,
                ..
            }) if s == stream => return (messages, code, message),
            Event::Json(m) => messages.push(m),
            _ => panic!("expected control messages of stream {stream}"),
        }
    }
}

async fn poll(ws: &mut Ws, stream: u32, cmd: &str) -> (Vec<ServerMessage>, i32, String) {
    let descriptor = Descriptor::Cmd(cmd.as_bytes().to_vec());
    ws.send(ClientMessage::PollFlightInfo { stream, descriptor })
        .await;
    answer(ws, stream).await
}

#[tokio::test]
async fn a_query_is_polled_to_its_end() {
    let mut ws = connect().await;
    let mut cmd = b"step=1".to_vec();
    let mut seen = Vec::new();
    for stream in 1.. {
        let (messages, code, message) = poll(&mut ws, stream, &String::from_utf8_lossy(&cmd)).await;
        assert_eq!((code, message.as_str()), (0, ""));
        let [ServerMessage::PollInfo {
            info,
            descriptor,
            progress,
            ..
        }] = messages.as_slice()
        else {
            panic!("expected one pollInfo, found {messages:?}");
        };
        seen.push((*progress, info.as_ref().map(|i| i.endpoints.len())));
        match descriptor {
            Some(Descriptor::Cmd(next)) => cmd = next.clone(),
            None => break,
            Some(other) => panic!("unexpected descriptor {other:?}"),
        }
    }
    assert_eq!(
        seen,
        [
            (Some(0.0), None),
            (Some(0.6), Some(1)),
            (Some(1.0), Some(2))
        ]
    );
}

#[tokio::test]
async fn a_poll_info_that_breaks_flight_proto_fails_the_call() {
    let mut ws = connect().await;
    let reasons = [
        ("nan", "progress must be from 0 to 1 when known, found NaN"),
        ("over", "progress must be from 0 to 1 when known, found 1.5"),
        (
            "empty",
            "a complete query (no retry descriptor) must give its FlightInfo, found neither",
        ),
    ];
    for (stream, (cmd, reason)) in (1..).zip(reasons) {
        let (messages, code, message) = poll(&mut ws, stream, cmd).await;
        assert_eq!(messages, [], "{cmd}");
        assert_eq!(
            (code, message),
            (
                13,
                format!("the server's PollInfo breaks Flight.proto: {reason}")
            ),
            "{cmd}"
        );
    }
    // The server's own error passes as it is.
    let (_, code, message) = poll(&mut ws, 4, "lost").await;
    assert_eq!((code, message.as_str()), (5, "no query lost"));
}

/// Runs `sql.renewFlightEndpoint` on `endpoint`: the result bodies, the status.
async fn renew(ws: &mut Ws, stream: u32, endpoint: &Endpoint) -> (Vec<String>, i32, String) {
    let body = serde_json::json!({ "endpoint": endpoint }).to_string();
    ws.send(ClientMessage::DoAction {
        stream,
        action: "sql.renewFlightEndpoint".into(),
        body: body.into_bytes(),
    })
    .await;
    let (messages, code, message) = answer(ws, stream).await;
    let bodies = messages
        .into_iter()
        .map(|m| match m {
            ServerMessage::Result { body, .. } => String::from_utf8(body).expect("UTF-8"),
            other => panic!("expected results, found {other:?}"),
        })
        .collect();
    (bodies, code, message)
}

#[tokio::test]
async fn renew_flight_endpoint_sends_the_endpoint_and_answers_the_renewed_one() {
    let mut ws = connect().await;
    let endpoint = Endpoint {
        ticket: b"t".to_vec(),
        locations: vec!["grpc://10.0.0.7:32010".into()],
        expiration_time_ms: Some(1_767_225_600_250),
        app_metadata: b"m".to_vec(),
    };
    let (bodies, code, message) = renew(&mut ws, 1, &endpoint).await;
    assert_eq!((code, message.as_str()), (0, ""));
    assert_eq!(
        bodies,
        [
            r#"{"endpoint":{"appMetadata":"bQ==","expirationTimeMs":1767225601250,"locations":["grpc://10.0.0.7:32010"],"ticket":"dA=="}}"#
        ]
    );

    let garbage = Endpoint {
        ticket: b"garbage".to_vec(),
        ..endpoint
    };
    let (bodies, code, message) = renew(&mut ws, 2, &garbage).await;
    assert_eq!(bodies, Vec::<String>::new());
    assert_eq!(
        (code, message.as_str()),
        (
            13,
            "expected a FlightEndpoint from the server, found 1 bytes that do not decode: \
             failed to decode Protobuf message: invalid varint"
        )
    );
}

#[tokio::test]
async fn a_doget_body_without_its_ipc_header_fails_the_call() {
    let mut ws = connect().await;
    ws.start_do_get(1, "headless", None).await;
    assert_eq!(
        ws.status(1).await,
        (
            13,
            "the server sent a FlightData with a body of 100 bytes and no IPC header".into()
        )
    );
}
