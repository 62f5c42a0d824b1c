//! DoGet: `GetState`, what the connection knows of one download, and `FlightStream`, the
//! object JavaScript iterates. Each frame's IPC bytes go from the received `ArrayBuffer`
//! into the stream's decoder (one copy, into place); batches wait in a queue until
//! consumed, and consumption is what earns the gateway more credit.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::rc::{Rc, Weak};

use arrow_schema::SchemaRef;
use js_sys::{Function, Object, Promise, Uint8Array};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::{future_to_promise, JsFuture};
use web_sys::{AbortSignal, Event, WebSocket};

use super::super::batch::{table_with_metadata, RecordBatch};
use super::super::error::{usage, WasmResult};
use super::super::object::{object, set};
use super::super::reader::push_js;
use super::super::schema::schema_to_js;
use super::conn::{send, ConnRef};
use super::deferred::Deferred;
use super::error::{Failure, CANCELLED, DATA_LOSS, INTERNAL, RESOURCE_EXHAUSTED};
use super::reserve::{BodyReservation, MAX_PENDING_BODY_BYTES};
use crate::flight::control::ClientMessage;
use crate::flight::frame::{FrameKind, Header};
use crate::flight::ProtocolError;
use crate::ipc::{batch_bytes, BatchMetadata, ReadLimits, StreamDecoder};

/// A decoded batch with its message's custom metadata.
pub(super) type ArrowBatch = (arrow_array::RecordBatch, BatchMetadata);

/// Batches gathered for `readAll()` or `fetchAll()`, and who waits for the end.
struct Collect {
    batches: Vec<ArrowBatch>,
    done: Option<Deferred>,
}

/// Byte credit as this client spends it: the gateway may send `window` bytes more than
/// were granted back, and bytes are granted back once the batches they made are consumed.
struct Credit {
    window: u64,
    /// Grant back in steps of at least this many bytes, so one message per batch at most.
    step: u64,
    /// The largest frame payload: with less credit than this left, the gateway may be
    /// unable to send its next frame.
    max_segment: u64,
    /// Payload bytes received; of those, bytes of batches not yet consumed; bytes granted back.
    received: u64,
    queued: u64,
    returned: u64,
    /// Bytes received since the last batch was decoded: they belong to the next one.
    since_batch: u64,
}

impl Credit {
    /// Counts a frame's payload, which must fit the credit the gateway has: the window
    /// and every grant, less what it sent. More would let a gateway fill wasm memory.
    fn receive(&mut self, payload: u64) -> Result<(), ProtocolError> {
        let credit = (self.window + self.returned).saturating_sub(self.received);
        if payload > credit {
            return Err(ProtocolError::CreditExceeded {
                credit,
                found: payload,
            });
        }
        self.received += payload;
        self.since_batch += payload;
        Ok(())
    }

    /// The grant owed now, if it is worth a message: a step's worth; or, once every batch
    /// received was consumed, whatever is owed if the gateway has less than a frame's
    /// credit left. It may then be waiting for a grant smaller than a step, and nothing
    /// else would come.
    fn owed(&mut self) -> Option<u64> {
        let consumed = self.received - self.queued;
        let owed = consumed.saturating_sub(self.returned);
        let left = (self.window + self.returned).saturating_sub(self.received);
        let stuck = self.queued == 0 && owed > 0 && left < self.max_segment;
        (owed >= self.step || stuck).then(|| {
            self.returned += owed;
            owed
        })
    }
}

/// The signal a stream watches and its listener, removed when the stream ends.
type AbortListener = (AbortSignal, Closure<dyn FnMut(Event)>);

pub(super) struct GetState {
    id: u32,
    ws: Option<WebSocket>,
    /// Keeps the connection open until the stream ends, even when nothing else holds the
    /// client or the stream (`client.doGet(t).readAll()`); dropped at the end.
    conn: Option<ConnRef>,
    decoder: StreamDecoder,
    /// What the decoder has allocated for the message still arriving, and the queue.
    reservation: BodyReservation,
    /// The bytes of the batches in `queue`.
    queued_memory: u64,
    credit: Credit,
    ipc_received: u64,
    rows: u64,
    /// Batches nobody has read yet, each with its payload bytes and its memory.
    queue: VecDeque<(ArrowBatch, u64, u64)>,
    waiter: Option<Deferred>,
    collect: Option<Collect>,
    done: Option<Result<(), Failure>>,
    cancelled: bool,
    on_progress: Option<Function>,
    abort: Option<AbortListener>,
}

/// The credit a stream runs with.
pub(super) struct GetOptions {
    pub window: u64,
    pub max_segment: usize,
}

impl GetState {
    pub fn new(
        id: u32,
        conn: Option<ConnRef>,
        ws: Option<WebSocket>,
        options: &GetOptions,
        on_progress: Option<Function>,
    ) -> Self {
        let window = options.window;
        GetState {
            id,
            conn,
            ws,
            decoder: StreamDecoder::new(ReadLimits::default()),
            reservation: BodyReservation::default(),
            queued_memory: 0,
            credit: Credit {
                window,
                step: (window / 4).max(options.max_segment as u64).min(window),
                max_segment: options.max_segment as u64,
                received: 0,
                queued: 0,
                returned: 0,
                since_batch: 0,
            },
            ipc_received: 0,
            rows: 0,
            queue: VecDeque::new(),
            waiter: None,
            collect: None,
            done: None,
            cancelled: false,
            on_progress,
            abort: None,
        }
    }

    /// A stream that could not be opened: its first `next()` rejects with `failure`.
    pub fn failed(failure: Failure, options: &GetOptions) -> Rc<RefCell<Self>> {
        let mut state = GetState::new(0, None, None, options, None);
        state.done = Some(Err(failure));
        Rc::new(RefCell::new(state))
    }

    /// Cancels the stream when `signal` aborts (at once if it already has).
    pub fn watch(state: &Rc<RefCell<Self>>, signal: Option<AbortSignal>) {
        let Some(signal) = signal else { return };
        if signal.aborted() {
            state.borrow_mut().cancel();
            return;
        }
        let weak: Weak<RefCell<Self>> = Rc::downgrade(state);
        let listener = Closure::<dyn FnMut(Event)>::new(move |_| {
            if let Some(state) = weak.upgrade() {
                state.borrow_mut().cancel();
            }
        });
        let _ = signal.add_event_listener_with_callback("abort", listener.as_ref().unchecked_ref());
        state.borrow_mut().abort = Some((signal, listener));
    }

    fn send(&self, message: &ClientMessage) {
        if let Some(ws) = &self.ws {
            // A failed send means the socket is closing; its close event fails the stream.
            let _ = send(ws, message);
        }
    }

    /// Asks the gateway to stop, and ends the stream here with status CANCELLED at once:
    /// a gateway that never answers (or a dead network) must not keep it waiting.
    pub fn cancel(&mut self) {
        self.stop(Failure::new(CANCELLED, "cancelled by the client"));
    }

    /// Asks the gateway to stop the call, and ends the stream here with `failure`.
    fn stop(&mut self, failure: Failure) {
        if self.done.is_none() && !self.cancelled {
            self.cancelled = true;
            self.send(&ClientMessage::Cancel { stream: self.id });
            self.end(Err(failure));
        }
    }

    /// A frame of this stream; an error is the gateway's breach of the protocol.
    pub fn on_frame(
        state: &Rc<RefCell<Self>>,
        header: &Header,
        ipc: &Uint8Array,
    ) -> Result<(), ProtocolError> {
        let progress = {
            let mut s = state.borrow_mut();
            if s.done.is_some() || s.cancelled {
                return Ok(());
            }
            let payload = (header.app_metadata_len + ipc.length() as usize) as u64;
            s.credit.receive(payload)?;
            if header.kind == FrameKind::Data {
                s.ipc_received += ipc.length() as u64;
                if let Err(failure) = s.push(ipc) {
                    // The gateway forwards bytes as the server wrote them: stop the call.
                    s.stop(failure);
                    return Ok(());
                }
            }
            s.drain();
            if let Err(failure) = s.hold() {
                s.stop(failure);
                return Ok(());
            }
            s.grant();
            s.on_progress.clone().map(|f| (f, s.progress()))
        };
        if let Some((f, progress)) = progress {
            let _ = f.call1(&JsValue::UNDEFINED, &progress);
        }
        Ok(())
    }

    /// Decodes a frame's IPC bytes. What its messages decompress to must fit in what is
    /// left of the budget all DoGets share.
    fn push(&mut self, ipc: &Uint8Array) -> Result<(), Failure> {
        let left = self.reservation.available().saturating_sub(self.holding());
        self.decoder.set_push_budget(Some(left));
        push_js(&mut self.decoder, ipc)?;
        Ok(())
    }

    /// What the decoder has allocated for the message still arriving, the dictionaries it
    /// keeps, and the batches nobody has read yet.
    fn holding(&self) -> u64 {
        self.decoder.reserved_bytes() as u64 + self.decoder.dictionary_bytes() + self.queued_memory
    }

    /// Holds what this stream holds (see `holding`) against the budget all DoGets share.
    fn hold(&mut self) -> Result<(), Failure> {
        let held = self.holding();
        self.reservation.hold(held).map_err(|total| {
            Failure::new(
                RESOURCE_EXHAUSTED,
                format!(
                    "this DoGet holds {held} bytes (messages still arriving, dictionaries, \
                     batches not yet read), which brings this module's open DoGets to {total} \
                     bytes, over their limit of {MAX_PENDING_BODY_BYTES} bytes"
                ),
            )
        })
    }

    /// Moves decoded batches to whoever is waiting, or to the queue.
    fn drain(&mut self) {
        while let Some((batch, metadata)) = self.decoder.next_batch_with_metadata() {
            let bytes = std::mem::take(&mut self.credit.since_batch);
            self.rows += batch.num_rows() as u64;
            if let Some(collect) = &mut self.collect {
                collect.batches.push((batch, metadata));
            } else if let Some(waiter) = self.waiter.take() {
                waiter.resolve(&RecordBatch::with_metadata(batch, metadata).into());
            } else {
                self.credit.queued += bytes;
                let memory = batch_bytes(&batch);
                self.queued_memory += memory;
                self.queue.push_back(((batch, metadata), bytes, memory));
            }
        }
    }

    fn grant(&mut self) {
        if self.done.is_some() || self.cancelled {
            return;
        }
        if let Some(bytes) = self.credit.owed() {
            self.send(&ClientMessage::Credit {
                stream: self.id,
                bytes,
            });
        }
    }

    /// The status arrived (or the connection failed).
    pub fn finish(state: &Rc<RefCell<Self>>, result: Result<(), Failure>) {
        let mut s = state.borrow_mut();
        let result = match s.cancelled {
            // The stream ended before the cancel reached the gateway, but the frames after
            // the cancel were dropped: the data is not whole.
            true => result.and(Err(Failure::new(CANCELLED, "cancelled by the client"))),
            false => result.and_then(|()| s.complete()),
        };
        s.end(result);
    }

    /// An OK status ends a whole stream only: one that ends with its end-of-stream marker.
    fn complete(&self) -> Result<(), Failure> {
        self.decoder.finish()?;
        if !self.decoder.is_ended() {
            return Err(Failure::new(
                DATA_LOSS,
                "the gateway ended the stream with OK before its end-of-stream marker: \
                 the data is incomplete",
            ));
        }
        Ok(())
    }

    fn end(&mut self, result: Result<(), Failure>) {
        if self.done.is_some() {
            return;
        }
        self.conn = None;
        if self.decoder.is_inside_message() {
            self.decoder.abandon("the stream ended inside a message");
        }
        let _ = self.reservation.hold(0);
        if let Some((signal, listener)) = self.abort.take() {
            let _ = signal
                .remove_event_listener_with_callback("abort", listener.as_ref().unchecked_ref());
        }
        // A waiter exists only while the queue is empty: it gets the end now.
        if let Some(waiter) = self.waiter.take() {
            waiter.settle(result.clone().map(|()| JsValue::UNDEFINED));
        }
        if let Some(done) = self.collect.as_mut().and_then(|c| c.done.take()) {
            done.settle(result.clone().map(|()| JsValue::UNDEFINED));
        }
        self.done = Some(result);
    }

    fn next(&mut self) -> Result<Promise, JsError> {
        if let Some(((batch, metadata), bytes, memory)) = self.queue.pop_front() {
            self.credit.queued -= bytes;
            self.queued_memory -= memory;
            // Less than before: what other streams hold may be over, but not this one.
            let _ = self.hold();
            self.grant();
            let batch = RecordBatch::with_metadata(batch, metadata);
            return Ok(Promise::resolve(&JsValue::from(batch)));
        }
        match &self.done {
            Some(Ok(())) => Ok(Promise::resolve(&JsValue::UNDEFINED)),
            Some(Err(failure)) => Ok(Promise::reject(&failure.to_js())),
            None if self.waiter.is_some() || self.collect.is_some() => Err(usage(
                "next() was called while a previous next() or readAll() is pending",
            )),
            None => {
                let (promise, waiter) = Deferred::new();
                self.waiter = Some(waiter);
                Ok(promise)
            }
        }
    }

    /// Gathers every remaining batch; the promise settles at the end of the stream.
    pub fn collect(&mut self) -> Result<Promise, JsError> {
        if self.collect.is_some() || self.waiter.is_some() {
            return Err(usage(
                "readAll() was called while a previous next() or readAll() is pending",
            ));
        }
        let batches = self.queue.drain(..).map(|(b, _, _)| b).collect();
        self.credit.queued = 0;
        self.queued_memory = 0;
        let _ = self.hold();
        self.grant();
        let (promise, done) = match &self.done {
            Some(Ok(())) => (Promise::resolve(&JsValue::UNDEFINED), None),
            Some(Err(failure)) => (Promise::reject(&failure.to_js()), None),
            None => {
                let (promise, done) = Deferred::new();
                (promise, Some(done))
            }
        };
        self.collect = Some(Collect { batches, done });
        Ok(promise)
    }

    /// What `collect` gathered, once its promise resolved.
    pub fn take_collected(&mut self) -> Result<(SchemaRef, Vec<ArrowBatch>), Failure> {
        let batches = self
            .collect
            .as_mut()
            .map(|c| std::mem::take(&mut c.batches))
            .unwrap_or_default();
        let schema = self
            .decoder
            .schema()
            .cloned()
            .ok_or_else(|| Failure::new(INTERNAL, "the stream ended before its schema"))?;
        Ok((schema, batches))
    }

    fn progress(&self) -> JsValue {
        let p = Object::new();
        set(&p, "bytesReceived", &(self.credit.received as f64).into());
        set(&p, "batches", &(self.decoder.stats().batches as f64).into());
        set(&p, "rows", &(self.rows as f64).into());
        p.into()
    }
}

/// An open DoGet: an async iterable of `RecordBatch`, read as the frames arrive.
///
/// Batches are decoded as their bytes arrive, and wait in the stream until you take them;
/// taking them grants the gateway more credit, so a slow reader slows the server instead
/// of filling memory. Each batch you take is yours to `free()`. Freeing the stream before
/// its end cancels it.
///
/// ```js
/// const stream = client.doGet(ticket, { signal: AbortSignal.timeout(10_000) });
/// for await (const batch of stream) { console.log(batch.numRows); batch.free(); }
/// console.log(stream.stats.bytesCopied === stream.stats.ipcBytesReceived); // true, uncompressed
/// ```
#[wasm_bindgen]
pub struct FlightStream {
    state: Rc<RefCell<GetState>>,
}

#[wasm_bindgen(typescript_custom_section)]
const FLIGHT_STREAM_TS: &str = r#"
/** What a DoGet stream has received and decoded. */
export interface FlightStreamStats {
  /** Frame payload bytes (`app_metadata` plus IPC bytes), the bytes credit counts. */
  bytesReceived: number;
  /** IPC bytes received; for an uncompressed stream `bytesCopied` equals this. */
  ipcBytesReceived: number;
  bytesPushed: number;
  /** Bytes the reader copied: each IPC byte once, plus the copies `ReaderStats.bytesCopied` lists. */
  bytesCopied: number;
  messages: number;
  batches: number;
  rows: number;
}
/** Passed to `onProgress` after each frame. */
export interface FlightProgress {
  bytesReceived: number;
  batches: number;
  rows: number;
}
"#;

impl FlightStream {
    pub(super) fn new(state: Rc<RefCell<GetState>>) -> Self {
        FlightStream { state }
    }
}

#[wasm_bindgen]
impl FlightStream {
    /// The next batch, or `undefined` at the end of the stream. Rejects with a
    /// `FlightError` if the stream failed, after the batches that came before the failure.
    #[wasm_bindgen(unchecked_return_type = "Promise<RecordBatch | undefined>")]
    pub fn next(&self) -> WasmResult<Promise> {
        self.state.borrow_mut().next()
    }

    /// Every remaining batch, as one `Table` (yours to `free()`), once the stream ends.
    ///
    /// ```js
    /// using table = await client.doGet('rows=1000').readAll();
    /// ```
    #[wasm_bindgen(js_name = readAll, unchecked_return_type = "Promise<Table>")]
    pub fn read_all(&self) -> WasmResult<Promise> {
        let promise = self.state.borrow_mut().collect()?;
        let state = Rc::clone(&self.state);
        Ok(future_to_promise(async move {
            JsFuture::from(promise).await?;
            let (schema, batches) = state.borrow_mut().take_collected().map_err(|f| f.to_js())?;
            Ok(table_with_metadata(&schema, batches).into())
        }))
    }

    /// Stops the stream: the gateway cancels the upstream call, and a pending or later
    /// `next()` rejects with a `FlightError` whose code is 1 (CANCELLED).
    pub fn cancel(&self) {
        self.state.borrow_mut().cancel();
    }

    /// The schema once the first message arrived, otherwise `undefined`.
    #[wasm_bindgen(getter, unchecked_return_type = "Schema | undefined")]
    pub fn schema(&self) -> JsValue {
        self.state
            .borrow()
            .decoder
            .schema()
            .map_or(JsValue::UNDEFINED, |s| schema_to_js(s))
    }

    /// Bytes received, pushed and copied, messages, batches and rows (a new object each time).
    #[wasm_bindgen(getter, unchecked_return_type = "FlightStreamStats")]
    pub fn stats(&self) -> JsValue {
        let s = self.state.borrow();
        let stats = s.decoder.stats();
        object(&[
            ("bytesReceived", (s.credit.received as f64).into()),
            ("ipcBytesReceived", (s.ipc_received as f64).into()),
            ("bytesPushed", (stats.bytes_pushed as f64).into()),
            ("bytesCopied", (stats.bytes_copied as f64).into()),
            ("messages", (stats.messages as f64).into()),
            ("batches", (stats.batches as f64).into()),
            ("rows", (s.rows as f64).into()),
        ])
    }

    /// The credit window this stream runs with, in bytes.
    #[wasm_bindgen(getter, js_name = creditWindow)]
    pub fn credit_window(&self) -> f64 {
        self.state.borrow().credit.window as f64
    }
}

impl Drop for FlightStream {
    fn drop(&mut self) {
        // Freed (or collected) before its end, with no `next()` or `readAll()` waiting:
        // nobody will read the rest. `client.doGet(t).readAll()` drops the stream object
        // while its promise is still pending, so a waiter keeps the stream going.
        if let Ok(mut state) = self.state.try_borrow_mut() {
            if state.waiter.is_none() && state.collect.is_none() {
                state.cancel();
            }
        }
    }
}
