//! The gateway under load and faults (issue 8): many clients, slow clients, an upstream
//! that dies mid-stream, and the demo service end to end. Every wait is bounded.

mod support;

use std::time::{Duration, Instant};

use quiver::flight::control::{ClientMessage, Descriptor, ServerMessage};
use quiver::flight::frame::{self, Flags, FrameKind};
use quiver_gateway::demo::{self, Demo, Generated};
use quiver_gateway::Config;
use support::{
    config, gateway, ids_upload, send_frames, Event, GatewayProcess, UndialledUpstream, Upstream,
    Ws,
};
use tokio_tungstenite::tungstenite::Message;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_hundred_clients_at_once() {
    let up = Upstream::start(&[]);
    let mut cfg = config(&up);
    // All of them come from 127.0.0.1 here.
    cfg.max_connections_per_client = cfg.max_connections;
    let addr = gateway(cfg).await;
    let mut ws = Ws::connect(addr, None).await.expect("connect");
    let mut expected = Vec::new();
    for part in 0..4u32 {
        expected.push(ws.reference(part + 1, &format!("data:{part}:2000:3")).await);
    }
    let clients: Vec<_> = (0..200u32)
        .map(|i| {
            tokio::spawn(async move {
                let mut ws = Ws::connect(addr, None).await.expect("connect");
                let d = ws.do_get(1, &format!("data:{}:2000:3", i % 4), None).await;
                assert_eq!(d.code, 0, "client {i}: {}", d.message);
                (i, d.batches())
            })
        })
        .collect();
    let deadline = Duration::from_secs(90);
    for c in clients {
        let (i, batches) = tokio::time::timeout(deadline, c)
            .await
            .expect("in time")
            .expect("client");
        assert_eq!(batches, expected[(i % 4) as usize], "client {i}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_clients_hold_little_and_slow_nobody() {
    let up = Upstream::start(&[]);
    let location = up.location();
    let gw = GatewayProcess::start(&[
        "--upstream",
        &location,
        "--credit-window",
        "262144",
        "--max-segment-bytes",
        "65536",
    ]);
    let addr = gw.addr;
    let mut fast = Ws::connect(addr, None).await.expect("connect");
    let ticket = "data:0:20000:5";
    let expected = fast.reference(1, ticket).await;
    let started = Instant::now();
    assert_eq!(fast.do_get(2, ticket, None).await.batches(), expected);
    let baseline = started.elapsed();

    let before = gw.rss_bytes();
    // Ten clients that never grant credit and ten that grant plenty but never read:
    // each asks for 25 MB.
    let mut slow = Vec::new();
    for i in 0..20u32 {
        let mut ws = Ws::connect(addr, None).await.expect("connect");
        ws.send(ClientMessage::DoGet {
            stream: 1,
            ticket: b"data:0:20000:50".to_vec(),
            location: None,
            credit: (i >= 10).then_some(1 << 30),
        })
        .await;
        slow.push(ws);
    }
    tokio::time::sleep(Duration::from_secs(2)).await;
    let held = gw.rss_bytes().saturating_sub(before);
    // Unbounded buffering would hold 20 x 25 MB. Credit (256 KiB), the socket queue and
    // the HTTP/2 stream window (2 MiB) bound each slow client to a few MiB.
    assert!(held < 80 << 20, "20 slow clients hold {} MiB", held >> 20);

    let started = Instant::now();
    assert_eq!(fast.do_get(3, ticket, None).await.batches(), expected);
    let loaded = started.elapsed();
    assert!(
        // Loose, because the one pyarrow process also feeds the slow clients' buffers
        // and the machine is shared; starvation took a minute before per-client channels.
        loaded < baseline * 5 + Duration::from_secs(3),
        "a DoGet took {loaded:?} beside slow clients, {baseline:?} alone"
    );
    eprintln!(
        "slow clients: {} KiB held by 20, DoGet {baseline:?} alone, {loaded:?} beside them",
        held >> 10
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_stops_reading_is_closed_after_missed_pings() {
    // The demo service makes data faster than the socket takes it; a pyarrow server
    // tells when its call is cancelled.
    let demo = demo::spawn(Demo::default()).await.expect("demo");
    let up = Upstream::start(&[]);
    let mut cfg = Config::new(format!("grpc://{demo}"));
    cfg.allow_locations = vec![up.location()];
    // Long enough for the socket's buffers and the queue to fill before three pass.
    cfg.ping_interval = Duration::from_secs(1);
    let mut ws = Ws::connect(gateway(cfg).await, None)
        .await
        .expect("connect");
    // Gigabytes, with credit for all of them: only the socket holds the stream back.
    ws.send(ClientMessage::DoGet {
        stream: 1,
        ticket: b"rows=65536&batches=100000".to_vec(),
        location: None,
        credit: Some(1 << 30),
    })
    .await;
    ws.start_do_get(2, "slow:stalled", Some(up.location()))
        .await;
    ws.first_frame(2).await;
    // Reading, and sending (a ping, as good as a pong to the gateway), for a while...
    let reading = Instant::now();
    let mut sent = Instant::now();
    while reading.elapsed() < Duration::from_millis(1500) {
        if let Event::Closed(close) = ws.next().await {
            panic!("closed while the client was reading: {close:?}");
        }
        if sent.elapsed() > Duration::from_millis(250) {
            ws.send_raw(Message::Ping(Vec::new().into())).await;
            sent = Instant::now();
        }
    }
    // ...then not: the gateway's queue fills behind the socket within a ping interval.
    // Three missed pings later the gateway must end the connection, and with it the
    // upstream calls, while the client still reads nothing.
    assert!(
        up.saw("CANCELLED stalled", Duration::from_secs(10)),
        "the stalled connection's upstream call was not cancelled within 10 s"
    );
    drop(ws);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn upstream_death_is_unavailable_within_two_seconds() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("free port")
        .port()
        .to_string();
    let up = Upstream::start(&["--port", &port]);
    let lost = format!("upstream connection to {} lost: ", up.location());
    let addr = gateway(config(&up)).await;
    // Several streams on each connection: hyper and h2 notice the loss in different
    // places (reading a body, a frame, the trailers), and each had its own code.
    const STREAMS: u32 = 4;
    let mut clients = Vec::new();
    for i in 0..3 {
        let mut ws = Ws::connect(addr, None).await.expect("connect");
        for stream in 1..=STREAMS {
            ws.start_do_get(stream, &format!("slow:die{i}.{stream}"), None)
                .await;
            ws.first_frame(stream).await;
        }
        clients.push(ws);
    }
    drop(up);
    let killed = Instant::now();
    let deadline = tokio::time::Instant::from_std(killed + Duration::from_secs(2));
    for ws in &mut clients {
        let mut ended = 0;
        while ended < STREAMS {
            let event = tokio::time::timeout_at(deadline, ws.next())
                .await
                .expect("a status for every stream within 2 s");
            if let Event::Json(ServerMessage::Status {
                stream,
                code,
                message,
                ..
            }) = event
            {
                assert_eq!(code, 14, "UNAVAILABLE on stream {stream}: {message}");
                assert!(message.starts_with(&lost), "stream {stream}: {message}");
                ended += 1;
            }
        }
    }
    eprintln!("upstream death reached 3 clients in {:?}", killed.elapsed());
    let _up = Upstream::start(&["--port", &port]);
    let d = clients[0].do_get(STREAMS + 1, "data:0:10:1", None).await;
    assert_eq!(d.code, 0, "after a restart: {}", d.message);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_silent_upstream_fails_calls_after_an_unanswered_ping() {
    // It accepts connections and never answers, as a server gone without a reset (power
    // loss, a partition) looks from here: only HTTP/2 pings can tell.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let mut cfg = Config::new(format!("grpc://{}", silent.local_addr().expect("addr")));
    cfg.upstream_ping_interval = Duration::from_secs(1);
    let mut ws = Ws::connect(gateway(cfg).await, None)
        .await
        .expect("connect");
    let started = Instant::now();
    ws.start_do_get(1, "data:0:10:1", None).await;
    // The gateway's own pings keep the socket busy, so the wait needs a bound of its own.
    let (code, message) = tokio::time::timeout(Duration::from_secs(10), ws.status(1))
        .await
        .expect("a status within 10 s");
    let took = started.elapsed();
    assert_eq!(code, 14, "UNAVAILABLE: {message}");
    // A ping a second in, unanswered a second later.
    assert!(
        (Duration::from_millis(1500)..Duration::from_secs(5)).contains(&took),
        "failed after {took:?}: {message}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn demo_service_end_to_end() {
    let upstream = demo::spawn(Demo::default()).await.expect("demo");
    let mut cfg = Config::new(format!("grpc://{upstream}"));
    cfg.max_segment_bytes = 64 << 10;
    let mut ws = Ws::connect(gateway(cfg).await, None)
        .await
        .expect("connect");

    let cmd = b"rows=1000&batches=3&compression=zstd&partitions=2".to_vec();
    ws.send(ClientMessage::GetFlightInfo {
        stream: 1,
        descriptor: Descriptor::Cmd(cmd),
    })
    .await;
    let Event::Json(ServerMessage::FlightInfo { info, .. }) = ws.next().await else {
        panic!("expected flightInfo");
    };
    assert_eq!(info.total_records, 6000);
    let tickets: Vec<_> = info.endpoints.iter().map(|e| e.ticket.clone()).collect();
    assert_eq!(tickets[1], b"rows=1000&batches=3&compression=zstd&part=1");
    let d = ws
        .do_get(2, std::str::from_utf8(&tickets[1]).expect("utf8"), None)
        .await;
    assert_eq!(d.code, 0, "{}", d.message);
    let g = Generated {
        rows: 1000,
        batches: 3,
        compression: None,
        part: 1,
    };
    let expected: Vec<_> = (0..3).map(|i| g.batch(i).expect("batch")).collect();
    assert_eq!(d.batches(), expected);

    ws.send(ClientMessage::GetSchema {
        stream: 3,
        descriptor: Descriptor::Cmd(b"rows=1".to_vec()),
    })
    .await;
    let Event::Json(ServerMessage::Schema { schema, .. }) = ws.next().await else {
        panic!("expected schema");
    };
    assert_eq!(support::decode(&schema).len(), 0, "a schema-only stream");

    ws.send(ClientMessage::ListFlights {
        stream: 4,
        criteria: vec![],
    })
    .await;
    let mut flights = 0;
    loop {
        match ws.next().await {
            Event::Json(ServerMessage::FlightInfo { .. }) => flights += 1,
            Event::Json(ServerMessage::Status {
                stream: 4, code, ..
            }) => {
                assert_eq!(code, 0);
                break;
            }
            _ => {}
        }
    }
    assert_eq!(flights, 3);

    ws.send(ClientMessage::PollFlightInfo {
        stream: 5,
        descriptor: Descriptor::Cmd(b"rows=10".to_vec()),
    })
    .await;
    let Event::Json(ServerMessage::PollInfo { info, progress, .. }) = ws.next().await else {
        panic!("expected pollInfo");
    };
    assert_eq!(
        (info.map(|i| i.total_records), progress),
        (Some(10 * 16), Some(1.0))
    );

    // A DoPut with a metadata-only message; the demo replays what it stored, so the
    // metadata-only FlightData comes back as a metadata frame.
    ws.send(ClientMessage::DoPut {
        stream: 8,
        descriptor: Descriptor::Path(vec!["mine".into()]),
    })
    .await;
    let mut w =
        arrow_ipc::writer::StreamWriter::try_new(Vec::new(), &demo::schema()).expect("writer");
    w.write(&expected[0]).expect("write");
    let ipc = w.into_inner().expect("bytes");
    let data = frame::encode(8, FrameKind::Data, Flags::WHOLE, b"", &[&ipc]).expect("frame");
    let meta =
        frame::encode(8, FrameKind::Metadata, Flags::WHOLE, b"just metadata", &[]).expect("frame");
    ws.send_raw(Message::Binary(data.into())).await;
    ws.send_raw(Message::Binary(meta.into())).await;
    ws.send(ClientMessage::End { stream: 8 }).await;
    assert_eq!(ws.status(8).await.0, 0);
    let back = ws.do_get(9, "put=mine", None).await;
    assert_eq!(back.code, 0, "{}", back.message);
    assert_eq!(back.batches(), &expected[..1]);
    assert_eq!(back.app_metadata, [b"just metadata".to_vec()]);

    let bad = ws.do_get(10, "rows=lots", None).await;
    assert_eq!(
        (bad.code, bad.message.as_str()),
        (3, "rows must be an integer up to 4194304, found \"lots\"")
    );
    let missing = ws.do_get(11, "put=nothing", None).await;
    assert_eq!(missing.code, 5, "{}", missing.message);
}

/// A gateway whose upstream is never dialled in these tests (nothing listens on port 9).
fn undialled() -> Config {
    Config::new("grpc://127.0.0.1:9")
}

/// Connects until the gateway accepts, for at most `support::WAIT`.
async fn connect_when_room(addr: std::net::SocketAddr) -> Ws {
    let started = Instant::now();
    loop {
        match Ws::connect(addr, None).await {
            Ok(ws) => return ws,
            Err(e) => assert!(
                started.elapsed() < support::WAIT,
                "no room within {:?}: {e}",
                support::WAIT
            ),
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The body of the `503` a WebSocket connection to `addr` gets; panics if it gets in.
async fn refusal(addr: std::net::SocketAddr) -> String {
    let refused = match Ws::connect(addr, None).await {
        Err(tokio_tungstenite::tungstenite::Error::Http(response)) => response,
        Err(e) => panic!("expected a 503 response, got {e}"),
        Ok(_) => panic!("a connection over the limit was accepted"),
    };
    assert_eq!(refused.status(), 503);
    String::from_utf8_lossy(refused.body().as_deref().unwrap_or_default()).into_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connections_over_the_limit_get_503_until_one_closes() {
    let mut cfg = undialled();
    cfg.max_connections = 2;
    let addr = gateway(cfg).await;
    let first = Ws::connect(addr, None).await.expect("first");
    // A plain TCP socket that has sent nothing holds a slot too.
    let idle = tokio::net::TcpStream::connect(addr).await.expect("tcp");
    assert_eq!(
        refusal(addr).await,
        "the gateway is at its limit of 2 connections\n"
    );
    drop(idle);
    let _second = connect_when_room(addr).await;
    drop(first);
    let _third = connect_when_room(addr).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_client_cannot_take_every_connection() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut cfg = undialled();
    cfg.max_connections_per_client = 2;
    let addr = gateway(cfg).await;
    let first = Ws::connect(addr, None).await.expect("first");
    let _second = Ws::connect(addr, None).await.expect("second");
    assert_eq!(
        refusal(addr).await,
        "this client is at its limit of 2 connections\n"
    );
    // Another address (loopback answers all of 127/8) still gets in.
    let other = tokio::net::TcpSocket::new_v4().expect("socket");
    other
        .bind("127.0.0.2:0".parse().unwrap())
        .expect("bind 127.0.0.2");
    let mut other = other.connect(addr).await.expect("connect from 127.0.0.2");
    other
        .write_all(b"GET /nothing-here HTTP/1.1\r\nHost: gateway\r\nConnection: close\r\n\r\n")
        .await
        .expect("write");
    let mut answer = Vec::new();
    tokio::time::timeout(support::WAIT, other.read_to_end(&mut answer))
        .await
        .expect("an answer")
        .expect("read");
    let status = String::from_utf8_lossy(&answer);
    assert!(
        status.starts_with("HTTP/1.1 404"),
        "another client got {status:?}"
    );
    // A connection that closes gives its place back.
    drop(first);
    let _third = connect_when_room(addr).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_head_must_arrive_in_time() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut cfg = undialled();
    cfg.header_timeout = Duration::from_secs(1);
    let addr = gateway(cfg).await;
    let mut ws = Ws::connect(addr, None).await.expect("connect");
    let silent = tokio::net::TcpStream::connect(addr).await.expect("tcp");
    let mut partial = tokio::net::TcpStream::connect(addr).await.expect("tcp");
    partial
        .write_all(b"GET /flight HTTP/1.1\r\nHost: gateway\r\n")
        .await
        .expect("write");
    let started = Instant::now();
    for mut socket in [silent, partial] {
        let mut rest = Vec::new();
        tokio::time::timeout(support::WAIT, socket.read_to_end(&mut rest))
            .await
            .expect("the gateway closes the socket")
            .ok();
    }
    let waited = started.elapsed();
    assert!(
        waited >= Duration::from_millis(900) && waited < Duration::from_secs(5),
        "closed after {waited:?}, the timeout is 1 s"
    );
    // The WebSocket, upgraded before the deadline, still answers after it.
    let denied = ws
        .do_get(1, "data:0:1:1", Some("grpc://127.0.0.1:1".into()))
        .await;
    assert_eq!(denied.code, 7, "PERMISSION_DENIED: {}", denied.message);
}

/// The frames a server sends on a WebSocket, as (opcode, payload), read from raw bytes
/// until the gateway closes the socket. Server frames are unmasked.
fn server_frames(mut bytes: &[u8]) -> Vec<(u8, Vec<u8>)> {
    let mut frames = Vec::new();
    while bytes.len() >= 2 {
        let (opcode, short) = (bytes[0] & 0x0F, (bytes[1] & 0x7F) as usize);
        let (len, header) = match short {
            126 => (u16::from_be_bytes([bytes[2], bytes[3]]) as usize, 4),
            127 => (
                u64::from_be_bytes(bytes[2..10].try_into().unwrap()) as usize,
                10,
            ),
            n => (n, 2),
        };
        frames.push((opcode, bytes[header..header + len].to_vec()));
        bytes = &bytes[header + len..];
    }
    frames
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_never_answers_pings_is_closed() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    const PING: u8 = 0x9;
    const CLOSE: u8 = 0x8;
    let mut cfg = undialled();
    cfg.ping_interval = Duration::from_millis(300);
    let addr = gateway(cfg).await;
    // A WebSocket client that reads everything and writes nothing after its request: no
    // pong, which tungstenite would send by itself.
    let mut socket = tokio::net::TcpStream::connect(addr).await.expect("tcp");
    let request = format!(
        "GET /flight HTTP/1.1\r\nHost: gateway\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
         Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\
         Sec-WebSocket-Protocol: {}\r\n\r\n",
        quiver::flight::SUBPROTOCOL
    );
    socket.write_all(request.as_bytes()).await.expect("write");
    let started = Instant::now();
    let mut received = Vec::new();
    tokio::time::timeout(support::WAIT, socket.read_to_end(&mut received))
        .await
        .expect("the gateway closes the socket")
        .ok();
    let waited = started.elapsed();

    let head_end = received
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("a response head")
        + 4;
    let head = String::from_utf8_lossy(&received[..head_end]);
    assert!(head.starts_with("HTTP/1.1 101"), "{head}");
    let frames = server_frames(&received[head_end..]);
    let pings = frames.iter().filter(|(op, _)| *op == PING).count();
    assert!(pings >= 2, "the gateway sent {pings} pings: {frames:?}");
    let (opcode, payload) = frames.last().expect("frames");
    assert_eq!(*opcode, CLOSE);
    assert_eq!(&payload[..2], 1000u16.to_be_bytes());
    assert_eq!(&payload[2..], b"no answer to pings");
    // Three pings' time of silence, then the close (and the gateway's 2 s wait for the
    // client's close frame, which never comes).
    assert!(
        waited >= Duration::from_millis(900) && waited < Duration::from_secs(5),
        "closed after {waited:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn queued_upload_frames_keep_nothing_of_the_socket_read_buffer() {
    // An upstream that never answers: the upload stops at its first messages, and the
    // frames after them wait in the gateway.
    let silent = UndialledUpstream::bind();
    let gw = GatewayProcess::start(&["--upstream", &silent.location, "--credit-window", "8388608"]);
    let mut ws = Ws::connect(gw.addr, None).await.expect("connect");
    ws.send(ClientMessage::DoPut {
        stream: 1,
        descriptor: Descriptor::Path(vec!["stuck".into()]),
    })
    .await;
    let ipc = ids_upload(12_500, 6);
    let sent = send_frames(&mut ws, 1, &ipc, 64 << 10, Duration::from_secs(2)).await;
    assert_eq!(sent, ipc.len(), "within the 8 MiB of credit");
    // A finished stream, whose frames are read and dropped.
    ws.start_do_get(3, "data:0:1:1", None).await;
    ws.send(ClientMessage::Cancel { stream: 3 }).await;
    assert_eq!(ws.status(3).await.0, 1);
    tokio::time::sleep(Duration::from_millis(500)).await;
    let before = gw.rss_bytes();
    // Each 1-byte frame of the upload, queued, follows a 1 MiB message that made the
    // socket's reader take a new buffer; a slice would keep that buffer.
    let tiny = frame::encode(1, FrameKind::Data, Flags::default(), b"", &[&[0]]).expect("frame");
    let big = frame::encode(
        3,
        FrameKind::Data,
        Flags::WHOLE,
        b"",
        &[&vec![7; (1 << 20) - 64]],
    )
    .expect("frame");
    for _ in 0..400 {
        ws.send_raw(Message::Binary(big.clone().into())).await;
        ws.send_raw(Message::Binary(tiny.clone().into())).await;
    }
    // An answer to a later request: the gateway has read every frame before it.
    ws.start_do_get(5, "data:0:1:1", None).await;
    ws.send(ClientMessage::Cancel { stream: 5 }).await;
    assert_eq!(ws.status(5).await.0, 1);
    let held = gw.rss_bytes().saturating_sub(before);
    assert!(
        held < 64 << 20,
        "400 queued frames of a byte hold {} MiB",
        held >> 20
    );
    ws.send(ClientMessage::Cancel { stream: 1 }).await;
    assert_eq!(ws.status(1).await.0, 1);
}
