//! The Flight-over-WebSocket client as a sans-IO state machine (`docs/protocol.md`).
//!
//! [`Client`] holds the rules of one connection: the gateway's `hello` limits, stream ids,
//! each stream's state, credit and the DoGet budget. It never touches a socket, a timer or
//! a promise. Socket events go in ([`Client::on_text`], [`Client::on_frame`],
//! [`Client::on_close`]) and so do user calls (open a call, read, cancel, write); what to
//! do comes out of [`Client::poll_action`]: text or frames to send, batches to hand over,
//! calls to settle. `src/wasm/flight` runs it on a browser WebSocket.
//!
//! - [`get`]: a DoGet's credit, queue, budget and complete/abandon rules;
//! - [`locations`]: which of an endpoint's locations a DoGet reads, in turn;
//! - [`put`]: a DoPut's frame pump;
//! - [`fetch`]: `fetchAll`'s endpoint scheduling;
//! - [`answers`]: what each call's answer holds;
//! - [`connect`]: the subprotocols and credentials a connection opens with;
//! - [`budget`]: what every DoGet may hold together; [`status`]: why a call failed.

pub mod answers;
pub mod budget;
pub mod connect;
pub mod fetch;
pub mod get;
pub mod locations;
pub mod put;
pub mod status;
mod table;
#[cfg(test)]
mod tests;

use std::ops::Range;
use std::rc::Rc;

pub use self::answers::{Answer, CallKind, PollInfo};
pub use self::budget::Budget;
use self::budget::Reservation;
pub use self::connect::{BasicAuth, Credentials};
pub use self::get::{ArrowBatch, Chunk, Collected, GetStats, GetStream, Next};
pub use self::put::{PutFrame, PutStream};
pub use self::status::Failure;
use self::status::{CANCELLED, INTERNAL, UNAVAILABLE};
use self::table::Table;
use super::control::{ClientMessage, Descriptor, Password, ServerMessage};
use super::frame::{Header, HEADER_LEN};
use super::{ProtocolError, DEFAULT_MAX_SEGMENT_BYTES, VERSION};
use crate::ipc::{ReadLimits, StreamDecoder};

/// What the client asks its runtime to do, in order.
#[derive(Debug)]
pub enum Action {
    /// Send this control message as a text frame.
    Send(String),
    /// Send this binary frame of a DoPut.
    Frame(PutFrame),
    /// `hello` arrived and the basic-auth exchange, if any, succeeded (connect
    /// resolves), or the connection failed before.
    Hello(Result<(), Failure>),
    /// Close the socket with this code: the gateway broke the protocol.
    Close { code: u16, reason: &'static str },
    /// Call `stream` ended: the control messages it received, or its failure.
    Answer {
        stream: u32,
        result: Result<Vec<ServerMessage>, Failure>,
    },
    /// The chunk a waiting `next()` of DoGet `stream` gets.
    Chunk { stream: u32, chunk: Chunk },
    /// DoGet `stream` ended; a waiting `next()` gets this.
    GetEnded {
        stream: u32,
        result: Result<(), Failure>,
    },
    /// DoGet `stream`, which was gathering for `readAll()`, ended.
    Collected { stream: u32, result: Collected },
    /// A frame of DoGet `stream` was taken in.
    Progress { stream: u32 },
    /// Everything written to DoPut `stream` so far was sent.
    PutSent { stream: u32 },
    /// DoPut `stream` ended: each PutResult's `app_metadata`, or its failure.
    PutEnded {
        stream: u32,
        result: Result<Vec<Vec<u8>>, Failure>,
    },
}

/// The queue [`Client::poll_action`] empties from the front. It holds the few actions of
/// one event or call, so a `Vec` does (and costs the wasm module less code).
pub type Actions = Vec<Action>;

impl Action {
    fn send(message: ClientMessage) -> Self {
        // Serialising these messages cannot fail: they hold strings, numbers and bytes.
        Action::Send(message.to_json().unwrap_or_default())
    }
}

/// A caller's misuse of a stream, or a batch the writer refused.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    #[error("{0}")]
    Usage(&'static str),
    /// The upload ended with this failure before the call.
    #[error("the upload failed: {}", .0.message)]
    PutFailed(Failure),
    /// The limit is the gateway's `maxSegmentBytes` or credit window, less an IPC byte
    /// with a batch.
    #[error("app_metadata of {found} bytes is over the {limit} that fit in one frame")]
    AppMetadata { found: usize, limit: usize },
    /// Handles release their stream only when dropped, so a call never finds it gone.
    #[error("stream {0} is gone")]
    Gone(u32),
    #[error(transparent)]
    Encode(#[from] crate::ipc::QuiverError),
}

/// The gateway's limits, from `hello`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    pub max_segment: usize,
    pub credit_window: u64,
    /// Streams open at once on one connection; more get RESOURCE_EXHAUSTED.
    pub max_streams: u32,
    /// The largest IPC message the gateway passes on: a DoGet's decoder refuses a larger
    /// one before allocating it.
    pub max_message: u64,
}

enum Stream {
    /// A call answered by a few control messages and a status.
    Call(Vec<ServerMessage>),
    Get(GetStream),
    Put(PutStream),
    /// The request id under which the gateway answers DoGet `0` at another location.
    Moved(u32),
}

/// One connection to the gateway.
pub struct Client {
    budget: Rc<Budget>,
    limits: Limits,
    /// Until `hello` arrives and the basic-auth exchange, if any, succeeds, or the
    /// connection fails.
    awaiting_hello: bool,
    /// Credentials to send, or to exchange, once `hello` arrives.
    credentials: Credentials,
    /// The stream of the basic-auth exchange while it runs.
    login: Option<u32>,
    failure: Option<Failure>,
    next_id: u32,
    /// Calls until they end; DoGets and DoPuts until they end and their handle is released.
    streams: Table<Stream>,
    actions: Actions,
}

impl Client {
    /// A connection whose socket is opening, which authenticates with `credentials` once
    /// `hello` arrives. Its DoGets hold their bytes against `budget`.
    pub fn new(budget: Rc<Budget>, credentials: Credentials) -> Self {
        Client {
            budget,
            limits: Limits {
                max_segment: DEFAULT_MAX_SEGMENT_BYTES,
                credit_window: 0,
                max_streams: 1,
                max_message: ReadLimits::default().max_message_bytes,
            },
            awaiting_hello: true,
            credentials,
            login: None,
            failure: None,
            next_id: 1,
            streams: Table::new(),
            actions: Vec::new(),
        }
    }

    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// The next thing to do, if any.
    pub fn poll_action(&mut self) -> Option<Action> {
        (!self.actions.is_empty()).then(|| self.actions.remove(0))
    }

    /// Why the connection failed, if it has.
    pub fn failure(&self) -> Option<&Failure> {
        self.failure.as_ref()
    }

    /// Why connect failed: the connection's failure, or, with none recorded, that the
    /// socket is gone.
    pub fn connect_failure(&self) -> Failure {
        let closed = || Failure::new(UNAVAILABLE, "the connection is closed");
        self.failure.clone().unwrap_or_else(closed)
    }

    // Socket events.

    /// A text frame: a control message.
    pub fn on_text(&mut self, text: &str) {
        match ServerMessage::from_json(text) {
            Ok(message) => self.on_message(message),
            Err(e) => self.protocol_error(e),
        }
    }

    /// A binary frame of `frame_len` bytes, of which `head` are the first (up to
    /// [`HEADER_LEN`]). Its bytes are read where they lie: `copy` returns the frame's
    /// range it is given (the `app_metadata`, if any), and `deliver` pushes the frame's
    /// range it is given (the IPC bytes) into the stream's decoder, copying each byte once.
    pub fn on_frame<C, D>(&mut self, head: &[u8], frame_len: usize, copy: C, deliver: D)
    where
        C: FnOnce(Range<usize>) -> Vec<u8>,
        D: FnOnce(&mut StreamDecoder, Range<usize>) -> crate::ipc::Result<()>,
    {
        if let Err(e) = self.frame(head, frame_len, copy, deliver) {
            self.protocol_error(e);
        }
    }

    fn frame<C, D>(
        &mut self,
        head: &[u8],
        frame_len: usize,
        copy: C,
        deliver: D,
    ) -> Result<(), ProtocolError>
    where
        C: FnOnce(Range<usize>) -> Vec<u8>,
        D: FnOnce(&mut StreamDecoder, Range<usize>) -> crate::ipc::Result<()>,
    {
        let Some(head) = head
            .first_chunk::<HEADER_LEN>()
            .filter(|_| frame_len >= HEADER_LEN)
        else {
            return Err(ProtocolError::ShortFrame {
                expected: HEADER_LEN,
                found: frame_len,
            });
        };
        let header = Header::decode(head, frame_len - HEADER_LEN, self.limits.max_segment)?;
        let Some(id) = self.route(header.stream) else {
            return Ok(());
        };
        match self.streams.get_mut(id) {
            Some(Stream::Get(get)) => {
                let ipc_start = HEADER_LEN + header.app_metadata_len;
                let app_metadata = || copy(HEADER_LEN..ipc_start);
                get.on_frame(
                    &header,
                    app_metadata,
                    ipc_start..frame_len,
                    deliver,
                    &mut self.actions,
                )?;
                self.tidy(id);
                Ok(())
            }
            Some(Stream::Call(_) | Stream::Put(_)) => Err(ProtocolError::NotGet(id)),
            // A stream id this client never opened: the gateway misnumbered its frames.
            _ if header.stream >= self.next_id => Err(ProtocolError::UnknownStream(header.stream)),
            // Frames of a stream that has ended here (cancelled, or a connection-wide
            // failure) raced its end.
            _ => Ok(()),
        }
    }

    /// The socket closed.
    pub fn on_close(&mut self, code: u16, reason: &str) {
        let reason = match reason {
            "" => String::new(),
            reason => format!(", {reason}"),
        };
        self.fail_all(Failure::new(
            UNAVAILABLE,
            format!("the connection closed (code {code}{reason})"),
        ));
    }

    fn on_message(&mut self, message: ServerMessage) {
        use ServerMessage as M;
        match message {
            M::Hello {
                version,
                max_segment_bytes,
                credit_window,
                max_streams,
                max_message_bytes,
            } => self.on_hello(
                version,
                Limits {
                    max_segment: usize::try_from(max_segment_bytes).unwrap_or(usize::MAX),
                    credit_window,
                    max_streams,
                    max_message: max_message_bytes,
                },
            ),
            M::Error { message } => self.fail_all(Failure::new(
                INTERNAL,
                format!("the gateway refused this client: {message}"),
            )),
            M::Status {
                stream,
                code,
                message,
                details,
                ..
            } => {
                let Some(id) = self.route(stream) else {
                    return;
                };
                // A failed DoGet may be read at its endpoint's next location instead.
                let ended = match code {
                    0 => Some(Ok(())),
                    code => {
                        let failure = Failure {
                            code,
                            message,
                            details,
                        };
                        self.read_elsewhere(id, failure).err().map(Err)
                    }
                };
                if let Some(result) = ended {
                    self.end(id, result);
                }
            }
            M::Credit { stream, bytes } => {
                if let Some(Stream::Put(put)) = self.streams.get_mut(stream) {
                    if put.is_open() {
                        if let Err(e) = put.grant(bytes, &mut self.actions) {
                            self.protocol_error(e);
                        }
                    }
                }
            }
            M::PutResult {
                stream,
                app_metadata,
            } => {
                if let Some(Stream::Put(put)) = self.streams.get_mut(stream) {
                    put.result(app_metadata);
                }
            }
            M::FlightInfo { stream, .. }
            | M::PollInfo { stream, .. }
            | M::Schema { stream, .. }
            | M::Handshake { stream, .. }
            | M::Result { stream, .. }
            | M::ActionType { stream, .. } => {
                if let Some(Stream::Call(messages)) = self.streams.get_mut(stream) {
                    messages.push(message);
                }
            }
        }
    }

    fn on_hello(&mut self, version: u32, limits: Limits) {
        // Limits change only before the first request; a frame carries a byte at least.
        let first = self.awaiting_hello && self.login.is_none();
        let refused = match (first, version, limits.max_segment) {
            (false, ..) => Some("a second hello".to_string()),
            (true, VERSION, 0) => Some("hello: maxSegmentBytes must be at least 1, found 0".into()),
            (true, VERSION, _) => None,
            (true, other, _) => Some(format!(
                "hello: this client speaks protocol version {VERSION}, the gateway {other}"
            )),
        };
        if let Some(refused) = refused {
            return self.protocol_error(ProtocolError::BadControl(refused));
        }
        // The reader's own limit stays the ceiling.
        let max_message = limits
            .max_message
            .min(ReadLimits::default().max_message_bytes);
        self.limits = Limits {
            max_message,
            ..limits
        };
        match std::mem::take(&mut self.credentials) {
            // Requests wait for the token: nothing else is sent until the exchange ends.
            Credentials::Basic(BasicAuth { username, password }) => {
                let request = ClientMessage::BasicAuth {
                    stream: 0,
                    username,
                    password: Password(password),
                };
                if let Ok(id) = self.call(request) {
                    self.login = Some(id);
                }
            }
            // Sent before connect resolves, so before any request.
            Credentials::Token(token) => {
                self.actions
                    .push(Action::send(ClientMessage::Auth { token }));
                self.opened();
            }
            Credentials::None => self.opened(),
        }
    }

    fn opened(&mut self) {
        self.awaiting_hello = false;
        self.actions.push(Action::Hello(Ok(())));
    }

    /// The gateway broke the protocol: fail everything and close with 1002 as it would.
    fn protocol_error(&mut self, e: ProtocolError) {
        self.fail_all(e.into());
        self.actions.push(Action::Close {
            code: 1002,
            reason: "protocol error",
        });
    }

    /// Ends the connection: every open stream fails with `failure`.
    fn fail_all(&mut self, failure: Failure) {
        self.failure.get_or_insert_with(|| failure.clone());
        if std::mem::take(&mut self.awaiting_hello) {
            self.actions.push(Action::Hello(Err(failure.clone())));
        }
        for id in self.streams.ids() {
            self.end(id, Err(failure.clone()));
        }
    }

    /// The stream a request id names: the DoGet that moved to it, or the stream of that
    /// id; `None` for a DoGet's request that it moved on from, whose late frames and
    /// statuses are not the current request's.
    fn route(&self, wire: u32) -> Option<u32> {
        match self.streams.get(wire) {
            Some(Stream::Moved(id)) => Some(*id),
            Some(Stream::Get(get)) if get.wire() != wire => None,
            _ => Some(wire),
        }
    }

    /// DoGet `id` failed at its location with `failure`: asks its next location, if
    /// [`Locations::next`](locations::Locations::next) says to, or returns the failure
    /// it ends with. Any other stream ends with `failure`.
    fn read_elsewhere(&mut self, id: u32, failure: Failure) -> Result<(), Failure> {
        let Some(Stream::Get(get)) = self.streams.get_mut(id) else {
            return Err(failure);
        };
        get.pass_over(failure)?;
        let wire = self.take_id()?;
        let Some(Stream::Get(get)) = self.streams.get_mut(id) else {
            return Ok(());
        };
        let old = get.wire();
        let request = get.reopen(wire);
        if old != id {
            self.streams.remove(old);
        }
        self.start(wire, request, Stream::Moved(id));
        Ok(())
    }

    /// Stream `id` ended with `result` (its status, or the connection's failure).
    fn end(&mut self, id: u32, result: Result<(), Failure>) {
        if self.login == Some(id) {
            // Without the token the connection is of no use: a failed exchange ends it,
            // and never leaves it open without authentication.
            self.login = None;
            self.streams.remove(id);
            return match result {
                Ok(()) => self.opened(),
                Err(failure) => self.fail_all(failure),
            };
        }
        let out = &mut self.actions;
        match self.streams.get_mut(id) {
            Some(Stream::Call(messages)) => {
                let messages = std::mem::take(messages);
                self.streams.remove(id);
                out.push(Action::Answer {
                    stream: id,
                    result: result.map(|()| messages),
                });
            }
            Some(Stream::Get(get)) if get.is_open() => get.finish(result, out),
            Some(Stream::Put(put)) => put.finish(result, out),
            _ => {}
        }
        self.tidy(id);
    }

    /// Forgets a stream that has ended and whose handle is gone.
    fn tidy(&mut self, id: u32) {
        let gone = match self.streams.get(id) {
            Some(Stream::Get(get)) => get.released && get.has_ended(),
            Some(Stream::Put(put)) => put.released && put.has_ended(),
            _ => false,
        };
        if gone {
            self.remove(id);
        }
    }

    /// Forgets stream `id`, and the request id it moved to.
    fn remove(&mut self, id: u32) -> Option<Stream> {
        let stream = self.streams.remove(id)?;
        if let Stream::Get(get) = &stream {
            if get.wire() != id {
                self.streams.remove(get.wire());
            }
        }
        Some(stream)
    }

    // User calls.

    /// The client closed the connection (or was freed, or gave up waiting for `hello`):
    /// every open call fails with `failure`.
    pub fn close(&mut self, failure: Failure) {
        self.fail_all(failure);
    }

    /// The runtime gave up waiting for `hello` (connect's signal aborted): connect and
    /// everything open fail with CANCELLED.
    pub fn abort(&mut self) {
        self.close(Failure::new(
            CANCELLED,
            "connect was aborted before the gateway's hello",
        ));
    }

    /// Takes the next stream id, for a request; a connection that has failed gives that
    /// failure instead.
    fn take_id(&mut self) -> Result<u32, Failure> {
        if let Some(failure) = &self.failure {
            return Err(failure.clone());
        }
        let id = self.next_id;
        self.next_id += 1;
        Ok(id)
    }

    /// Starts a call answered by control messages (GetFlightInfo, PollFlightInfo,
    /// ListFlights, GetSchema, DoAction, ListActions), numbering `request` with a new stream id; an
    /// [`Action::Answer`] ends it.
    pub fn call(&mut self, mut request: ClientMessage) -> Result<u32, Failure> {
        let id = self.take_id()?;
        request.set_stream(id);
        self.start(id, request, Stream::Call(Vec::new()));
        Ok(id)
    }

    /// Sends `request` and keeps `stream` under `id`.
    fn start(&mut self, id: u32, request: ClientMessage, stream: Stream) {
        self.actions.push(Action::send(request));
        self.streams.insert(id, stream);
    }

    /// The credit window a DoGet runs with: `window`, or the gateway's, and four segments
    /// at least, so that granting in steps never stalls the sender.
    pub fn get_window(&self, window: Option<u64>) -> u64 {
        let max_segment = self.limits.max_segment as u64;
        window.unwrap_or(self.limits.credit_window.max(4 * max_segment))
    }

    /// Starts a DoGet of `ticket` at the first of `locations` (none: the gateway's
    /// upstream), then at the next while one cannot be read ([`locations`]). The stream
    /// is returned even if it could not start: it has then ended with the failure.
    pub fn open_get(
        &mut self,
        ticket: Vec<u8>,
        locations: Vec<String>,
        window: Option<u64>,
    ) -> u32 {
        let window = self.get_window(window);
        // A window past the credit limit is the gateway's to refuse, as any request it
        // cannot serve.
        let opened = self.take_id();
        let id = *opened.as_ref().unwrap_or(&self.next_id);
        let reservation = Reservation::new(Rc::clone(&self.budget));
        let mut get = GetStream::new(id, ticket, locations, window, self.limits, reservation);
        match opened {
            Ok(id) => {
                let request = get.request();
                self.start(id, request, Stream::Get(get));
            }
            Err(failure) => {
                // An id for a stream that never reached the gateway: ids stay unique here.
                self.next_id += 1;
                get.finish(Err(failure), &mut self.actions);
                self.streams.insert(id, Stream::Get(get));
            }
        }
        id
    }

    /// Starts a DoPut to `descriptor`; like [`Client::open_get`], a stream that could not
    /// start has ended with the failure.
    pub fn open_put(&mut self, descriptor: Descriptor) -> u32 {
        let opened = self.take_id();
        let id = *opened.as_ref().unwrap_or(&self.next_id);
        let limits = self.limits;
        let mut put = PutStream::new(id, limits.max_segment, limits.credit_window);
        match opened {
            Ok(id) => {
                let request = ClientMessage::DoPut {
                    stream: id,
                    descriptor,
                };
                self.start(id, request, Stream::Put(put));
            }
            Err(failure) => {
                self.next_id += 1;
                put.finish(Err(failure), &mut self.actions);
                self.streams.insert(id, Stream::Put(put));
            }
        }
        id
    }

    pub fn get(&self, id: u32) -> Option<&GetStream> {
        match self.streams.get(id) {
            Some(Stream::Get(get)) => Some(get),
            _ => None,
        }
    }

    /// DoGet `id`, with the action queue its calls take.
    pub fn get_mut(&mut self, id: u32) -> Result<(&mut GetStream, &mut Actions), ClientError> {
        match self.streams.get_mut(id) {
            Some(Stream::Get(get)) => Ok((get, &mut self.actions)),
            _ => Err(ClientError::Gone(id)),
        }
    }

    /// Takes DoGet `id` out of the client once it has ended, so that its handle keeps what
    /// is left to read (queued batches, the end) and the connection can go without it.
    pub fn take_ended_get(&mut self, id: u32) -> Option<GetStream> {
        match self.streams.get(id) {
            Some(Stream::Get(get)) if get.has_ended() => match self.remove(id) {
                Some(Stream::Get(get)) => Some(get),
                _ => None,
            },
            _ => None,
        }
    }

    /// DoPut `id`, with the action queue its calls take.
    pub fn put_mut(&mut self, id: u32) -> Result<(&mut PutStream, &mut Actions), ClientError> {
        match self.streams.get_mut(id) {
            Some(Stream::Put(put)) => Ok((put, &mut self.actions)),
            _ => Err(ClientError::Gone(id)),
        }
    }

    /// Cancels call, DoGet or DoPut `id`; see [`GetStream::cancel`] and
    /// [`PutStream::cancel`]. A call fails at once, and what the gateway still sends for
    /// it is dropped.
    pub fn cancel(&mut self, id: u32) {
        match self.streams.get_mut(id) {
            Some(Stream::Get(get)) => get.cancel(&mut self.actions),
            Some(Stream::Put(put)) => put.cancel(&mut self.actions),
            Some(Stream::Call(_)) => {
                self.streams.remove(id);
                self.actions
                    .push(Action::send(ClientMessage::Cancel { stream: id }));
                self.actions.push(Action::Answer {
                    stream: id,
                    result: Err(Failure::cancelled()),
                });
            }
            _ => {}
        }
    }

    /// The handle of DoGet or DoPut `id` is gone; see [`GetStream::release`] and
    /// [`PutStream::release`].
    pub fn release(&mut self, id: u32) {
        match self.streams.get_mut(id) {
            Some(Stream::Get(get)) => get.release(&mut self.actions),
            Some(Stream::Put(put)) => put.release(&mut self.actions),
            _ => {}
        }
        self.tidy(id);
    }

    /// The failure every open stream gets when the client is freed.
    pub fn freed() -> Failure {
        Failure::new(CANCELLED, "the client was freed")
    }
}
