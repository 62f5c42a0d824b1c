//! `Conn`: one WebSocket running a [`Client`]. Socket events and user calls go into the
//! client; its actions come out here and become sends, settled promises and progress
//! calls. `Owner` keeps the socket open: the client object, each call and DoGet until
//! it ends, and each DoPut hold one.

use std::cell::RefCell;
use std::ops::Range;
use std::rc::{Rc, Weak};

use js_sys::{Array, ArrayBuffer, Function, Object, Uint8Array};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;
use web_sys::{AbortSignal, WebSocket};

use super::super::batch::RecordBatch;
use super::super::object::{object, set};
use super::super::reader::push_js;
use super::abort::AbortWatch;
use super::call::answer_to_js;
use super::deferred::Deferred;
use super::error::js_message;
use super::socket::{Socket, SocketEvent};
use crate::flight::client::budget::DEFAULT_BUDGET_BYTES;
use crate::flight::client::status::UNAVAILABLE;
use crate::flight::client::{
    Action, Budget, CallKind, Chunk, Client, Collected, Credentials, Failure, GetStream, PutFrame,
};
use crate::flight::frame::HEADER_LEN;

pub(super) type ConnRef = Rc<RefCell<Conn>>;

thread_local! {
    /// What the open DoGets of this module may hold together, over every connection.
    static BUDGET: Rc<Budget> = Budget::new(DEFAULT_BUDGET_BYTES);
}

/// How to open a connection; kept so that `fetchAll` can open more like it.
#[derive(Clone)]
pub(super) struct Params {
    pub url: String,
    pub protocols: Vec<String>,
    pub constructor: Option<Function>,
    pub credentials: Credentials,
}

/// Where a DoGet's handle finds its stream: in its connection's client while it runs,
/// then on its own once it has ended, so that an ended stream does not keep the whole
/// connection alive until its handle is collected.
pub(super) enum Home {
    Conn(ConnRef),
    Ended(Box<GetStream>),
}

/// Where `readAll()` finds what its stream gathered, once its promise resolves.
pub(super) type CollectSlot = Rc<RefCell<Option<Collected>>>;

/// The JavaScript side of an open stream: who waits for it, and what keeps it going.
enum Pending {
    Call {
        kind: CallKind,
        done: Deferred,
        /// Keeps the connection open while the call is pending, even if nothing else
        /// holds the client (`await (await FlightClient.connect(url)).listFlights()`).
        _owner: Rc<Owner>,
        _abort: Option<AbortWatch>,
    },
    Get {
        /// Where the stream goes when it ends, while its handle lives.
        home: Weak<RefCell<Home>>,
        waiter: Option<Deferred>,
        collect: Option<(Deferred, CollectSlot)>,
        on_progress: Option<Function>,
        /// As for a call: `client.doGet(t).readAll()` holds neither client nor stream.
        _owner: Rc<Owner>,
        _abort: Option<AbortWatch>,
    },
    Put {
        /// Settled once everything written so far has been sent.
        drained: Vec<Deferred>,
        finished: Option<Deferred>,
        /// As for a call: `put.finish(); put.free(); client.free()` still uploads to the
        /// end, and `finish()` resolves.
        _owner: Rc<Owner>,
    },
}

pub(super) struct Conn {
    pub client: Client,
    socket: Option<Socket>,
    pub params: Params,
    hello: Option<Deferred>,
    /// By stream id; a few entries, one per stream open.
    pending: Vec<(u32, Pending)>,
}

/// Keeps a connection open; the last one dropped closes it.
pub(super) struct Owner {
    pub conn: ConnRef,
}

impl Drop for Owner {
    fn drop(&mut self) {
        close(&self.conn, Client::freed());
    }
}

impl Conn {
    /// Opens the socket and waits for `hello` and the client's authentication (or for
    /// `signal` to abort).
    pub async fn connect(
        params: Params,
        signal: Option<AbortSignal>,
    ) -> Result<Rc<Owner>, Failure> {
        let (hello_promise, hello) = Deferred::new();
        let client = Client::new(BUDGET.with(Rc::clone), params.credentials.clone());
        let conn = Rc::new(RefCell::new(Conn {
            client,
            socket: None,
            params: params.clone(),
            hello: Some(hello),
            pending: Vec::new(),
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
        // Owned from here on: a socket that could not open leaves nothing to close.
        let owner = Rc::new(Owner {
            conn: Rc::clone(&conn),
        });
        let weak = Rc::downgrade(&conn);
        let watch = signal.and_then(|signal| {
            AbortWatch::new(signal, move || {
                if let Some(conn) = weak.upgrade() {
                    abort_connect(&conn);
                }
            })
        });
        let hello = JsFuture::from(hello_promise).await;
        drop(watch);
        if hello.is_err() {
            return Err(conn.borrow().client.connect_failure());
        }
        Ok(owner)
    }

    fn ws(&self) -> Option<WebSocket> {
        self.socket.as_ref().map(|s| s.ws().clone())
    }

    fn entry(&mut self, id: u32) -> Option<&mut Pending> {
        let entry = self.pending.iter_mut().find(|(i, _)| *i == id);
        entry.map(|(_, pending)| pending)
    }

    /// Forgets stream `id`'s entry, and returns it.
    fn remove(&mut self, id: u32) -> Option<Pending> {
        let at = self.pending.iter().position(|(i, _)| *i == id)?;
        Some(self.pending.swap_remove(at).1)
    }

    pub fn register_call(&mut self, id: u32, kind: CallKind, done: Deferred, owner: Rc<Owner>) {
        let pending = Pending::Call {
            kind,
            done,
            _owner: owner,
            _abort: None,
        };
        self.pending.push((id, pending));
    }

    pub fn register_get(
        &mut self,
        id: u32,
        home: Weak<RefCell<Home>>,
        on_progress: Option<Function>,
        owner: Rc<Owner>,
    ) {
        let pending = Pending::Get {
            home,
            waiter: None,
            collect: None,
            on_progress,
            _owner: owner,
            _abort: None,
        };
        self.pending.push((id, pending));
    }

    pub fn register_put(&mut self, id: u32, owner: Rc<Owner>) {
        let pending = Pending::Put {
            drained: Vec::new(),
            finished: None,
            _owner: owner,
        };
        self.pending.push((id, pending));
    }

    /// A `next()` of DoGet `id` waits.
    pub fn wait(&mut self, id: u32, waiter: Deferred) {
        if let Some(Pending::Get { waiter: slot, .. }) = self.entry(id) {
            *slot = Some(waiter);
        }
    }

    /// A `readAll()` of DoGet `id` waits.
    pub fn wait_collected(&mut self, id: u32, done: Deferred, slot: CollectSlot) {
        if let Some(Pending::Get { collect, .. }) = self.entry(id) {
            *collect = Some((done, slot));
        }
    }

    /// A `write()` of DoPut `id` waits until it is sent.
    pub fn wait_sent(&mut self, id: u32, waiter: Deferred) {
        if let Some(Pending::Put { drained, .. }) = self.entry(id) {
            drained.push(waiter);
        }
    }

    /// A `finish()` of DoPut `id` waits for the server's results.
    pub fn wait_finished(&mut self, id: u32, waiter: Deferred) {
        if let Some(Pending::Put { finished, .. }) = self.entry(id) {
            *finished = Some(waiter);
        }
    }
}

/// Ends the connection: every open stream fails with `failure`, and the socket goes.
pub(super) fn close(conn: &ConnRef, failure: Failure) {
    conn.borrow_mut().client.close(failure);
    run(conn);
    // Dropped outside any socket event (this is a user call), so the listeners go now.
    let socket = conn.borrow_mut().socket.take();
    drop(socket);
}

/// Call or DoGet `id`, while it runs, is cancelled when `signal` aborts. Watched once
/// registered: a signal aborted already cancels at once, and the end must find the
/// stream's entry to let go of it.
pub(super) fn cancel_on_abort(conn: &ConnRef, id: u32, signal: Option<AbortSignal>) {
    let weak = Rc::downgrade(conn);
    let abort = signal.and_then(|signal| {
        AbortWatch::new(signal, move || {
            if let Some(conn) = weak.upgrade() {
                with_client(&conn, |c| c.cancel(id));
            }
        })
    });
    if let Some(Pending::Call { _abort: slot, .. } | Pending::Get { _abort: slot, .. }) =
        conn.borrow_mut().entry(id)
    {
        *slot = abort;
    }
}

/// Runs `f` on the client, then does what it asked for.
pub(super) fn with_client<T>(conn: &ConnRef, f: impl FnOnce(&mut Client) -> T) -> T {
    let result = f(&mut conn.borrow_mut().client);
    run(conn);
    result
}

fn on_event(conn: &ConnRef, event: SocketEvent) {
    match event {
        SocketEvent::Text(text) => conn.borrow_mut().client.on_text(&text),
        SocketEvent::Binary(buffer) => on_frame(conn, &buffer),
        SocketEvent::Close { code, reason } => conn.borrow_mut().client.on_close(code, &reason),
    }
    run(conn);
}

/// A binary frame: the header is read (12 bytes copied), the IPC bytes stay in the
/// received buffer until the stream's decoder copies them into place.
fn on_frame(conn: &ConnRef, buffer: &ArrayBuffer) {
    let len = buffer.byte_length() as usize;
    let mut head = [0u8; HEADER_LEN];
    let head = &mut head[..len.min(HEADER_LEN)];
    Uint8Array::new_with_byte_offset_and_length(buffer, 0, head.len() as u32).copy_to(head);
    // Offsets fit in u32: a WebSocket message is an ArrayBuffer of at most 4 GiB here.
    let view = |range: Range<usize>| {
        Uint8Array::new_with_byte_offset_and_length(buffer, range.start as u32, range.len() as u32)
    };
    conn.borrow_mut().client.on_frame(
        head,
        len,
        |app_metadata| view(app_metadata).to_vec(),
        |decoder, ipc| push_js(decoder, &view(ipc)),
    );
}

fn abort_connect(conn: &ConnRef) {
    with_client(conn, Client::abort);
    if let Some(ws) = conn.borrow().ws() {
        let _ = ws.close();
    }
}

/// Does what the client asked for, in order. No borrow is held while a promise settles
/// or a callback runs, so that JavaScript may call back into the client.
pub(super) fn run(conn: &ConnRef) {
    loop {
        let action = conn.borrow_mut().client.poll_action();
        match action {
            Some(action) => perform(conn, action),
            None => return,
        }
    }
}

fn take(conn: &ConnRef, id: u32) -> Option<Pending> {
    conn.borrow_mut().remove(id)
}

/// DoGet `id` has ended: its handle, if it still lives, takes the stream over.
fn move_home(conn: &ConnRef, id: u32, home: &Weak<RefCell<Home>>) {
    if let Some(home) = home.upgrade() {
        if let Some(get) = conn.borrow_mut().client.take_ended_get(id) {
            *home.borrow_mut() = Home::Ended(Box::new(get));
        }
    }
}

fn perform(conn: &ConnRef, action: Action) {
    let ws = conn.borrow().ws();
    match action {
        Action::Send(json) => {
            if let Some(ws) = ws {
                // Requests go out after `hello`, on an open socket: a failed send means
                // it is closing, and its close event fails the streams.
                let _ = ws.send_with_str(&json);
            }
        }
        Action::Frame(frame) => {
            if let Some(ws) = ws {
                send_frame(&ws, &frame);
            }
        }
        Action::Hello(result) => {
            let hello = conn.borrow_mut().hello.take();
            if let Some(hello) = hello {
                hello.settle(result.map(|()| JsValue::UNDEFINED));
            }
        }
        Action::Close { code, reason } => {
            if let Some(ws) = ws {
                let _ = ws.close_with_code_and_reason(code, reason);
            }
        }
        Action::Answer { stream, result } => {
            if let Some(Pending::Call { kind, done, .. }) = take(conn, stream) {
                done.settle(result.and_then(|m| kind.answer(m)).and_then(answer_to_js));
            }
        }
        Action::Chunk { stream, chunk } => {
            let waiter = match conn.borrow_mut().entry(stream) {
                Some(Pending::Get { waiter, .. }) => waiter.take(),
                _ => None,
            };
            if let Some(waiter) = waiter {
                waiter.resolve(&chunk_to_js(chunk));
            }
        }
        Action::GetEnded { stream, result } => {
            if let Some(Pending::Get { home, waiter, .. }) = take(conn, stream) {
                move_home(conn, stream, &home);
                if let Some(waiter) = waiter {
                    waiter.settle(result.map(|()| JsValue::UNDEFINED));
                }
            }
        }
        Action::Collected { stream, result } => {
            if let Some(Pending::Get { home, collect, .. }) = take(conn, stream) {
                move_home(conn, stream, &home);
                if let Some((done, slot)) = collect {
                    *slot.borrow_mut() = Some(result);
                    done.resolve(&JsValue::UNDEFINED);
                }
            }
        }
        Action::Progress { stream } => {
            let call = {
                let c = conn.borrow();
                let pending = c.pending.iter().find(|(i, _)| *i == stream);
                match (pending.map(|(_, p)| p), c.client.get(stream)) {
                    (
                        Some(Pending::Get {
                            on_progress: Some(f),
                            ..
                        }),
                        Some(get),
                    ) => {
                        let stats = get.stats();
                        let p = Object::new();
                        set(&p, "bytesReceived", &(stats.bytes_received as f64).into());
                        set(&p, "batches", &(stats.read.batches as f64).into());
                        set(&p, "rows", &(stats.rows as f64).into());
                        Some((f.clone(), p))
                    }
                    _ => None,
                }
            };
            if let Some((f, progress)) = call {
                let _ = f.call1(&JsValue::UNDEFINED, &progress);
            }
        }
        Action::PutSent { stream } => {
            let drained = match conn.borrow_mut().entry(stream) {
                Some(Pending::Put { drained, .. }) => std::mem::take(drained),
                _ => Vec::new(),
            };
            for waiter in drained {
                waiter.resolve(&JsValue::UNDEFINED);
            }
        }
        Action::PutEnded { stream, result } => {
            if let Some(Pending::Put {
                drained, finished, ..
            }) = take(conn, stream)
            {
                for waiter in drained {
                    waiter.settle(
                        result
                            .as_ref()
                            .map(|_| JsValue::UNDEFINED)
                            .map_err(Clone::clone),
                    );
                }
                if let Some(finished) = finished {
                    finished.settle(result.map(|results| {
                        let results: Array = results
                            .iter()
                            .map(|r| JsValue::from(Uint8Array::from(r.as_slice())))
                            .collect();
                        results.into()
                    }));
                }
            }
        }
    }
}

/// A `FlightStreamChunk`; `appMetadata` is copied out of wasm memory.
pub(super) fn chunk_to_js(chunk: Chunk) -> JsValue {
    let data = chunk.batch.map_or(JsValue::NULL, |(batch, metadata)| {
        RecordBatch::with_metadata(batch, metadata).into()
    });
    let app_metadata = chunk
        .app_metadata
        .map_or(JsValue::NULL, |m| Uint8Array::from(m.as_slice()).into());
    object(&[("data", data), ("appMetadata", app_metadata)])
}

/// Sends a DoPut frame, built in JS memory: `ws` in Node sends later from the buffer it
/// is given, so a view of wasm memory could change before it goes out.
fn send_frame(ws: &WebSocket, frame: &PutFrame) {
    let parts: [&[u8]; 3] = [frame.header(), frame.app_metadata(), frame.payload()];
    let bytes = Uint8Array::new_with_length(parts.iter().map(|p| p.len() as u32).sum());
    let mut at = 0;
    for part in parts {
        let end = at + part.len() as u32;
        bytes.subarray(at, end).copy_from(part);
        at = end;
    }
    // A failed send means the socket is closing; its close event fails the stream.
    let _ = ws.send_with_array_buffer_view(&bytes);
}
