//! `Conn`: one WebSocket connection, its limits from `hello` and its open streams. Socket
//! events are dispatched here to the stream they name; a closed connection or a protocol
//! error fails every open stream.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use js_sys::{Array, ArrayBuffer, Function, Uint8Array};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;
use web_sys::{AbortSignal, Event, WebSocket};

use super::call::Call;
use super::deferred::Deferred;
use super::error::{Failure, CANCELLED, INTERNAL, UNAVAILABLE};
use super::get::GetState;
use super::put::PutState;
use super::socket::{Socket, SocketEvent};
use crate::flight::control::{ClientMessage, ServerMessage};
use crate::flight::frame::{Header, HEADER_LEN};
use crate::flight::{ProtocolError, DEFAULT_MAX_SEGMENT_BYTES, VERSION};

pub(super) type ConnRef = Rc<RefCell<Conn>>;

/// How to open a connection; kept so that `fetchAll` can open more like it.
#[derive(Clone)]
pub(super) struct Params {
    pub url: String,
    pub protocols: Array,
    pub constructor: Option<Function>,
    pub token: Option<String>,
}

/// The gateway's limits, from `hello`.
#[derive(Debug, Clone, Copy)]
pub(super) struct Limits {
    pub max_segment: usize,
    pub credit_window: u64,
    /// Streams open at once on one connection; more get RESOURCE_EXHAUSTED.
    pub max_streams: u32,
}

pub(super) enum Stream {
    Call(Call),
    Get(Rc<RefCell<GetState>>),
    Put(Rc<RefCell<PutState>>),
}

pub(super) struct Conn {
    socket: Option<Socket>,
    pub params: Params,
    pub limits: Limits,
    hello: Option<Deferred>,
    next_id: u32,
    streams: HashMap<u32, Stream>,
    failure: Option<Failure>,
}

impl Conn {
    /// Opens the socket and waits for `hello` (or for `signal` to abort); then sends the
    /// token, if any.
    pub async fn connect(params: Params, signal: Option<AbortSignal>) -> Result<ConnRef, Failure> {
        let (hello_promise, hello) = Deferred::new();
        let conn = Rc::new(RefCell::new(Conn {
            socket: None,
            params: params.clone(),
            limits: Limits {
                max_segment: DEFAULT_MAX_SEGMENT_BYTES,
                credit_window: 0,
                max_streams: 1,
            },
            hello: Some(hello),
            next_id: 1,
            streams: HashMap::new(),
            failure: None,
        }));
        // The listeners hold the connection weakly: the socket belongs to the connection,
        // and a strong reference back would keep both alive forever.
        let weak = Rc::downgrade(&conn);
        let socket = Socket::open(
            &params.url,
            &params.protocols,
            params.constructor.as_ref(),
            move |event| {
                if let Some(conn) = weak.upgrade() {
                    on_event(&conn, event);
                }
            },
        )
        .map_err(|e| {
            Failure::new(
                UNAVAILABLE,
                format!(
                    "cannot open a WebSocket to {}: {}",
                    params.url,
                    js_message(&e)
                ),
            )
        })?;
        conn.borrow_mut().socket = Some(socket);
        let watch = signal.map(|signal| ConnectAbort::watch(signal, &conn));
        let hello = JsFuture::from(hello_promise).await;
        drop(watch);
        if hello.is_err() {
            return Err(conn.borrow().failed());
        }
        if let Some(token) = params.token {
            conn.borrow().send(&ClientMessage::Auth { token })?;
        }
        Ok(conn)
    }

    fn failed(&self) -> Failure {
        self.failure
            .clone()
            .unwrap_or_else(|| Failure::new(UNAVAILABLE, "the connection is closed"))
    }

    pub fn ws(&self) -> Result<WebSocket, Failure> {
        match (&self.failure, &self.socket) {
            (None, Some(socket)) => Ok(socket.ws().clone()),
            _ => Err(self.failed()),
        }
    }

    pub fn send(&self, message: &ClientMessage) -> Result<(), Failure> {
        send(&self.ws()?, message)
    }

    /// Sends the request `make(id)` builds for a new stream id and registers the stream
    /// `stream(id)` builds; returns what else `stream` returned (the caller's handle).
    pub fn open<T>(
        &mut self,
        make: impl FnOnce(u32) -> ClientMessage,
        stream: impl FnOnce(u32) -> (Stream, T),
    ) -> Result<T, Failure> {
        let id = self.next_id;
        self.send(&make(id))?;
        self.next_id += 1;
        let (stream, handle) = stream(id);
        self.streams.insert(id, stream);
        Ok(handle)
    }

    /// Ends the connection: every open stream fails with `failure`.
    pub fn close(conn: &ConnRef, failure: Failure) {
        fail_all(conn, failure);
        // Dropped outside any socket event (this is a user call), so the listeners go now.
        let socket = conn.borrow_mut().socket.take();
        drop(socket);
    }
}

impl Drop for Conn {
    fn drop(&mut self) {
        let failure = Failure::new(CANCELLED, "the client was freed");
        for (_, stream) in self.streams.drain() {
            finish(stream, Err(failure.clone()));
        }
    }
}

pub(super) fn send(ws: &WebSocket, message: &ClientMessage) -> Result<(), Failure> {
    let json = message.to_json()?;
    ws.send_with_str(&json)
        .map_err(|e| Failure::new(UNAVAILABLE, format!("cannot send: {}", js_message(&e))))
}

pub(super) fn js_message(e: &JsValue) -> String {
    js_sys::Reflect::get(e, &"message".into())
        .ok()
        .and_then(|m| m.as_string())
        .or_else(|| e.as_string())
        .unwrap_or_else(|| format!("{e:?}"))
}

fn on_event(conn: &ConnRef, event: SocketEvent) {
    match event {
        SocketEvent::Open => {}
        SocketEvent::Text(text) => match ServerMessage::from_json(&text) {
            Ok(message) => on_message(conn, message),
            Err(e) => protocol_error(conn, e),
        },
        SocketEvent::Binary(buffer) => {
            if let Err(e) = on_frame(conn, &buffer) {
                protocol_error(conn, e);
            }
        }
        SocketEvent::Close { code, reason } => {
            let reason = if reason.is_empty() {
                String::new()
            } else {
                format!(", {reason}")
            };
            fail_all(
                conn,
                Failure::new(
                    UNAVAILABLE,
                    format!("the connection closed (code {code}{reason})"),
                ),
            );
        }
    }
}

/// Fails a connection still waiting for `hello` when its signal aborts; stops watching
/// when dropped.
struct ConnectAbort {
    signal: AbortSignal,
    listener: Closure<dyn FnMut(Event)>,
}

impl ConnectAbort {
    fn watch(signal: AbortSignal, conn: &ConnRef) -> Self {
        let weak = Rc::downgrade(conn);
        let listener = Closure::<dyn FnMut(Event)>::new(move |_| {
            if let Some(conn) = weak.upgrade() {
                abort_connect(&conn);
            }
        });
        if signal.aborted() {
            abort_connect(conn);
        } else {
            let _ =
                signal.add_event_listener_with_callback("abort", listener.as_ref().unchecked_ref());
        }
        ConnectAbort { signal, listener }
    }
}

impl Drop for ConnectAbort {
    fn drop(&mut self) {
        let _ = self
            .signal
            .remove_event_listener_with_callback("abort", self.listener.as_ref().unchecked_ref());
    }
}

fn abort_connect(conn: &ConnRef) {
    fail_all(
        conn,
        Failure::new(CANCELLED, "connect was aborted before the gateway's hello"),
    );
    if let Some(socket) = &conn.borrow().socket {
        let _ = socket.ws().close();
    }
}

/// The gateway broke the protocol: fail everything and close with 1002 as it would.
fn protocol_error(conn: &ConnRef, e: ProtocolError) {
    fail_all(conn, e.into());
    if let Some(socket) = &conn.borrow().socket {
        let _ = socket
            .ws()
            .close_with_code_and_reason(1002, "protocol error");
    }
}

fn fail_all(conn: &ConnRef, failure: Failure) {
    let (hello, streams) = {
        let mut c = conn.borrow_mut();
        if c.failure.is_none() {
            c.failure = Some(failure.clone());
        }
        (c.hello.take(), std::mem::take(&mut c.streams))
    };
    if let Some(hello) = hello {
        hello.reject(&failure);
    }
    for (_, stream) in streams {
        finish(stream, Err(failure.clone()));
    }
}

fn finish(stream: Stream, result: Result<(), Failure>) {
    match stream {
        Stream::Call(call) => call.finish(result),
        Stream::Get(get) => GetState::finish(&get, result),
        Stream::Put(put) => put.borrow_mut().finish(result),
    }
}

fn on_message(conn: &ConnRef, message: ServerMessage) {
    use ServerMessage as M;
    match message {
        M::Hello {
            version,
            max_segment_bytes,
            credit_window,
            max_streams,
            ..
        } => {
            // Limits change only before the first request; a frame carries a byte at least.
            let refused = match (conn.borrow().hello.is_some(), version, max_segment_bytes) {
                (false, ..) => Some("a second hello".to_string()),
                (true, VERSION, 0) => {
                    Some("hello: maxSegmentBytes must be at least 1, found 0".into())
                }
                (true, VERSION, _) => None,
                (true, other, _) => Some(format!(
                    "hello: this client speaks protocol version {VERSION}, the gateway {other}"
                )),
            };
            if let Some(refused) = refused {
                return protocol_error(conn, ProtocolError::BadControl(refused));
            }
            let hello = {
                let mut c = conn.borrow_mut();
                c.limits = Limits {
                    max_segment: usize::try_from(max_segment_bytes).unwrap_or(usize::MAX),
                    credit_window,
                    max_streams,
                };
                c.hello.take()
            };
            if let Some(hello) = hello {
                hello.resolve(&JsValue::UNDEFINED);
            }
        }
        M::Error { message } => fail_all(
            conn,
            Failure::new(
                INTERNAL,
                format!("the gateway refused this client: {message}"),
            ),
        ),
        M::Status {
            stream,
            code,
            message,
            details,
            ..
        } => {
            let Some(open) = conn.borrow_mut().streams.remove(&stream) else {
                return;
            };
            let result = match code {
                0 => Ok(()),
                code => Err(Failure {
                    code,
                    message,
                    details,
                }),
            };
            finish(open, result);
        }
        M::Credit { stream, bytes } => {
            let put = match conn.borrow().streams.get(&stream) {
                Some(Stream::Put(put)) => Rc::clone(put),
                _ => return,
            };
            put.borrow_mut().grant(bytes);
        }
        M::PutResult {
            stream,
            app_metadata,
        } => {
            if let Some(Stream::Put(put)) = conn.borrow().streams.get(&stream) {
                put.borrow_mut().result(app_metadata);
            }
        }
        M::FlightInfo { stream, .. }
        | M::PollInfo { stream, .. }
        | M::Schema { stream, .. }
        | M::Handshake { stream, .. }
        | M::Result { stream, .. }
        | M::ActionType { stream, .. } => {
            if let Some(Stream::Call(call)) = conn.borrow_mut().streams.get_mut(&stream) {
                call.push(message);
            }
        }
    }
}

/// A binary frame: the header is read (12 bytes copied), the IPC bytes stay in the
/// received buffer until the stream's decoder copies them into place.
fn on_frame(conn: &ConnRef, buffer: &ArrayBuffer) -> Result<(), ProtocolError> {
    let len = buffer.byte_length() as usize;
    if len < HEADER_LEN {
        return Err(ProtocolError::ShortFrame {
            expected: HEADER_LEN,
            found: len,
        });
    }
    let mut header = [0u8; HEADER_LEN];
    Uint8Array::new_with_byte_offset_and_length(buffer, 0, HEADER_LEN as u32).copy_to(&mut header);
    let max = conn.borrow().limits.max_segment;
    let header = Header::decode(&header, len - HEADER_LEN, max)?;
    let get = match conn.borrow().streams.get(&header.stream) {
        Some(Stream::Get(get)) => Rc::clone(get),
        // Frames of a stream the client already failed (a connection-wide failure).
        _ => return Ok(()),
    };
    let meta_end = HEADER_LEN + header.app_metadata_len;
    // Offsets fit in u32: a WebSocket message is an ArrayBuffer of at most 4 GiB here.
    let ipc = Uint8Array::new_with_byte_offset_and_length(
        buffer,
        meta_end as u32,
        (len - meta_end) as u32,
    );
    GetState::on_frame(&get, &header, &ipc)
}
