//! Test helpers: pyarrow Flight servers as child processes, an in-process gateway, and a
//! small WebSocket client that speaks `quiver-flight.v1`.

// Each test binary includes this module and uses a different part of it.
#![allow(dead_code)]

pub mod certs;

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Cursor};
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc as std_mpsc;
use std::time::{Duration, Instant};

use arrow_array::RecordBatch;
use futures::{SinkExt, StreamExt};
use quiver::flight::control::{ClientMessage, ServerMessage};
use quiver::flight::frame::{self, Flags, Frame, FrameKind};
use quiver::flight::message::{prefix, Splitter};
use quiver::flight::SUBPROTOCOL;
use quiver_gateway::Config;
use tokio::net::{TcpListener, TcpStream};
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::http::HeaderValue;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{Connector, MaybeTlsStream, WebSocketStream};

/// How long any single wait in a test may take.
pub const WAIT: Duration = Duration::from_secs(20);

/// A listening port that a test expects the gateway never to dial.
pub struct UndialledUpstream {
    listener: std::net::TcpListener,
    pub location: String,
}

impl UndialledUpstream {
    pub fn bind() -> UndialledUpstream {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        listener.set_nonblocking(true).expect("nonblocking");
        let location = format!("grpc://{}", listener.local_addr().expect("addr"));
        UndialledUpstream { listener, location }
    }

    /// Fails the test if a connection reached the accept queue.
    pub fn assert_never_dialled(&self) {
        let dialled = self.listener.accept();
        assert_eq!(
            dialled.map_err(|e| e.kind()).err(),
            Some(std::io::ErrorKind::WouldBlock),
            "the gateway dialled {}",
            self.location
        );
    }
}

/// A `gateway/tests/flight_server.py` process, killed on drop.
pub struct Upstream {
    child: Child,
    pub port: u16,
    events: std_mpsc::Receiver<String>,
}

impl Upstream {
    pub fn start(args: &[&str]) -> Upstream {
        let dir = env!("CARGO_MANIFEST_DIR");
        let python =
            std::env::var("QUIVER_PYTHON").unwrap_or_else(|_| format!("{dir}/../.venv/bin/python"));
        let mut child = Command::new(&python)
            .arg(format!("{dir}/tests/flight_server.py"))
            .args(["--lifetime", "170"])
            .args(args)
            .stdout(Stdio::piped())
            .stdin(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {python} (run pkg-scripts/setup.sh): {e}"));
        let stdout = child.stdout.take().expect("stdout is piped");
        let (tx, events) = std_mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let first = events
            .recv_timeout(WAIT)
            .expect("flight_server.py printed its port");
        let port = first
            .strip_prefix("PORT ")
            .and_then(|p| p.parse().ok())
            .unwrap_or_else(|| panic!("expected PORT <n>, found {first:?}"));
        Upstream {
            child,
            port,
            events,
        }
    }

    pub fn location(&self) -> String {
        format!("grpc://127.0.0.1:{}", self.port)
    }

    /// Waits up to `within` for the server to print `line`.
    pub fn saw(&self, line: &str, within: Duration) -> bool {
        let deadline = Instant::now() + within;
        while let Some(left) = deadline.checked_duration_since(Instant::now()) {
            match self.events.recv_timeout(left) {
                Ok(l) if l == line => return true,
                Ok(_) => {}
                Err(_) => return false,
            }
        }
        false
    }

    /// Waits up to `within` for the server to print each of `lines`, in any order;
    /// returns those it did not print.
    pub fn missing(&self, lines: &[String], within: Duration) -> Vec<String> {
        let deadline = Instant::now() + within;
        let mut missing = lines.to_vec();
        while !missing.is_empty() {
            let Some(left) = deadline.checked_duration_since(Instant::now()) else {
                break;
            };
            match self.events.recv_timeout(left) {
                Ok(l) => {
                    if !missing.contains(&l) {
                        // Shown when the test fails: what the server did instead.
                        eprintln!("upstream printed: {l}");
                    }
                    missing.retain(|m| *m != l)
                }
                Err(_) => break,
            }
        }
        missing
    }
}

impl Drop for Upstream {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A test configuration: small segments and window, so that messages span frames and
/// credit runs out during a stream.
pub fn config(upstream: &Upstream) -> Config {
    let mut c = Config::new(upstream.location());
    c.max_segment_bytes = 64 << 10;
    c.credit_window = 256 << 10;
    c
}

/// Starts a gateway on an ephemeral port.
pub async fn gateway(config: Config) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(quiver_gateway::serve(config, listener));
    addr
}

/// The gateway binary as a child process (to measure its memory), killed on drop.
pub struct GatewayProcess {
    child: Child,
    pub addr: SocketAddr,
}

impl GatewayProcess {
    pub fn start(args: &[&str]) -> GatewayProcess {
        GatewayProcess::start_with_env(args, &[])
    }

    /// Starts the gateway with `env` added to its environment.
    pub fn start_with_env(args: &[&str], env: &[(&str, &str)]) -> GatewayProcess {
        let mut child = Command::new(env!("CARGO_BIN_EXE_quiver-gateway"))
            .args(["--listen", "127.0.0.1:0"])
            .args(args)
            .envs(env.iter().copied())
            .stderr(Stdio::piped())
            .stdin(Stdio::null())
            .spawn()
            .expect("start quiver-gateway");
        let stderr = child.stderr.take().expect("stderr is piped");
        let (tx, rx) = std_mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                let addr = line
                    .strip_prefix("quiver-gateway: ws://")
                    .or_else(|| line.strip_prefix("quiver-gateway: wss://"))
                    .and_then(|rest| rest.split_once("/flight"))
                    .and_then(|(addr, _)| addr.parse::<SocketAddr>().ok());
                if let Some(addr) = addr {
                    let _ = tx.send(addr);
                }
            }
        });
        let addr = rx
            .recv_timeout(WAIT)
            .expect("the gateway printed its address");
        GatewayProcess { child, addr }
    }

    /// Resident memory of the gateway process.
    pub fn rss_bytes(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))
            .unwrap_or_default();
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.trim().trim_end_matches(" kB").parse::<u64>().ok())
            .map_or(0, |kb| kb * 1024)
    }
}

impl Drop for GatewayProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub enum Event {
    Json(ServerMessage),
    Frame {
        stream: u32,
        kind: FrameKind,
        first: bool,
        last: bool,
        app_metadata: Vec<u8>,
        ipc: Vec<u8>,
    },
    Closed(Option<(u16, String)>),
}

/// What one DoGet delivered.
#[derive(Default, Debug)]
pub struct Download {
    pub ipc: Vec<u8>,
    /// Non-empty `app_metadata`, in order, from data and metadata frames.
    pub app_metadata: Vec<Vec<u8>>,
    pub frames: usize,
    pub largest_frame: usize,
    pub code: i32,
    pub message: String,
}

impl Download {
    pub fn batches(&self) -> Vec<RecordBatch> {
        decode(&self.ipc)
    }
}

pub fn decode(ipc: &[u8]) -> Vec<RecordBatch> {
    arrow_ipc::reader::StreamReader::try_new(Cursor::new(ipc), None)
        .expect("IPC stream")
        .collect::<Result<_, _>>()
        .expect("valid batches")
}

pub struct Ws {
    ws: WebSocketStream<MaybeTlsStream<TcpStream>>,
    pub hello: ServerMessage,
}

impl Ws {
    /// Connects to a new gateway with the test configuration for `upstream`.
    pub async fn to_gateway_for(upstream: &Upstream) -> Ws {
        Ws::connect(gateway(config(upstream)).await, None)
            .await
            .expect("connect")
    }

    pub async fn connect(
        addr: SocketAddr,
        origin: Option<&str>,
    ) -> Result<Ws, tokio_tungstenite::tungstenite::Error> {
        Ws::connect_from(addr, origin, None).await
    }

    /// Connects from the local address `from` (another loopback address is another
    /// client IP to the gateway).
    pub async fn connect_from(
        addr: SocketAddr,
        origin: Option<&str>,
        from: Option<std::net::IpAddr>,
    ) -> Result<Ws, tokio_tungstenite::tungstenite::Error> {
        let mut req = format!("ws://{addr}/flight").into_client_request()?;
        req.headers_mut().insert(
            "sec-websocket-protocol",
            HeaderValue::from_static(SUBPROTOCOL),
        );
        if let Some(origin) = origin {
            req.headers_mut()
                .insert("origin", HeaderValue::from_str(origin).expect("origin"));
        }
        let socket = tokio::net::TcpSocket::new_v4()?;
        if let Some(ip) = from {
            socket.bind(SocketAddr::new(ip, 0))?;
        }
        let tcp = socket.connect(addr).await?;
        let (ws, _) = tokio_tungstenite::client_async(req, MaybeTlsStream::Plain(tcp)).await?;
        Ok(Ws::after_upgrade(ws).await)
    }

    /// Connects with extra headers on the upgrade request, over `wss://` when `tls`
    /// (a rustls client configuration) is given.
    pub async fn connect_with(
        url: &str,
        headers: &[(&str, &str)],
        tls: Option<std::sync::Arc<tokio_rustls::rustls::ClientConfig>>,
    ) -> Result<Ws, tokio_tungstenite::tungstenite::Error> {
        let mut req = url.into_client_request()?;
        req.headers_mut().insert(
            "sec-websocket-protocol",
            HeaderValue::from_static(SUBPROTOCOL),
        );
        for (name, value) in headers {
            let name = tokio_tungstenite::tungstenite::http::HeaderName::try_from(*name)
                .expect("header name");
            req.headers_mut()
                .append(name, HeaderValue::from_str(value).expect("header value"));
        }
        let authority = req.uri().authority().expect("host:port").as_str();
        let tcp = TcpStream::connect(authority).await?;
        let (ws, _) = tokio_tungstenite::client_async_tls_with_config(
            req,
            tcp,
            None,
            tls.map(Connector::Rustls),
        )
        .await?;
        Ok(Ws::after_upgrade(ws).await)
    }

    /// Reads the hello that opens every connection.
    async fn after_upgrade(ws: WebSocketStream<MaybeTlsStream<TcpStream>>) -> Ws {
        let mut ws = Ws {
            ws,
            hello: ServerMessage::Error {
                message: String::new(),
            },
        };
        match ws.next().await {
            Event::Json(hello @ ServerMessage::Hello { .. }) => ws.hello = hello,
            _ => panic!("expected hello first"),
        }
        ws
    }

    pub async fn send(&mut self, msg: ClientMessage) {
        self.send_raw(Message::Text(msg.to_json().expect("json").into()))
            .await;
    }

    pub async fn send_raw(&mut self, msg: Message) {
        self.ws.send(msg).await.expect("send");
    }

    /// Sends unless the connection is already gone; whether it was sent.
    pub async fn try_send_raw(&mut self, msg: Message) -> bool {
        self.ws.send(msg).await.is_ok()
    }

    pub async fn next(&mut self) -> Event {
        self.next_within(WAIT)
            .await
            .expect("gateway answered in time")
    }

    /// The next event, or `None` if none comes `within`.
    pub async fn next_within(&mut self, within: Duration) -> Option<Event> {
        let deadline = tokio::time::Instant::now() + within;
        Some(loop {
            let msg = tokio::time::timeout_at(deadline, self.ws.next())
                .await
                .ok()?;
            break match msg {
                None | Some(Err(_)) => Event::Closed(None),
                Some(Ok(Message::Close(frame))) => {
                    Event::Closed(frame.map(|f| (f.code.into(), f.reason.to_string())))
                }
                Some(Ok(Message::Text(t))) => {
                    Event::Json(ServerMessage::from_json(&t).expect("server JSON"))
                }
                Some(Ok(Message::Binary(b))) => {
                    let f = Frame::decode(&b, usize::MAX).expect("valid frame");
                    Event::Frame {
                        stream: f.stream,
                        kind: f.kind,
                        first: f.flags.first,
                        last: f.flags.last,
                        app_metadata: f.app_metadata.to_vec(),
                        ipc: f.ipc.to_vec(),
                    }
                }
                Some(Ok(_)) => continue,
            };
        })
    }

    /// The status of `stream`, skipping anything else.
    pub async fn status(&mut self, stream: u32) -> (i32, String) {
        loop {
            if let Event::Json(ServerMessage::Status {
                stream: s,
                code,
                message,
                ..
            }) = self.next().await
            {
                if s == stream {
                    return (code, message);
                }
            }
        }
    }

    /// Reads until the first frame of `stream` arrives, skipping anything else.
    pub async fn first_frame(&mut self, stream: u32) {
        loop {
            if let Event::Frame { stream: s, .. } = self.next().await {
                if s == stream {
                    return;
                }
            }
        }
    }

    /// Sends a DoGet without waiting for its frames.
    pub async fn start_do_get(&mut self, stream: u32, ticket: &str, location: Option<String>) {
        self.send(ClientMessage::DoGet {
            stream,
            ticket: ticket.as_bytes().to_vec(),
            location,
            credit: None,
        })
        .await;
    }

    pub async fn do_get(
        &mut self,
        stream: u32,
        ticket: &str,
        location: Option<String>,
    ) -> Download {
        self.start_do_get(stream, ticket, location).await;
        self.collect(&[stream])
            .await
            .remove(&stream)
            .expect("download")
    }

    /// Reads the streams until each has its status, granting back each frame's bytes.
    pub async fn collect(&mut self, streams: &[u32]) -> HashMap<u32, Download> {
        let mut out: HashMap<u32, Download> =
            streams.iter().map(|s| (*s, Download::default())).collect();
        // Checks that the FIRST/LAST flags match the IPC message boundaries.
        let mut splitters: HashMap<u32, Splitter> = streams
            .iter()
            .map(|s| (*s, Splitter::new(1 << 30)))
            .collect();
        let mut open = streams.len();
        while open > 0 {
            match self.next().await {
                Event::Frame {
                    stream,
                    kind,
                    first,
                    last,
                    app_metadata,
                    ipc,
                } => {
                    let d = out.get_mut(&stream).expect("frame for a stream we opened");
                    let s = splitters.get_mut(&stream).expect("splitter");
                    if kind == FrameKind::Data {
                        s.check_first(first).expect("FIRST on a message boundary");
                        s.push(&ipc, &mut Vec::new()).expect("valid IPC");
                        s.check_last(last).expect("LAST on a message boundary");
                    }
                    let size = app_metadata.len() + ipc.len();
                    d.frames += 1;
                    d.largest_frame = d.largest_frame.max(size);
                    d.ipc.extend_from_slice(&ipc);
                    if !app_metadata.is_empty() {
                        d.app_metadata.push(app_metadata);
                    }
                    self.send(ClientMessage::Credit {
                        stream,
                        bytes: size as u64,
                    })
                    .await;
                }
                Event::Json(ServerMessage::Status {
                    stream,
                    code,
                    message,
                    ..
                }) => {
                    if let Some(d) = out.get_mut(&stream) {
                        d.code = code;
                        d.message = message;
                        open -= 1;
                    }
                }
                Event::Json(_) => {}
                Event::Closed(c) => panic!("connection closed: {c:?}"),
            }
        }
        out
    }

    /// pyarrow's own IPC stream for `ticket` (the server's "dump" action).
    pub async fn reference(&mut self, stream: u32, ticket: &str) -> Vec<RecordBatch> {
        self.send(ClientMessage::DoAction {
            stream,
            action: "dump".into(),
            body: ticket.as_bytes().to_vec(),
        })
        .await;
        let mut body = None;
        loop {
            match self.next().await {
                Event::Json(ServerMessage::Result { body: b, .. }) => body = Some(b),
                Event::Json(ServerMessage::Status { code, message, .. }) => {
                    assert_eq!(code, 0, "dump failed: {message}");
                    break;
                }
                _ => {}
            }
        }
        decode(&body.expect("dump result"))
    }
}

/// Sends the IPC stream `ipc` on DoPut `stream` as frames of at most `segment` bytes, a
/// message at a time with "message i" as message i's app_metadata, within the credit the
/// gateway grants. Returns the IPC bytes sent: all of them, or those sent before no
/// credit came for `patience`.
pub async fn send_frames(
    ws: &mut Ws,
    stream: u32,
    ipc: &[u8],
    segment: usize,
    patience: Duration,
) -> usize {
    let mut messages = Vec::new();
    Splitter::new(1 << 30)
        .push(ipc, &mut messages)
        .expect("split");
    let mut credit = 0u64;
    let mut total = 0;
    for (i, m) in messages.iter().enumerate() {
        let (p, pad) = prefix(m.header.len()).expect("prefix");
        let mut bytes = p.to_vec();
        bytes.extend_from_slice(&m.header);
        bytes.resize(bytes.len() + pad, 0);
        bytes.extend_from_slice(&m.body);
        let meta = format!("message {i}").into_bytes();
        let mut sent = 0;
        while sent < bytes.len() {
            let first = sent == 0;
            let meta_here: &[u8] = if first { &meta } else { &[] };
            let n = (bytes.len() - sent).min(segment - meta_here.len());
            while credit < (n + meta_here.len()) as u64 {
                match ws.next_within(patience).await {
                    Some(Event::Json(ServerMessage::Credit { bytes, .. })) => credit += bytes,
                    Some(Event::Json(ServerMessage::Status { message, .. })) => {
                        panic!("DoPut ended: {message}")
                    }
                    Some(_) => {}
                    None => return total,
                }
            }
            credit -= (n + meta_here.len()) as u64;
            let flags = Flags {
                first,
                last: sent + n == bytes.len(),
            };
            let f = frame::encode(
                stream,
                FrameKind::Data,
                flags,
                meta_here,
                &[&bytes[sent..sent + n]],
            )
            .expect("frame");
            ws.send_raw(Message::Binary(f.into())).await;
            sent += n;
            total += n;
        }
    }
    total
}

/// An IPC stream of `batches` batches of `rows` int64 ids (8 bytes a row), as a DoPut
/// sends it: without the end-of-stream marker, which the client's `end` stands for.
pub fn ids_upload(rows: i64, batches: usize) -> Vec<u8> {
    let ids = arrow_array::Int64Array::from_iter_values(0..rows);
    let batch = RecordBatch::try_from_iter([("id", std::sync::Arc::new(ids) as _)]).expect("batch");
    let mut w =
        arrow_ipc::writer::StreamWriter::try_new(Vec::new(), &batch.schema()).expect("writer");
    for _ in 0..batches {
        w.write(&batch).expect("write");
    }
    let mut ipc = w.into_inner().expect("ipc");
    ipc.truncate(ipc.len() - 8);
    ipc
}
